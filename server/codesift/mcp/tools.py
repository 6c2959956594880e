"""The tools the MCP server offers: names, descriptions and input schemas.

The schemas say what the handlers (codesift/mcp/handlers.py) accept; the
arguments are checked once more there (codesift/mcp/arguments.py), so that a
client that does not validate gets a tool error naming the bad argument.
"""

from __future__ import annotations

from typing import Any

from mcp_types import Tool, ToolAnnotations

from codesift.engine import EDGE_KINDS
from codesift.engine.conductor import TESTS_CHOICES
from codesift.engine.live_collections import ROUTE_MIN_FOLDERS
from codesift.engine.results import MAX_QUERY_CHARS
from codesift.engine.route import MAX_ROUTE_LIMIT
from codesift.engine.symbols import MAX_SYMBOLS
from codesift.front_defaults import (
    GRAPH_MAX_NODES,
    MAX_NODES_LIMIT,
    NEIGHBOURS_MAX_NODES,
    SYMBOLS_LIMIT,
    search_setting,
)
from codesift.parsing.model import CHUNK_LAYERS

__all__ = ["TOOLS", "TOOL_NAMES"]

_TIME = (
    "an ISO 8601 date or time ('2024-05-01', '2024-05-01T12:00:00Z'), a relative time"
    " ('2w', '3 days ago'), a git revision (tag, branch or commit) or Unix seconds"
)

TIME_OPTIONS: dict[str, Any] = {
    "as_of": {
        "type": ["string", "number"],
        "description": f"Only content that existed at this time (created by then): {_TIME}.",
    },
    "since": {
        "type": ["string", "number"],
        "description": f"Only content last changed at or after this time: {_TIME}.",
    },
    "until": {
        "type": ["string", "number"],
        "description": f"Only content last changed at or before this time: {_TIME}.",
    },
}

_NAME = {
    "type": "string",
    "minLength": 1,
    "maxLength": 500,
    "description": "A definition's name ('fuse_rankings') or qualified name"
    " ('retrieval.fusion.fuse_rankings', 'Ledger.record').",
}

_MAX_NODES = {
    "type": "integer",
    "minimum": 1,
    "maximum": MAX_NODES_LIMIT,
    "default": NEIGHBOURS_MAX_NODES,
    "description": "Stop the walk at this many definitions (the result then says truncated).",
}
_TOP_K, _TOP_K_MIN, _TOP_K_MAX = search_setting("top_k")
_SNIPPET, _SNIPPET_MIN, _SNIPPET_MAX = search_setting("snippet_chars")


def _schema(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(required),
        "additionalProperties": False,
    }


_REPO = {
    "type": "array",
    "items": {"type": "string", "minLength": 1, "maxLength": 500},
    "description": "Only these sources: a served folder's name (several folders are"
    " served by `codesift web --root A --root B`), 'local' for every served folder, or a"
    " shared repository's key. A key the caller may not read finds nothing, as a"
    " missing one. Default: every source.",
}

_READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)

_SHARED = {
    "type": "boolean",
    "default": True,
    "description": "With a shared team index in the workspace's settings (index.backend ="
    " 'postgres'): include its other repositories (their results cite <repository"
    " key>/<path> and have no local file). False: this workspace only.",
}

