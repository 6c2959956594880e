"""The defaults and bounds the front ends show (CLI help, MCP tool schemas), read
from the one place each is defined, so that no front end writes a number of its own.

    top_k, low, high = search_setting("top_k")   # 10, 1, 200 (config.SearchSettings)

`NEIGHBOURS_MAX_NODES` is how many definitions `callers` / `callees` show at most
(CLI and MCP alike); `GRAPH_MAX_NODES` the `graph` walk's default (GraphQuery);
`SYMBOLS_LIMIT` how many definitions a symbols lookup returns (CLI and MCP).
"""

from __future__ import annotations

from dataclasses import fields

from codesift.config import Limits, SearchSettings
from codesift.engine.results import GraphQuery

__all__ = [
    "GRAPH_MAX_NODES",
    "MAX_NODES_LIMIT",
    "NEIGHBOURS_MAX_NODES",
    "SYMBOLS_LIMIT",
    "search_setting",
]

# callers / callees: definitions shown at most (the walk says when it stopped there).
NEIGHBOURS_MAX_NODES = 200
# graph: the walk's default size, and the most any walk may show (engine/graph.py).
GRAPH_MAX_NODES = GraphQuery().max_nodes
MAX_NODES_LIMIT = 2000
# symbols: definitions returned (exact ones first), of at most engine.symbols.MAX_SYMBOLS.
SYMBOLS_LIMIT = 20


def search_setting(name: str) -> tuple[int, int, int]:
    """The default of the integer `search.<name>` setting and its bounds."""
    for item in fields(SearchSettings):
        if item.name == name:
            default = getattr(SearchSettings(), name)
            bounds = item.metadata.get("limits")
            assert isinstance(default, int) and isinstance(bounds, Limits)
            assert bounds.minimum is not None and bounds.maximum is not None
            return default, int(bounds.minimum), int(bounds.maximum)
    raise KeyError(name)
