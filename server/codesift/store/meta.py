"""The `meta` table: named values about the index (its root, when it was last
updated, the git HEAD its history was walked to, vector stamps...).

Every read and write of `meta` outside the migrations goes through these two
functions, so there is one way to set a value and one to remove it.
"""

from __future__ import annotations

import apsw

__all__ = ["read_meta", "write_meta"]


def read_meta(conn: apsw.Connection, key: str) -> str | None:
    """The value stored under `key`, or None when there is none."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None or row[0] is None else str(row[0])


def write_meta(conn: apsw.Connection, key: str, value: str | None) -> None:
    """Set `key` to `value`, or remove it for None (inside the caller's
    transaction, if any)."""
    if value is None:
        conn.execute("DELETE FROM meta WHERE key = ?", (key,))
    else:
        conn.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?)"
            " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )
