"""The shared team index on PostgreSQL (pgvector, pg_trgm, full-text search).

schema.py   ordered, recorded migrations; ids of many repositories in one database
mirror.py   writes a repository's local index into it, only the files that changed
search.py   the search's reads (store/search_store.py) with the reader's grants
            inside every statement
nodes.py    definitions and the code graph (store/ports.py, NodeStore), as the
            search store's reader
status.py   what each readable repository holds (`codesift status --db`)
access.py   principals, groups, grants and delegates; row security
jobs.py     one indexing job per repository key: its lock, id and state
keys.py     repository keys and names checked before they reach a statement
redact.py   credentials kept out of the shared text
tsvector.py the SQLite index's own tokens as tsvector / tsquery literals

Needs the `postgres` extra (`pip install 'codesift[postgres]'`): psycopg 3.
"""

from __future__ import annotations

from codesift.store.postgres.access import (
    add_member,
    add_principal,
    disable_row_security,
    enable_row_security,
    grant,
    remove_repo,
    revoke,
)
from codesift.store.postgres.mirror import MirrorSummary, mirror_index
from codesift.store.postgres.schema import migrate, schema_version
from codesift.store.postgres.search import PostgresSearchStore, Reader

__all__ = [
    "MirrorSummary",
    "PostgresSearchStore",
    "Reader",
    "add_member",
    "add_principal",
    "disable_row_security",
    "enable_row_security",
    "grant",
    "migrate",
    "mirror_index",
    "remove_repo",
    "revoke",
    "schema_version",
]