SEARCH = Tool(
    name="search",
    title="Search the code",
    description=(
        "Hybrid search over the workspace's index: identifiers, signatures and prose"
        " questions ('where are failed charges retried?'). Fuses lexical, symbol-name and"
        " (when vectors exist) semantic rankings. Each result cites path:start-end and"
        " carries a snippet (snippet_start_line: its first line; truncated: the snippet is"
        " cut); the page reports its estimated tokens and whether max_tokens cut it"
        " (truncated_by_budget). Changed files are indexed before the search runs. When the"
        " workspace lists document collections, up to search.resource_top_k of their best"
        " resources (requirements, schema tables, endpoints, notes) are listed apart, under"
        " `resources`, even when no code mentions them; a code result a resource mentions"
        " lists it under `related`. With a shared team index (index.backend = 'postgres')"
        " its other repositories are searched too (source 'shared', repo: their key);"
        " `shared` says whether it answered."
    ),
    input_schema=_schema(
        {
            "query": {
                "type": "string",
                "minLength": 1,
                "maxLength": MAX_QUERY_CHARS,
                "description": (
                    "What to look for: a name (ParseConfig), a declaration as written"
                    " (public function send(string $content): void), a pasted line of code,"
                    " an error or log message as printed, to find where it is raised"
                    " (connection reset by peer, cannot open a.cfg: 42 bytes left), a"
                    ' stack frame or a compiler\'s location (File "/srv/app/x.py", line 42,'
                    " in f; src/x.c:42:5) to find that line, a file name or path"
                    " (smtplib.py), or a question in words."
                ),
            },
            "top_k": {
                "type": "integer",
                "minimum": _TOP_K_MIN,
                "maximum": _TOP_K_MAX,
                "description": "How many results (default: search.top_k of the workspace,"
                f" {_TOP_K} unless its .codesift.toml says otherwise).",
            },
            "layers": {
                "type": "array",
                "items": {"type": "string", "enum": list(CHUNK_LAYERS)},
                "uniqueItems": True,
                "description": "Search these layers: code (bodies), ast (signatures only),"
                " summary (generated descriptions), doc (markdown sections)."
                " Default: code, summary and doc.",
            },
            "lang": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Only these languages ('python', 'ts', 'go', 'markdown'...).",
            },
            "path": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Only paths matching these globs, relative to the workspace"
                " root ('src/**', '*.py').",
            },
            "snippet_chars": {
                "type": "integer",
                "minimum": _SNIPPET_MIN,
                "maximum": _SNIPPET_MAX,
                "description": "Snippet size in characters (default: search.snippet_chars of"
                f" the workspace, {_SNIPPET} unless its .codesift.toml says otherwise).",
            },
            "max_tokens": {
                "type": "integer",
                "minimum": 50,
                "description": "Fit the whole page in about this many tokens (results and"
                " snippets are dropped or cut to fit).",
            },
            "include_graph": {
                "type": "boolean",
                "default": False,
                "description": "Add each code result's parent, callees and callers.",
            },
            "tests": {
                "type": "string",
                "enum": list(TESTS_CHOICES),
                "default": "include",
                "description": "'exclude' leaves out results in test files, as the ranking"
                " recognises them by each language's conventions (tests/, test_*.py,"
                " *_test.go, *.spec.ts, FooTest.java...); 'auto' leaves them out unless"
                " the query asks for test code (quoted text, a pasted line of code, a"
                " test's name, a test file's path); every result says is_test.",
            },
            "route": {
                "type": "boolean",
                "description": "With a shared team index, which sources are searched: true"
                " narrows to those the router chooses from two sources on; false searches"
                " every one, merged by score alone. Default: narrow from"
                f" {ROUTE_MIN_FOLDERS} sources on, merged by the router's weights from two.",
            },
            "shared": _SHARED,
            "repo": _REPO,
            **TIME_OPTIONS,
        },
        ("query",),
    ),
    annotations=_READ_ONLY,
)

ROUTE = Tool(
    name="route",
    title="Which sources a question is about",
    description=(
        "Before searching with a question that names no repository: which of the served"
        " workspace folders (pool `repositories`) and which of the document collections they"
        " list (pool `collections`: requirements, designs, schemas, runbooks) the question is"
        " about. Each pool lists its best sources, best first, each with a confidence in"
        " [0, 1] (the share of the query's IDF weight its fields match, boosted by matching"
        " labels) and a one-line rationale naming which query terms matched which fields."
        " Repositories nothing matched are left out; collections are always listed, a"
        " zero-confidence one marked weak. Reads the indexes only."
    ),
    input_schema=_schema(
        {
            "query": {
                "type": "string",
                "minLength": 1,
                "maxLength": MAX_QUERY_CHARS,
                "description": "The question, in words or identifiers.",
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_ROUTE_LIMIT,
                "default": 3,
                "description": "At most this many sources per pool.",
            },
            "shared": _SHARED,
        },
        ("query",),
    ),
    annotations=_READ_ONLY,
)

