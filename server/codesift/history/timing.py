"""Time the stale files' nodes and chunks: from their line histories and working
copies in git, or by their modification times outside it, TIMING_BATCH files per
transaction (history/update.py runs this after the walk)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pygit2

from codesift.history.lines import (
    UNCOMMITTED,
    FileLines,
    LineStore,
    apply_patch,
)
from codesift.history.lines import span_times as _span_times
from codesift.history.state import (
    _DIFF_FLAGS,
    _READ_ERRORS,
    HistoryProgress,
    HistoryProgressCallback,
    HistoryStats,
    _Step,
)
from codesift.store.history import HistoryRows, SpanTimes
from codesift.timespec import UNCOMMITTED_TIME

__all__ = ["TIMING_BATCH"]

# Files timed per transaction.
TIMING_BATCH = 200


def _commit_times(rows: HistoryRows) -> npt.NDArray[np.int64]:
    """Commit number -> time; index 0 (no commit) is 0 and the last element, which
    UNCOMMITTED (-1) reaches, is UNCOMMITTED_TIME."""
    size = rows.last_commit_number() + 2
    times = np.zeros(size, dtype=np.int64)
    for number, when in rows.commit_times():
        times[number] = when
    times[-1] = UNCOMMITTED_TIME
    return times


def _working_lines(
    repo: pygit2.Repository,
    head_tree: pygit2.Tree,
    git_path: str,
    abs_path: Path,
    committed: FileLines | None,
) -> tuple[FileLines | None, bool]:
    """The file's line history with uncommitted edits applied, and whether it has any."""
    try:
        data = abs_path.read_bytes()
    except OSError:
        return committed, False
    try:
        entry = head_tree[git_path]
    except KeyError:
        entry = None
    if entry is None or entry.type != pygit2.enums.ObjectType.BLOB or committed is None:
        count = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
        return FileLines.new(count, UNCOMMITTED), True
    if pygit2.hash(data) == entry.id:
        return committed, False
    blob = repo.get(entry.id)
    if not isinstance(blob, pygit2.Blob):
        return committed, False
    patch = pygit2.Patch.create_from(blob.data, data, flag=_DIFF_FLAGS, context_lines=0)
    return apply_patch(committed, patch, UNCOMMITTED), True


# What `_write_times` asks of a timing: the times of each 1-based line span.
Timing = Callable[[list[tuple[int, int]]], Sequence[SpanTimes]]


def _write_times(rows: HistoryRows, file_id: int, timing: Timing) -> None:
    """Store times for one file's nodes and chunks. `timing(spans)` returns
    (created, created_commit, changed, changed_commit) per 1-based line span."""
    nodes = rows.node_spans(file_id)
    loose = rows.loose_chunk_spans(file_id)
    if nodes:
        node_times = timing([(n.start_line, n.end_line) for n in nodes])
        # A node's chunks (code parts, ast, summary) carry the node's times.
        rows.set_node_times(file_id, [(t, n.id) for t, n in zip(node_times, nodes, strict=True)])
    if loose:
        chunk_times = timing([(c.start_line, c.end_line) for c in loose])
        rows.set_chunk_times([(t, c.id) for t, c in zip(chunk_times, loose, strict=True)])


def _time_by_mtime(rows: HistoryRows, file_id: int, mtime_ns: int, now: float) -> None:
    """Date a file's nodes and chunks by its modification time (commit 0: a
    file-time fallback), as the writer does outside git."""
    seconds = mtime_ns // 1_000_000_000
    _write_times(rows, file_id, lambda spans: [(seconds, 0, seconds, 0) for _ in spans])
    rows.mark_timed(file_id, now)


def _stale_files(rows: HistoryRows, root_paths: set[str]) -> tuple[list[int], set[str]]:
    """Files whose times must be computed again (never timed, re-indexed since, or
    touched by new commits), and the paths of every indexed file.

    A file with uncommitted lines is not re-timed while neither its content nor
    HEAD changes: its uncommitted lines already count as changed now."""
    out = []
    paths: set[str] = set()
    for fid, path, history_at, indexed_at in rows.timing_states():
        paths.add(path)
        if history_at is None or float(history_at) < float(indexed_at) or path in root_paths:
            out.append(fid)
    return out, paths


class _GitTiming:
    """Times one file's nodes and chunks from its line history and working copy."""

    def __init__(
        self,
        repo: pygit2.Repository,
        root: Path,
        prefix: str,
        store: LineStore | None,
        head_tree: pygit2.Tree | None,
        unreadable: set[str],
        times: npt.NDArray[np.int64],
    ) -> None:
        self.repo = repo
        self.root = root
        self.prefix = prefix
        self.store = store
        self.head_tree = head_tree
        self.unreadable = unreadable
        self.times = times
        self.retimed: set[str] = set()
        self.dirty: set[str] = set()

    def time_file(self, rows: HistoryRows, fid: int, path: str, mtime_ns: int, now: float) -> None:
        self.retimed.add(path)
        git_path = self.prefix + path
        if self.store is None or self.head_tree is None or git_path in self.unreadable:
            _time_by_mtime(rows, fid, mtime_ns, now)
            return
        try:
            lines, uncommitted = _working_lines(
                self.repo, self.head_tree, git_path, self.root / path, self.store.get(git_path)
            )
        except _READ_ERRORS:
            _time_by_mtime(rows, fid, mtime_ns, now)
            return
        if uncommitted:
            self.dirty.add(path)
        if lines is None:
            lines = FileLines([], [], [])
        _write_times(rows, fid, partial(_span_times, lines, self.times))
        rows.mark_timed(fid, now)


def _time_files(
    rows: HistoryRows,
    stale: list[int],
    stats: HistoryStats,
    step: _Step,
    progress: HistoryProgressCallback | None,
    cancel: threading.Event | None,
    *,
    timing: _GitTiming | None,
) -> None:
    """Time the stale files, TIMING_BATCH at a time (modification times without
    `timing`); stops at a cancel or a refused turn (`stats.complete` False)."""
    total = len(stale)
    if progress and total:
        progress(HistoryProgress("timing", 0, total))
    for start in range(0, total, TIMING_BATCH):
        if cancel is not None and cancel.is_set():
            stats.complete = False
            return
        batch = stale[start : start + TIMING_BATCH]
        with step() as ok:
            if not ok:
                stats.complete = False
                return
            with rows.transaction():
                now = time.time()
                for fid, path, mtime_ns in list(rows.file_stamps(batch)):
                    if timing is None:
                        _time_by_mtime(rows, fid, mtime_ns, now)
                    else:
                        timing.time_file(rows, fid, path, mtime_ns, now)
        stats.files_timed += len(batch)
        if progress:
            progress(HistoryProgress("timing", stats.files_timed, total))
