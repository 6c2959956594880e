"""Bring the index's git times up to date: walk new commits, then time the nodes
and chunks of every file whose rows or history changed.

The walk follows first parents from the last walked HEAD (meta `history_head`)
to the current HEAD, oldest first, and applies each commit's zero-context diff
to the per-line commit numbers of the files it touches (codesift.history.lines).
The diffs come from `git log -p` (history/gitlog.py: git diffs on the other core
while this process applies them), limited to the indexed folder's path, so a
folder of a monorepo walks only the commits that touch it; libgit2 reads them
instead without git 2.31+, in a partial clone, or after git fails on a missing
object. When the stored HEAD is no longer on the first-parent chain (a rebase, a
reset, another branch) the history is rebuilt.

The pass is written in steps, each its own transaction inside the caller's batch
guard (its turn on the write lock): a checkpoint of the walk every
CHECKPOINT_SECONDS (the commits walked, the changed line histories, and
`history_head` set to the last commit applied), then the files TIMING_BATCH at a
time. A pass killed or cancelled half-way goes on from its last step: commits
already walked are never walked again, and the files their diffs touched wait in
meta `history_retime`. `history_pending` says what is left (meta `history_walk`
holds the walk's progress); search never waits for it (engine/history.py).

Renames are followed: a commit whose diff both adds and deletes files runs
rename detection (50% similarity), and a renamed file keeps its lines' history.
A merge counts as one commit on the first-parent line: what it brings in changed
when it was merged. Times are committer times.

Lines that differ between HEAD and the working tree count as changed now
(UNCOMMITTED_TIME); a file git does not track is uncommitted as a whole. Outside
a git repository every line of a file carries the file's modification time.

History that cannot be read (a shallow, partial or damaged clone lacks objects)
is not retried on every update: a file whose diff needs a missing object is
timed by its modification time, as outside git, and so is every file when the
walk cannot go on at all (a missing commit or tree). The failure is recorded in
meta `history_error` with the HEAD it happened at (`history_failure` reads it,
`codesift status` shows it) and retried, from scratch, only once HEAD moves.
An update with nothing to do writes nothing, so a read-only index stays usable.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import apsw
import pygit2

from codesift.history.gitlog import (
    CommitDiff,
    GitLogError,
    first_parent_ids,
    git_program,
    log_diffs,
)
from codesift.history.libgit2_diffs import (
    _first_parent_chain,
    _pygit2_diffs,
    _Unreadable,
)
from codesift.history.lines import LineStore, apply_patch
from codesift.history.state import (
    _FAILURE_KEY,
    _READ_ERRORS,
    _RETIME_KEY,
    _UNREADABLE_KEY,
    _WALK_KEY,
    HistoryFailure,
    HistoryPending,
    HistoryProgress,
    HistoryProgressCallback,
    HistoryStats,
    HistoryStatus,
    _failure,
    _message,
    _open_repository,
    _partial_clone,
    _record_failure,
    _retime_paths,
    _Step,
    _unreadable_paths,
    history_failure,
    history_pending,
    history_status,
    in_git_history,
)
from codesift.history.timing import (
    TIMING_BATCH,
    _commit_times,
    _GitTiming,
    _stale_files,
    _time_files,
)
from codesift.store.history import CommitRow, HistoryRows

__all__ = [
    "CHECKPOINT_SECONDS",
    "TIMING_BATCH",
    "HistoryFailure",
    "HistoryPending",
    "HistoryProgress",
    "HistoryStats",
    "HistoryStatus",
    "history_failure",
    "history_pending",
    "history_status",
    "in_git_history",
    "update_history",
]

log = logging.getLogger(__name__)

# The walk is saved this often (and at once when cancelled: a cancel is looked at
# after every commit), and reports progress this often. Each save writes the line
# histories of the files changed since the last one: more often costs more (a save
# a second: a fifth of a deep walk).
CHECKPOINT_SECONDS = 5.0
PROGRESS_SECONDS = 0.5


def _apply_commit(
    diff: CommitDiff,
    number: int,
    store: LineStore,
    prefix: str,
    unreadable: _Unreadable | None = None,
) -> set[str]:
    """Apply one commit's diff against its first parent; return the paths it touched.

    A file whose diff cannot be read joins `unreadable` (its line history is
    dropped) and stays there: its later diffs would build on lines we lack."""
    if unreadable is None:
        unreadable = _Unreadable(set())
    touched: set[str] = set()
    for delta in diff.deltas:
        old_path, new_path = delta.old_path, delta.new_path
        if not (old_path.startswith(prefix) or new_path.startswith(prefix)):
            continue
        status = delta.status
        if status == "D":
            store.put(old_path, None)
            touched.add(old_path)
            unreadable.paths.discard(old_path)
            continue
        if (
            delta.unreadable is not None
            or new_path in unreadable.paths
            or (status == "R" and old_path in unreadable.paths)
        ):
            unreadable.add_message(new_path, delta.unreadable or "earlier history is missing")
            store.put(new_path, None)
            touched.add(new_path)
            if status == "R":
                unreadable.paths.discard(old_path)
                store.put(old_path, None)
                touched.add(old_path)
            continue
        if delta.binary:
            store.put(new_path, None)
            touched.add(new_path)
            if status == "R":
                store.put(old_path, None)
                touched.add(old_path)
            continue
        old_lines = None if status == "A" else store.get(old_path)
        if status == "R":
            store.put(old_path, None)
            touched.add(old_path)
        store.put(new_path, apply_patch(old_lines, delta.patch, number))
        touched.add(new_path)
    return touched


class _Walk:
    """One walk of new commits, saved at checkpoints so that a walk killed or
    cancelled half-way continues from the last one (meta `history_head` is the
    last commit applied and saved; the commits before it are never walked again)."""

    def __init__(
        self,
        rows: HistoryRows,
        store: LineStore,
        unreadable: _Unreadable,
        prefix: str,
        step: _Step,
    ) -> None:
        self.rows = rows
        self.store = store
        self.unreadable = unreadable
        self.prefix = prefix
        self.step = step
        self.number = rows.last_commit_number()
        self.commits: list[CommitRow] = []
        self.touched: set[str] = set()
        self.walked = 0

    def apply(self, diff: CommitDiff) -> None:
        self.number += 1
        self.commits.append((self.number, diff.oid, diff.time, diff.subject))
        self.touched |= _apply_commit(diff, self.number, self.store, self.prefix, self.unreadable)

    def save(self, head: str, done: int, total: int) -> bool:
        """Write what was walked up to `head` (a commit on the first-parent chain);
        False when the writer's turn could not be had (stopping)."""
        rows, prefix = self.rows, self.prefix
        retime = {p[len(prefix) :] for p in self.touched if p.startswith(prefix)}
        with self.step() as ok:
            if not ok:
                return False
            with rows.transaction():
                rows.add_commits(self.commits)
                self.store.save()
                rows.set_meta("history_head", head)
                rows.set_meta("history_prefix", prefix)
                paths = sorted(p for p in self.unreadable.paths if p.startswith(prefix))
                rows.set_meta(_UNREADABLE_KEY, json.dumps(paths) if paths else None)
                if retime:
                    rows.set_meta(_RETIME_KEY, json.dumps(sorted(retime | _retime_paths(rows))))
                done_total = json.dumps({"done": done, "total": total}) if done < total else None
                rows.set_meta(_WALK_KEY, done_total)
        self.walked += len(self.commits)
        self.commits = []
        self.touched = set()
        return True


