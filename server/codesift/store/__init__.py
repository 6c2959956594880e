"""The index database, and the only place with SQL.

database.py     opening a connection (WAL, migrations, damage and foreign-file checks)
migrations.py   the schema, as ordered recorded steps
writer.py       IndexWriter, the one writer of files, nodes, edges and chunks
meta.py         read_meta / write_meta: every value of the meta table
reader.py       read helpers (chunks, nodes, edges, counts) for the front ends
names.py        name-index candidates for symbol lookup
history.py      git-history rows: HistoryRows for the update, time_rows to read back
filters.py      SearchFilters and their SQLite conditions
search_store.py SearchStore, what a search reads (the seam for another backend)
ports.py        NodeStore, what the symbol lookup and the graph walk read
sqlite/         the SQLite answers to both: search.py (SqliteSearchStore) and
                nodes.py (SqliteNodeStore), as postgres/ answers them for PostgreSQL
vector_stamps.py  counters that keep an in-memory copy of the vectors in step
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from codesift.lazy_names import lazy_names

if TYPE_CHECKING:
    from codesift.store.database import move_aside, open_database
    from codesift.store.writer import IndexWriter

__all__ = ["IndexWriter", "move_aside", "open_database"]

# Loaded on first use (PEP 562): a reading command that imports store.database or
# store.reader does not load the writer (and the parsing package it needs).
_HOME = {
    "IndexWriter": "codesift.store.writer",
    "move_aside": "codesift.store.database",
    "open_database": "codesift.store.database",
}

__getattr__, __dir__ = lazy_names(__name__, _HOME, globals())
