"""The codesift MCP server for agents: `codesift mcp [--root DIR]`.

Modules, one per area:
  server.py     the SDK's low-level server on stdio, tool dispatch, start and exit
  tools.py      the tools: names, descriptions, input schemas
  handlers.py   one handler per tool: arguments -> engine -> rendered result
  arguments.py  reading a call's arguments (types; the engine checks values)
  render.py     engine results as tool results (text citing path:line, and JSON)
  errors.py     codesift errors as tool errors (the one mapping)
  live.py       the workspace's live index (the engine's, codesift/engine/live.py)

docs/mcp.md lists the tools, their arguments, results and errors.
"""

from __future__ import annotations

from codesift.mcp.server import build_server, serve

__all__ = ["build_server", "serve"]
