"""What every network server of codesift shares: where it may listen
(listen.py: loopback unless tokens exist) and the guard in front of its HTTP
routes (guard.py: tokens, hosts, origins, body, rate and time limits).

`codesift web`, `codesift mcp --http` and `codesift serve --tcp` use it; it
sits below the front ends and imports none of them.
"""

from __future__ import annotations

__all__: list[str] = []
