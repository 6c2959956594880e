"""`codesift web`: the REST API, the /search console and MCP over HTTP (docs/http.md).

app.py builds and serves the app; api.py is the REST API; openapi.py its
document; static/ the console's files. The guard in front of it and the
loopback rule are codesift/serving's (shared with `codesift mcp --http` and
`codesift serve --tcp`). It builds on the MCP server (mcp/): the same handlers
answer the REST API and /mcp, so the two cannot drift. Like mcp/, a front end:
it parses, asks the engine, renders; no SQL, no ranking.
"""

from __future__ import annotations

__all__: list[str] = []