def _walk_failed(
    rows: HistoryRows,
    stats: HistoryStats,
    head: str,
    failure: HistoryFailure | None,
    exc: BaseException,
    step: _Step,
) -> None:
    """Record that the history cannot be read at this HEAD ("" when HEAD itself
    cannot be): every stale file is then timed by its modification time, and the
    stored history stays as it was at the last checkpoint."""
    stats.error = _message(exc)
    stats.error_is_new = failure is None or failure.head != head
    with step() as ok:
        if ok:
            with rows.transaction():
                _record_failure(rows, HistoryFailure(head, stats.error, None))


def _walk(
    rows: HistoryRows,
    repo: pygit2.Repository,
    prefix: str,
    stats: HistoryStats,
    step: _Step,
    progress: HistoryProgressCallback | None,
    cancel: threading.Event | None,
) -> tuple[LineStore | None, set[str]]:
    """Walk the commits since the stored HEAD, saving at checkpoints. Returns the
    line store (None when the history cannot be read at all, or the walk was
    cancelled: `stats.complete` is then False) and the git paths whose history
    cannot be read."""
    started = time.perf_counter()
    failure = _failure(rows)
    try:
        head = repo.head.peel(pygit2.Commit)
    except _READ_ERRORS as exc:
        _walk_failed(rows, stats, "", failure, exc, step)
        return None, set()
    stats.head = str(head.id)
    stored = rows.meta("history_head")
    stored_prefix = rows.meta("history_prefix")
    if stored_prefix is not None and stored_prefix != prefix:
        stored = None
    if failure is not None:
        if failure.head == stats.head:  # known, and nothing new to read
            stats.error = failure.error
            store = LineStore(rows)
            return (None if failure.files is None else store), _unreadable_paths(rows)
        stored = None  # HEAD moved: the missing objects may be here now, read it all again
    if stored == stats.head:
        return LineStore(rows), _unreadable_paths(rows)
    git = None if _partial_clone(repo) else git_program()
    workdir = Path(repo.workdir) if repo.workdir else None
    for reader in ("git", "libgit2") if git is not None and workdir is not None else ("libgit2",):
        try:
            walked = _walk_from(
                rows,
                repo,
                head,
                stored,
                prefix,
                stats,
                step,
                progress,
                cancel,
                git if reader == "git" else None,
                workdir,
            )
        except GitLogError as exc:
            # Missing objects (a partial or shallow clone) or an old git: libgit2
            # reads what it can, file by file, from the last checkpoint.
            log.info("history: git log failed (%s); reading with libgit2", exc)
            stored = rows.meta("history_head")
            if rows.meta("history_prefix") != prefix:
                stored = None
            continue
        except _READ_ERRORS as exc:
            _walk_failed(rows, stats, stats.head, failure, exc, step)
            return None, set()
        stats.walk_seconds = time.perf_counter() - started
        return walked
    raise AssertionError("unreachable: the libgit2 reader raises or returns")


