"""The local SQLite index behind the store's ports (store/ports.py).

nodes.py   definitions and the code graph (`SqliteNodeStore`, a `NodeStore`)

The search's reads (`SqliteSearchStore`, a `SearchStore`) are store/sqlite_search.py;
the schema, the writer and the read helpers are store/*.py.
"""

from __future__ import annotations

from codesift.store.sqlite.nodes import SqliteNodeStore

__all__ = ["SqliteNodeStore"]
