"""Git-history rows of the index: the created / last-changed times of nodes and
chunks with the commit that last changed them (history_commits), and what the
history update keeps to compute them (per-file line histories, walked commits).

history/update.py computes the times and writes them through `HistoryRows`;
history/records.py turns the rows read back (`time_rows`) into what front ends
show.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Literal, NamedTuple, cast

import apsw

from codesift.store.database import scalar
from codesift.store.filters import time_conditions
from codesift.store.meta import read_meta, write_meta
from codesift.timespec import TimeFilter

__all__ = [
    "CommitRow",
    "FileTiming",
    "HistoryRows",
    "Span",
    "SpanTimes",
    "TimeRow",
    "TimedTable",
    "ids_in_time",
    "time_rows",
]

TimedTable = Literal["nodes", "chunks"]
_BATCH = 500

# (commit number, commit id, committer time, subject)
CommitRow = tuple[int, str, int, str]
# (created time, created commit, changed time, changed commit)
SpanTimes = tuple[int, int, int, int]


class Span(NamedTuple):
    """A node's or chunk's 1-based line span."""

    id: int
    start_line: int
    end_line: int


class FileTiming(NamedTuple):
    """When a file was last timed (None: never) and last indexed (Unix seconds)."""

    id: int
    path: str
    history_at: float | None
    indexed_at: float


class TimeRow(NamedTuple):
    """A node's or chunk's times (Unix seconds) and its last commit: `commit_no` is
    the history_commits id (0 outside git, -1 for uncommitted edits; None before
    the history was computed), `oid` and `subject` that commit's, when known."""

    id: int
    created: float | None
    changed: float | None
    commit_no: int | None
    oid: str | None
    subject: str | None


def time_rows(conn: apsw.Connection, table: TimedTable, ids: Iterable[int]) -> dict[int, TimeRow]:
    """Times of the rows of `table` by id; rows not timed yet are left out."""
    wanted = list(dict.fromkeys(ids))
    out: dict[int, TimeRow] = {}
    for start in range(0, len(wanted), _BATCH):
        batch = wanted[start : start + _BATCH]
        for row_id, created, changed, commit_no, oid, subject in conn.execute(
            f"SELECT t.id, t.created, t.changed, t.changed_commit, h.oid, h.subject"
            f" FROM {table} t LEFT JOIN history_commits h ON h.id = t.changed_commit"
            f" WHERE t.id IN ({','.join('?' * len(batch))}) AND t.changed IS NOT NULL",
            batch,
        ):
            out[int(row_id)] = TimeRow(int(row_id), created, changed, commit_no, oid, subject)
    return out


def ids_in_time(
    conn: apsw.Connection, table: TimedTable, ids: Iterable[int], window: TimeFilter
) -> set[int]:
    """The ids among `ids` whose row of `table` passes the time window."""
    wanted = list(dict.fromkeys(ids))
    if not window:
        return set(wanted)
    cond, params = time_conditions(window, "changed", "created")
    out: set[int] = set()
    for start in range(0, len(wanted), _BATCH):
        batch = wanted[start : start + _BATCH]
        out.update(
            int(r[0])
            for r in conn.execute(
                f"SELECT id FROM {table} WHERE id IN ({','.join('?' * len(batch))}){cond}",
                [*batch, *params],
            )
        )
    return out


