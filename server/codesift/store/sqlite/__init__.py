"""The local SQLite index behind the store's ports (store/ports.py).

search.py  what a search reads (`SqliteSearchStore`, a `SearchStore`,
           store/search_store.py): FTS5, the trigram name index, sqlite-vec
nodes.py   definitions and the code graph (`SqliteNodeStore`, a `NodeStore`,
           store/ports.py)

The schema, the writer and the read helpers they use are store/*.py.
"""

from __future__ import annotations

from codesift.store.sqlite.nodes import SqliteNodeStore

__all__ = ["SqliteNodeStore"]