def _walk_from(
    rows: HistoryRows,
    repo: pygit2.Repository,
    head: pygit2.Commit,
    stored: str | None,
    prefix: str,
    stats: HistoryStats,
    step: _Step,
    progress: HistoryProgressCallback | None,
    cancel: threading.Event | None,
    git: str | None,
    workdir: Path | None,
) -> tuple[LineStore | None, set[str]]:
    head_id = str(head.id)
    if git is not None and workdir is not None:
        chain_ids = first_parent_ids(git, workdir, head_id)  # newest first
    else:
        chain_ids = [str(c.id) for c in reversed(_first_parent_chain(repo, head, None)[0])]
    position = {oid: i for i, oid in enumerate(chain_ids)}
    since = stored if stored is not None and stored in position else None
    unreadable = _Unreadable(_unreadable_paths(rows) if since is not None else set())
    if since is not None:
        todo = chain_ids[: position[since]][::-1]
    elif _restart_history(rows, stored, prefix, stats, step):
        todo = chain_ids[::-1]
    else:
        return None, set()
    store = LineStore(rows)
    walk = _Walk(rows, store, unreadable, prefix, step)
    if git is not None and workdir is not None:
        revisions = [head_id] if since is None else [head_id, "^" + since]
        diffs: Iterator[CommitDiff] = log_diffs(git, workdir, revisions, prefix)
    else:
        commits: list[pygit2.Commit] = []
        for oid in todo:
            commit = repo.get(oid)
            if isinstance(commit, pygit2.Commit):
                commits.append(commit)
        diffs = _pygit2_diffs(repo, commits, unreadable)
    total = len(todo)
    if not _walk_diffs(walk, diffs, todo, stats, progress, cancel):
        return None, set()
    if not walk.save(head_id, total, total):
        stats.complete = False
        return None, set()
    if progress:
        progress(HistoryProgress("walking", total, total))
    _record_unreadable(rows, unreadable, prefix, head_id, stats, step)
    stats.commits = walk.walked
    return store, unreadable.paths


def _restart_history(
    rows: HistoryRows, stored: str | None, prefix: str, stats: HistoryStats, step: _Step
) -> bool:
    """Forget the stored history (its HEAD left the first-parent chain, or there
    is none) before walking from the root; False when the writer's turn could
    not be had (stopping)."""
    if stored is not None:
        log.info("history: %s is no longer on the first-parent chain; rebuilding", stored)
        stats.rebuilt = True
    with step() as ok:
        if not ok:
            stats.complete = False
            return False
        with rows.transaction():
            rows.forget_history()
            rows.set_meta("history_head", None)
            rows.set_meta(_UNREADABLE_KEY, None)
            rows.set_meta(_RETIME_KEY, None)
            rows.set_meta("history_prefix", prefix)
    return True


def _walk_diffs(
    walk: _Walk,
    diffs: Iterator[CommitDiff],
    todo: list[str],
    stats: HistoryStats,
    progress: HistoryProgressCallback | None,
    cancel: threading.Event | None,
) -> bool:
    """Apply the diffs of the commits `todo` (oldest first), saving a checkpoint
    every CHECKPOINT_SECONDS and at once when cancelled; False when the walk
    stopped before the end (cancelled, or no turn to write)."""
    total = len(todo)
    index_of = {oid: i for i, oid in enumerate(todo)}
    if progress:
        progress(HistoryProgress("walking", 0, total))
    last_save = time.perf_counter()
    done = 0
    last_report = last_save
    try:
        for diff in diffs:
            walk.apply(diff)
            done = index_of.get(diff.oid, done - 1) + 1
            now = time.perf_counter()
            cancelled = cancel is not None and cancel.is_set()
            if cancelled or now - last_save >= CHECKPOINT_SECONDS:
                if not walk.save(todo[done - 1], done, total):
                    stats.complete = False
                    return False
                last_save = time.perf_counter()
                if cancelled:
                    stats.complete = False
                    stats.commits = walk.walked
                    if progress:
                        progress(HistoryProgress("walking", done, total))
                    return False
            if progress and now - last_report >= PROGRESS_SECONDS:
                last_report = now
                progress(HistoryProgress("walking", done, total))
    finally:
        close = getattr(diffs, "close", None)
        if close is not None:
            close()
    return True


