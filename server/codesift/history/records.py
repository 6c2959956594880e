"""Reading git times back: a node's or chunk's created and last-changed time,
with the commit that last changed it (short id and subject)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import apsw

from codesift.store.history import TimeRow, ids_in_time, time_rows
from codesift.timespec import UNCOMMITTED_TIME, TimeFilter, format_time

__all__ = ["ChangeInfo", "change_info", "chunk_history", "node_history", "nodes_in_time"]

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


def change_info(row: TimeRow) -> ChangeInfo:
    """What a front end shows of a node's or chunk's times."""
    if (row.commit_no is not None and int(row.commit_no) == -1) or (
        row.changed is not None and int(row.changed) >= UNCOMMITTED_TIME
    ):
        source = "uncommitted"
    elif row.commit_no is None or int(row.commit_no) == 0 or row.oid is None:
        source = "mtime"
    else:
        source = "git"
    return ChangeInfo(
        created=format_time(row.created),
        changed=format_time(row.changed),
        commit=str(row.oid)[:SHORT_ID] if source == "git" else None,
        subject=str(row.subject) if source == "git" else None,
        source=source,
    )


def chunk_history(conn: apsw.Connection, ids: Iterable[int]) -> dict[int, ChangeInfo]:
    """Times of chunks by id (chunks not timed yet are left out)."""
    return {i: change_info(row) for i, row in time_rows(conn, "chunks", ids).items()}


def node_history(conn: apsw.Connection, ids: Iterable[int]) -> dict[int, ChangeInfo]:
    """Times of nodes by id (nodes not timed yet are left out)."""
    return {i: change_info(row) for i, row in time_rows(conn, "nodes", ids).items()}


def nodes_in_time(conn: apsw.Connection, ids: Iterable[int], window: TimeFilter) -> set[int]:
    """The ids among `ids` whose node passes the time filter."""
    return ids_in_time(conn, "nodes", ids, window)
