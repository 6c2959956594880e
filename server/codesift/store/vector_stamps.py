"""Counters that let an in-memory copy of the vectors stay in step with the index.

Each write of vectors stamps its `embedded` rows with a new `vectors_stamp`, and
each removal of vectors bumps `vectors_removed`; both live in `meta`. A reader that
remembers the two values it last saw fetches only the rows stamped since, and
re-reads the surviving ids only after a removal (retrieval/vector_index.py).
"""

from __future__ import annotations

import apsw

from codesift.store.meta import read_meta, write_meta

__all__ = ["bump_vectors_removed", "next_vectors_stamp", "vector_counters"]

STAMP_KEY = "vectors_stamp"
REMOVED_KEY = "vectors_removed"


def _counter(conn: apsw.Connection, key: str) -> int:
    value = read_meta(conn, key)
    return int(value) if value is not None else 0


def vector_counters(conn: apsw.Connection) -> tuple[int, int]:
    """(last stamp, removals) as recorded now."""
    return _counter(conn, STAMP_KEY), _counter(conn, REMOVED_KEY)


def next_vectors_stamp(conn: apsw.Connection) -> int:
    """Allocate the stamp for a batch of vectors about to be written (inside the
    batch's transaction)."""
    stamp = _counter(conn, STAMP_KEY) + 1
    write_meta(conn, STAMP_KEY, str(stamp))
    return stamp


def bump_vectors_removed(conn: apsw.Connection) -> None:
    """Record that vectors were removed (inside the removing transaction)."""
    write_meta(conn, REMOVED_KEY, str(_counter(conn, REMOVED_KEY) + 1))