def _record_unreadable(
    rows: HistoryRows,
    unreadable: _Unreadable,
    prefix: str,
    head_id: str,
    stats: HistoryStats,
    step: _Step,
) -> None:
    """Record the first error of the folder's files whose history could not be
    read at `head_id` (or that there is none)."""
    paths = sorted(p for p in unreadable.paths if p.startswith(prefix))
    with step() as ok:
        if ok:
            with rows.transaction():
                if unreadable.error is not None and paths:
                    stats.error = unreadable.error
                    stats.error_is_new = True
                    _record_failure(rows, HistoryFailure(head_id, unreadable.error, len(paths)))
                else:
                    _record_failure(rows, None)


def _no_guard() -> AbstractContextManager[bool]:
    return contextlib.nullcontext(True)


def update_history(
    conn: apsw.Connection,
    root: Path,
    *,
    progress: HistoryProgressCallback | None = None,
    cancel: threading.Event | None = None,
    batch_guard: _Step | None = None,
) -> HistoryStats:
    """Walk new commits and give every stale file's nodes and chunks their created
    and last-changed times.

    Work is written in steps (a checkpoint of the walk about every
    CHECKPOINT_SECONDS, then TIMING_BATCH files at a time), each in its own
    transaction inside `batch_guard()` (the caller's turn on the index's write
    lock; a guard that yields False stops the update). `cancel` stops it at the
    next step; what was written stays, and the next update goes on from there
    (`stats.complete` is False then). Safe to kill at any moment."""
    started = time.perf_counter()
    step = batch_guard or _no_guard
    stats = HistoryStats()
    found = _open_repository(root)
    rows = HistoryRows(conn)
    if found is None:
        stats.source = "mtime"
        with step() as ok:
            if not ok:
                stats.complete = False
                return stats
            with rows.transaction():
                if rows.meta("history_head") is not None:  # the folder stopped being a repository
                    rows.forget_history()
                    rows.set_meta("history_head", None)
                for key in (_FAILURE_KEY, _UNREADABLE_KEY, _RETIME_KEY, _WALK_KEY):
                    rows.set_meta(key, None)
        stale, _ = _stale_files(rows, set())
        _time_files(rows, stale, stats, step, progress, cancel, timing=None)
        if stats.complete:
            with step() as ok:
                if ok:
                    with rows.transaction():
                        rows.set_meta("history_dirty", None)
        stats.seconds = time.perf_counter() - started
        return stats
    repo, prefix = found
    stats.source = "git"
    store, unreadable = _walk(rows, repo, prefix, stats, step, progress, cancel)
    if stats.error is not None and stats.error_is_new:
        log.warning(
            "git history cannot be read (%s); files are timed by their modification time"
            " where it is missing, until HEAD moves",
            stats.error,
        )
    if not stats.complete:
        stats.seconds = time.perf_counter() - started
        return stats
    retime = _retime_paths(rows)
    stale, indexed_paths = _stale_files(rows, retime)
    head_tree: pygit2.Tree | None = None
    if store is not None:
        try:
            head_tree = repo.head.peel(pygit2.Commit).tree
        except _READ_ERRORS:
            head_tree = None
    timing = _GitTiming(repo, root, prefix, store, head_tree, unreadable, _commit_times(rows))
    _time_files(rows, stale, stats, step, progress, cancel, timing=timing)
    if stats.complete:
        dirty_before = set(json.loads(rows.meta("history_dirty") or "[]"))
        # Dirty files that were not re-timed stay dirty; those that were say it anew.
        dirty = ((dirty_before - timing.retimed) | timing.dirty) & indexed_paths
        with step() as ok:
            if ok:
                with rows.transaction():
                    rows.set_meta("history_dirty", json.dumps(sorted(dirty)) if dirty else None)
                    rows.set_meta(_RETIME_KEY, None)
        stats.uncommitted_files = len(dirty)
    stats.seconds = time.perf_counter() - started
    return stats