class HistoryRows:
    """The git-history rows of one index, on the writer's connection: line histories
    per file (history_files), walked commits (history_commits), the times of nodes
    and chunks, when each file was last timed (files.history_at), and the meta
    values the walk keeps. history/update.py decides what to write."""

    def __init__(self, conn: apsw.Connection) -> None:
        self._conn = conn

    def transaction(self) -> AbstractContextManager[object]:
        """A transaction (a savepoint inside another): rolled back if the block raises."""
        return cast("AbstractContextManager[object]", self._conn)

    # -- meta --------------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        return read_meta(self._conn, key)

    def set_meta(self, key: str, value: str | None) -> None:
        """Set (or remove, for None) a meta value; no write when it is already so,
        so an update with nothing to do leaves a read-only index usable."""
        if read_meta(self._conn, key) != value:
            write_meta(self._conn, key, value)

    # -- line histories and commits ----------------------------------------------

    def file_lines(self, path: str) -> bytes | None:
        """A file's encoded line history (history/lines.py), or None."""
        row = self._conn.execute(
            "SELECT lines FROM history_files WHERE path = ?", (path,)
        ).fetchone()
        return bytes(row[0]) if row else None

    def put_file_lines(self, path: str, lines: bytes | None) -> None:
        """Store (or remove, for None) a file's encoded line history."""
        if lines is None:
            self._conn.execute("DELETE FROM history_files WHERE path = ?", (path,))
        else:
            self._conn.execute(
                "INSERT INTO history_files (path, lines) VALUES (?, ?)"
                " ON CONFLICT(path) DO UPDATE SET lines = excluded.lines",
                (path, lines),
            )

    def forget_history(self) -> None:
        """Remove every line history and commit; every file is to be timed again."""
        self._conn.execute("DELETE FROM history_files")
        self._conn.execute("DELETE FROM history_commits")
        self._conn.execute("UPDATE files SET history_at = NULL")

    def last_commit_number(self) -> int:
        """The highest commit number walked so far (0 for none)."""
        return int(scalar(self._conn, "SELECT coalesce(max(id), 0) FROM history_commits"))

    def add_commits(self, commits: Sequence[CommitRow]) -> None:
        self._conn.executemany(
            "INSERT INTO history_commits (id, oid, time, subject) VALUES (?,?,?,?)", commits
        )

    def commit_times(self) -> list[tuple[int, int]]:
        """(commit number, committer time) of every walked commit."""
        return [
            (int(number), int(when))
            for number, when in self._conn.execute("SELECT id, time FROM history_commits")
        ]

    # -- files, nodes and chunks -------------------------------------------------

    def file_count(self) -> int:
        return int(scalar(self._conn, "SELECT count(*) FROM files"))

    def untimed_count(self) -> int:
        """Files never timed, or indexed again since they were."""
        return int(
            scalar(
                self._conn,
                "SELECT count(*) FROM files WHERE history_at IS NULL OR history_at < indexed_at",
            )
        )

    def timing_states(self) -> list[FileTiming]:
        """Every indexed file with when it was last timed and last indexed."""
        return [
            FileTiming(int(fid), str(path), history_at, indexed_at)
            for fid, path, history_at, indexed_at in self._conn.execute(
                "SELECT id, path, history_at, indexed_at FROM files"
            )
        ]

    def file_stamps(self, file_ids: Sequence[int]) -> Iterator[tuple[int, str, int]]:
        """(id, path, mtime_ns) of the files with these ids."""
        for start in range(0, len(file_ids), _BATCH):
            batch = list(file_ids[start : start + _BATCH])
            for fid, path, mtime_ns in self._conn.execute(
                f"SELECT id, path, mtime_ns FROM files WHERE id IN ({','.join('?' * len(batch))})",
                batch,
            ):
                yield int(fid), str(path), int(mtime_ns)

    def node_spans(self, file_id: int) -> list[Span]:
        """(id, start line, end line) of a file's nodes."""
        return [
            Span(int(i), int(s), int(e))
            for i, s, e in self._conn.execute(
                "SELECT id, start_line, end_line FROM nodes WHERE file_id = ?", (file_id,)
            )
        ]

    def loose_chunk_spans(self, file_id: int) -> list[Span]:
        """(id, start line, end line) of a file's chunks that belong to no node."""
        return [
            Span(int(i), int(s), int(e))
            for i, s, e in self._conn.execute(
                "SELECT id, start_line, end_line FROM chunks WHERE file_id = ? AND node_id IS NULL",
                (file_id,),
            )
        ]

    def set_node_times(self, file_id: int, times: Sequence[tuple[SpanTimes, int]]) -> None:
        """Give nodes their (created, created commit, changed, changed commit), and
        the file's chunks of those nodes (code parts, ast, summary) the same times."""
        self._conn.executemany(
            "UPDATE nodes SET created = ?, created_commit = ?, changed = ?, changed_commit = ?"
            " WHERE id = ?",
            [(*t, node_id) for t, node_id in times],
        )
        self._conn.execute(
            "UPDATE chunks SET created = n.created, changed = n.changed,"
            " changed_commit = n.changed_commit FROM nodes n"
            " WHERE chunks.file_id = ? AND chunks.node_id = n.id",
            (file_id,),
        )

    def set_chunk_times(self, times: Sequence[tuple[SpanTimes, int]]) -> None:
        """Give chunks that belong to no node their times."""
        self._conn.executemany(
            "UPDATE chunks SET created = ?, changed = ?, changed_commit = ? WHERE id = ?",
            [(t[0], t[2], t[3], chunk_id) for t, chunk_id in times],
        )

    def mark_timed(self, file_id: int, now: float) -> None:
        """Record that a file's times were computed at `now`."""
        self._conn.execute("UPDATE files SET history_at = ? WHERE id = ?", (now, file_id))