SYMBOLS = Tool(
    name="symbols",
    title="Find definitions by name",
    description=(
        "Definitions (functions, methods, classes, ...) by name: exact matches first, then"
        " similar names (typos, initials, qualified names), then signatures matching the"
        " name's words. Each cites path:start-end with its kind, qualified name and signature."
    ),
    input_schema=_schema(
        {
            "name": _NAME,
            "limit": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_SYMBOLS,
                "default": SYMBOLS_LIMIT,
                "description": "At most this many definitions.",
            },
            "repo": _REPO,
            **TIME_OPTIONS,
        },
        ("name",),
    ),
    annotations=_READ_ONLY,
)

CALLERS = Tool(
    name="callers",
    title="Who calls a definition",
    description=(
        "The definitions that call the functions or methods with this name, each with the"
        " call site (path:line). Use `graph` for deeper walks and other edge kinds."
    ),
    input_schema=_schema(
        {"name": _NAME, "max_nodes": _MAX_NODES, "repo": _REPO, **TIME_OPTIONS}, ("name",)
    ),
    annotations=_READ_ONLY,
)

CALLEES = Tool(
    name="callees",
    title="What a definition calls",
    description=(
        "What the functions or methods with this name call, each with the call site"
        " (path:line); a call to a name with no definition in the index is listed as"
        " unresolved. Use `graph` for deeper walks and other edge kinds."
    ),
    input_schema=_schema(
        {"name": _NAME, "max_nodes": _MAX_NODES, "repo": _REPO, **TIME_OPTIONS}, ("name",)
    ),
    annotations=_READ_ONLY,
)

GRAPH = Tool(
    name="graph",
    title="Walk the code graph",
    description=(
        "The code graph around the definitions with this name: a breadth-first walk along"
        " edges of the given kinds (calls, contains, imports, inherits, references), into"
        " them (callers), out of them (callees) or both, up to depth edges away. Returns"
        " the definitions met (path:start-end) and the edges with their true kind and the"
        " line where each is written."
    ),
    input_schema=_schema(
        {
            "name": _NAME,
            "direction": {
                "type": "string",
                "enum": ["callers", "callees", "both"],
                "default": "both",
                "description": "Edges into the definitions, out of them, or both.",
            },
            "depth": {
                "type": "integer",
                "minimum": 1,
                "maximum": 10,
                "default": 1,
                "description": "How many edges away to walk.",
            },
            "kinds": {
                "type": "array",
                "items": {"type": "string", "enum": list(EDGE_KINDS)},
                "uniqueItems": True,
                "description": "Follow edges of these kinds (default: calls).",
            },
            "max_nodes": {**_MAX_NODES, "default": GRAPH_MAX_NODES},
            "repo": _REPO,
            **TIME_OPTIONS,
        },
        ("name",),
    ),
    annotations=_READ_ONLY,
)

STATUS = Tool(
    name="status",
    title="Index status",
    description=(
        "What the index holds (files, definitions, edges, chunks, languages, vectors), its"
        " size and last update, and the live state of the background indexer (indexing,"
        " embedding, ready, error) with its warnings."
    ),
    input_schema=_schema({}),
    annotations=_READ_ONLY,
)

REINDEX = Tool(
    name="reindex",
    title="Rescan the workspace",
    description=(
        "Rescan the whole workspace and index what changed (files are otherwise indexed as"
        " they change). With wait (the default), answers when the rescan is done (vectors"
        " are computed afterwards, in the background), with the index status."
    ),
    input_schema=_schema(
        {
            "wait": {
                "type": "boolean",
                "default": True,
                "description": "Wait for the rescan to finish before answering.",
            }
        }
    ),
    annotations=ToolAnnotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    ),
)

TOOLS: tuple[Tool, ...] = (SEARCH, ROUTE, SYMBOLS, CALLERS, CALLEES, GRAPH, STATUS, REINDEX)
TOOL_NAMES: tuple[str, ...] = tuple(tool.name for tool in TOOLS)
