"""`codesift web`: the REST API, the /search console and MCP over HTTP (docs/http.md).

app.py builds and serves the app; api.py is the REST API; auth.py the guard
(tokens, hosts, origins, limits); listen.py the loopback rule shared with
`codesift mcp --http` and `codesift serve --tcp`; static/ the console's files.
Like mcp/, a front end: it parses, asks the engine, renders; no SQL, no ranking.
"""

from __future__ import annotations

__all__: list[str] = []
