"""The OpenAPI 3.1 document of the REST API (`GET /api/openapi.json`).

The request schemas are the MCP tools' input schemas (mcp/tools.py): one
contract for both front ends. Results are described in docs/mcp.md (the tools'
structured content) and docs/http.md.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from codesift import __version__
from codesift.mcp import tools

__all__ = ["openapi_document"]

_ERROR = {
    "type": "object",
    "properties": {
        "error": {
            "type": "object",
            "properties": {"kind": {"type": "string"}, "message": {"type": "string"}},
            "required": ["kind", "message"],
        }
    },
}

_ERRORS = {
    "400": "bad_request: a malformed body or a bad argument",
    "401": "unauthorized: no token, or an unknown or revoked one",
    "403": "forbidden: a cross-origin request, or a Host that is not this server",
    "413": "the body is too large",
    "429": "rate_limited: too many requests for this token (Retry-After)",
    "503": "index_busy, not_indexed, cancelled, or unavailable (tokens cannot be checked)",
    "504": "timeout: the request took too long",
}


def _responses(summary: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "200": {
            "description": summary,
            "content": {"application/json": {"schema": {"type": "object"}}},
        }
    }
    for code, text in _ERRORS.items():
        out[code] = {
            "description": text,
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
        }
    return out


def _post(tool: Any, result: str) -> dict[str, Any]:
    return {
        "post": {
            "operationId": tool.name,
            "summary": tool.title,
            "description": tool.description,
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": tool.input_schema}},
            },
            "responses": _responses(result),
        }
    }


def _get(tool: Any, result: str) -> dict[str, Any]:
    properties = tool.input_schema.get("properties", {})
    required = set(tool.input_schema.get("required", ()))
    parameters = [
        {
            "name": name,
            "in": "query",
            "required": name in required,
            "schema": schema,
            **({"explode": True} if schema.get("type") == "array" else {}),
        }
        for name, schema in properties.items()
    ]
    return {
        "get": {
            "operationId": tool.name,
            "summary": tool.title,
            "description": tool.description,
            "parameters": parameters,
            "responses": _responses(result),
        }
    }


def _file() -> dict[str, Any]:
    def param(name: str, schema: dict[str, Any], text: str, required: bool = False) -> Any:
        return {
            "name": name,
            "in": "query",
            "required": required,
            "schema": schema,
            "description": text,
        }

    return {
        "get": {
            "operationId": "file",
            "summary": "A file's lines around a line",
            "description": "Lines of a file of a served folder (relative path), or of a"
            " shared repository as its index keeps it (lines no stored chunk holds are"
            " null, listed in `missing`), at most `context` lines before and after"
            " `line`. Anything else (outside the folder, hidden, a symlink leading out,"
            " a folder not served, a repository the caller may not read) is 404.",
            "parameters": [
                param("path", {"type": "string"}, "The file, relative to the folder.", True),
                param("root", {"type": "string"}, "A served folder's name (default: the first)."),
                param("repo", {"type": "string"}, "A shared repository's key."),
                param("line", {"type": "integer", "minimum": 1, "default": 1}, "The line."),
                param(
                    "context",
                    {"type": "integer", "minimum": 0, "maximum": 200, "default": 20},
                    "Lines before and after.",
                ),
            ],
            "responses": {
                **_responses("{path, start_line, end_line, total_lines, lines}"),
                "404": {
                    "description": "not_found",
                    "content": {
                        "application/json": {"schema": {"$ref": "#/components/schemas/Error"}}
                    },
                },
            },
        }
    }


@lru_cache(maxsize=1)
def openapi_document() -> dict[str, Any]:
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "codesift",
            "version": __version__,
            "description": "Local code search over HTTP: the MCP tools' arguments and"
            " structured results (docs/http.md).",
        },
        "components": {
            "schemas": {"Error": _ERROR},
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "cookie": {"type": "apiKey", "in": "cookie", "name": "codesift_token"},
            },
        },
        "security": [{"bearer": []}, {"cookie": []}],
        "paths": {
            "/api/search": _post(tools.SEARCH, "the search tool's structured content"),
            "/api/route": _post(tools.ROUTE, "the route tool's structured content"),
            "/api/symbols": _get(tools.SYMBOLS, "the symbols tool's structured content"),
            "/api/graph": _post(tools.GRAPH, "the graph tool's structured content"),
            "/api/status": _get(tools.STATUS, "the status tool's structured content"),
            "/api/file": _file(),
        },
    }
