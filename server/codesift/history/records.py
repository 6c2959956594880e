"""Reading git times back: a node's or chunk's created and last-changed time,
with the commit that last changed it (short id and subject)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import apsw

from codesift.history.timespec import UNCOMMITTED_TIME, TimeFilter, format_time

__all__ = ["ChangeInfo", "chunk_history", "node_history", "nodes_in_time"]

SHORT_ID = 10


@dataclass(frozen=True, slots=True)
class ChangeInfo:
    """When content was created and last changed.

    `created` and `changed` are ISO 8601 times in UTC ("uncommitted" for
    working-tree edits); `commit` and `subject` name the commit that last
    changed it (None for uncommitted edits and outside git, where times are
    file modification times); `source` is "git", "uncommitted" or "mtime".
    """

    created: str | None
    changed: str | None
    commit: str | None
    subject: str | None
    source: str


def _info(created: Any, changed: Any, commit_no: Any, oid: Any, subject: Any) -> ChangeInfo:
    if (commit_no is not None and int(commit_no) == -1) or (
        changed is not None and int(changed) >= UNCOMMITTED_TIME
    ):
        source = "uncommitted"
    elif commit_no is None or int(commit_no) == 0 or oid is None:
        source = "mtime"
    else:
        source = "git"
    return ChangeInfo(
        created=format_time(created),
        changed=format_time(changed),
        commit=str(oid)[:SHORT_ID] if source == "git" else None,
        subject=str(subject) if source == "git" else None,
        source=source,
    )


def _lookup(
    conn: apsw.Connection, table: str, ids: Iterable[int], commit_column: str
) -> dict[int, ChangeInfo]:
    wanted = list(dict.fromkeys(ids))
    out: dict[int, ChangeInfo] = {}
    for start in range(0, len(wanted), 500):
        batch = wanted[start : start + 500]
        for row_id, created, changed, commit_no, oid, subject in conn.execute(
            f"SELECT t.id, t.created, t.changed, t.{commit_column}, h.oid, h.subject"
            f" FROM {table} t LEFT JOIN history_commits h ON h.id = t.{commit_column}"
            f" WHERE t.id IN ({','.join('?' * len(batch))}) AND t.changed IS NOT NULL",
            batch,
        ):
            out[int(row_id)] = _info(created, changed, commit_no, oid, subject)
    return out


def chunk_history(conn: apsw.Connection, ids: Iterable[int]) -> dict[int, ChangeInfo]:
    """Times of chunks by id (chunks not timed yet are left out)."""
    return _lookup(conn, "chunks", ids, "changed_commit")


def node_history(conn: apsw.Connection, ids: Iterable[int]) -> dict[int, ChangeInfo]:
    """Times of nodes by id (nodes not timed yet are left out)."""
    return _lookup(conn, "nodes", ids, "changed_commit")


def nodes_in_time(conn: apsw.Connection, ids: Iterable[int], window: TimeFilter) -> set[int]:
    """The ids among `ids` whose node passes the time filter."""
    wanted = list(dict.fromkeys(ids))
    if not window:
        return set(wanted)
    cond, params = window.sql("changed", "created")
    out: set[int] = set()
    for start in range(0, len(wanted), 500):
        batch = wanted[start : start + 500]
        out.update(
            int(r[0])
            for r in conn.execute(
                f"SELECT id FROM nodes WHERE id IN ({','.join('?' * len(batch))}){cond}",
                [*batch, *params],
            )
        )
    return out
