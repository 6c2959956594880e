"""Bring the index's git times up to date: walk new commits, then time the nodes
and chunks of every file whose rows or history changed.

The walk follows first parents from the last walked HEAD (meta `history_head`)
to the current HEAD, oldest first, and applies each commit's zero-context diff
to the per-line commit numbers of the files it touches (codesift.history.lines).
Only those files' line histories are loaded and written back, so an update after
a few commits costs a few diffs. When the stored HEAD is no longer on the first-
parent chain (a rebase, a reset, another branch) the history is rebuilt.

Renames are followed: a commit whose diff both adds and deletes files runs
libgit2's rename detection (`find_similar`, 50% similarity), and a renamed file
keeps its lines' history. A merge counts as one commit on the first-parent line:
what it brings in changed when it was merged. Times are committer times.

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
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import apsw
import numpy as np
import numpy.typing as npt
import pygit2

from codesift.history.lines import UNCOMMITTED, FileLines, apply_patch, decode_lines, encode_lines
from codesift.history.lines import span_times as _span_times
from codesift.history.timespec import UNCOMMITTED_TIME
from codesift.store.history import HistoryRows, SpanTimes

__all__ = [
    "HistoryFailure",
    "HistoryStats",
    "HistoryStatus",
    "history_failure",
    "history_status",
    "in_git_history",
    "update_history",
]

log = logging.getLogger(__name__)

_ADDED = pygit2.enums.DeltaStatus.ADDED
_DELETED = pygit2.enums.DeltaStatus.DELETED
_RENAMED = pygit2.enums.DeltaStatus.RENAMED
# git diff (and so git blame) slides hunks by indentation since git 2.14; libgit2
# does so only when asked. Without it about 0.1% of lines blame another commit.
_DIFF_FLAGS = pygit2.enums.DiffOption.INDENT_HEURISTIC


@dataclass(slots=True)
class HistoryStats:
    source: str = "none"  # "git", "mtime" or "none"
    commits: int = 0  # commits walked in this update
    rebuilt: bool = False  # the stored history was discarded and walked again
    files_timed: int = 0  # files whose nodes and chunks got new times
    uncommitted_files: int = 0
    walk_seconds: float = 0.0
    seconds: float = 0.0
    head: str | None = None
    touched: set[str] = field(default_factory=set)
    # The history could not be read (wholly, or for some files): why, and whether
    # this update found that out (False: recorded at this HEAD before, not retried).
    error: str | None = None
    error_is_new: bool = False


@dataclass(frozen=True, slots=True)
class HistoryFailure:
    """Git history this index could not read, recorded at HEAD `head`."""

    head: str
    error: str  # git's message, e.g. "object not found - ..."
    files: int | None  # files timed by modification time instead; None: every file


_FAILURE_KEY = "history_error"
_UNREADABLE_KEY = "history_unreadable"
# What a missing object raises in pygit2 (NotFoundError is both).
_READ_ERRORS = (KeyError, pygit2.GitError)


def history_failure(conn: apsw.Connection) -> HistoryFailure | None:
    """The recorded reason the index's git history is incomplete, if it is."""
    return _failure(HistoryRows(conn))


def _failure(rows: HistoryRows) -> HistoryFailure | None:
    raw = rows.meta(_FAILURE_KEY)
    if raw is None:
        return None
    try:
        data = json.loads(raw)
        files = data.get("files")
        return HistoryFailure(
            head=str(data["head"]),
            error=str(data["error"]),
            files=None if files is None else int(files),
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        return None  # written by another version: as if nothing were recorded


@dataclass(frozen=True, slots=True)
class HistoryStatus:
    """Where the index's times come from, for `codesift status`."""

    source: str  # "git", or "mtime" (not a git repository, or not updated yet)
    available: bool  # False: git history this clone lacks, see `error`
    error: str | None  # why the history cannot be read
    head: str | None  # the HEAD the history was read (or failed) at
    mtime_files: int  # files dated by modification time because of `error`


def history_status(conn: apsw.Connection) -> HistoryStatus:
    rows = HistoryRows(conn)
    failure = _failure(rows)
    if failure is None:
        head = rows.meta("history_head")
        return HistoryStatus("git" if head else "mtime", True, None, head, 0)
    files = failure.files
    if files is None:
        files = rows.file_count()
    return HistoryStatus("git", False, failure.error, failure.head or None, files)


def _record_failure(rows: HistoryRows, failure: HistoryFailure | None) -> None:
    value = None
    if failure is not None:
        value = json.dumps({"head": failure.head, "error": failure.error, "files": failure.files})
    rows.set_meta(_FAILURE_KEY, value)


def _unreadable_paths(rows: HistoryRows) -> set[str]:
    return set(json.loads(rows.meta(_UNREADABLE_KEY) or "[]"))


def _message(exc: BaseException) -> str:
    """pygit2's KeyErrors print quoted: the message itself."""
    return str(exc.args[0]) if exc.args else type(exc).__name__


def _open_repository(root: Path) -> tuple[pygit2.Repository, str] | None:
    """The repository whose work tree holds `root`, and root's path inside it
    ('' or 'sub/dir/'); None outside git, in a bare repository, before the first
    commit, or when the repository ignores `root`."""
    ceiling = os.environ.get("GIT_CEILING_DIRECTORIES", "")
    try:
        found = pygit2.discover_repository(str(root), False, ceiling)
        if found is None:
            return None
        repo = pygit2.Repository(found)
    except (pygit2.GitError, KeyError, ValueError):
        return None
    if repo.is_bare or repo.head_is_unborn or repo.workdir is None:
        return None
    try:
        rel = root.resolve().relative_to(Path(repo.workdir).resolve())
    except ValueError:
        return None
    prefix = "" if str(rel) == "." else rel.as_posix() + "/"
    if prefix and repo.path_is_ignored(prefix):
        # A folder its enclosing repository ignores is walked, not listed by git
        # (workspace discovery): git knows nothing of its files, so their times
        # are modification times, as outside git.
        return None
    return repo, prefix


def in_git_history(root: Path) -> bool:
    """True when `root` is in a git work tree with commits: its times come from git.
    Otherwise they are file modification times, which the writer sets as it inserts
    rows (so `update_history` has nothing left to do for those files)."""
    return _open_repository(root) is not None


class _LineStore:
    """Per-file line histories, loaded from the index on first use."""

    def __init__(self, rows: HistoryRows) -> None:
        self.rows = rows
        self.cache: dict[str, FileLines | None] = {}
        self.dirty: set[str] = set()

    def get(self, path: str) -> FileLines | None:
        if path not in self.cache:
            encoded = self.rows.file_lines(path)
            self.cache[path] = decode_lines(encoded) if encoded is not None else None
        return self.cache[path]

    def put(self, path: str, lines: FileLines | None) -> None:
        self.cache[path] = lines
        self.dirty.add(path)

    def save(self) -> None:
        for path in sorted(self.dirty):
            lines = self.cache.get(path)
            self.rows.put_file_lines(path, None if lines is None else encode_lines(lines))
        self.dirty.clear()


def _first_parent_chain(
    repo: pygit2.Repository, head: pygit2.Commit, stop: str | None
) -> tuple[list[pygit2.Commit], bool]:
    """Commits from HEAD back to (not including) `stop`, oldest first, and whether
    `stop` was found (False: walk everything from the root)."""
    chain: list[pygit2.Commit] = []
    commit: pygit2.Commit | None = head
    while commit is not None:
        if stop is not None and str(commit.id) == stop:
            chain.reverse()
            return chain, True
        chain.append(commit)
        try:
            commit = commit.parents[0] if commit.parents else None
        except (KeyError, pygit2.GitError):  # a shallow clone's boundary
            commit = None
    chain.reverse()
    return chain, stop is None


class _Unreadable:
    """Paths whose history needs objects this clone lacks, and the first error."""

    def __init__(self, paths: set[str]) -> None:
        self.paths = paths
        self.error: str | None = None

    def add(self, path: str, exc: BaseException) -> None:
        self.paths.add(path)
        if self.error is None:
            self.error = _message(exc)


def _apply_commit(
    repo: pygit2.Repository,
    commit: pygit2.Commit,
    number: int,
    store: _LineStore,
    prefix: str,
    unreadable: _Unreadable | None = None,
) -> set[str]:
    """Apply one commit's diff against its first parent; return the paths it touched.

    A file whose diff cannot be read joins `unreadable` (its line history is
    dropped) and stays there: its later diffs would build on lines we lack."""
    if unreadable is None:
        unreadable = _Unreadable(set())
    touched: set[str] = set()
    try:
        parent = commit.parents[0] if commit.parents else None
    except (KeyError, pygit2.GitError):
        parent = None
    if parent is None:
        diff = commit.tree.diff_to_tree(flags=_DIFF_FLAGS, context_lines=0, swap=True)
    else:
        diff = parent.tree.diff_to_tree(commit.tree, flags=_DIFF_FLAGS, context_lines=0)
    statuses = {delta.status for delta in diff.deltas}
    if _ADDED in statuses and _DELETED in statuses:
        # Similarity needs the blobs: without them renames count as a delete and an add.
        with contextlib.suppress(*_READ_ERRORS):
            diff.find_similar()
    for index, delta in enumerate(diff.deltas):
        old_path, new_path = delta.old_file.path, delta.new_file.path
        if not (old_path.startswith(prefix) or new_path.startswith(prefix)):
            continue
        status = delta.status
        if status == _DELETED:
            store.put(old_path, None)
            touched.add(old_path)
            unreadable.paths.discard(old_path)
            continue
        try:
            if new_path in unreadable.paths or (
                status == _RENAMED and old_path in unreadable.paths
            ):
                raise KeyError("earlier history of the file is missing")
            patch = diff[index]
        except _READ_ERRORS as exc:
            unreadable.add(new_path, exc)
            store.put(new_path, None)
            touched.add(new_path)
            if status == _RENAMED:
                unreadable.paths.discard(old_path)
                store.put(old_path, None)
                touched.add(old_path)
            continue
        if patch is None or delta.is_binary or patch.delta.is_binary:
            store.put(new_path, None)
            touched.add(new_path)
            if status == _RENAMED:
                store.put(old_path, None)
                touched.add(old_path)
            continue
        old_lines = None if status == _ADDED else store.get(old_path)
        if status == _RENAMED:
            store.put(old_path, None)
            touched.add(old_path)
        store.put(new_path, apply_patch(old_lines, patch, number))
        touched.add(new_path)
    return touched


def _walk(
    rows: HistoryRows,
    repo: pygit2.Repository,
    prefix: str,
    stats: HistoryStats,
) -> tuple[_LineStore | None, set[str]]:
    """Walk the commits since the stored HEAD. Returns the line store (None when
    the history cannot be read at all) and the git paths whose history cannot be."""
    started = time.perf_counter()
    failure = _failure(rows)
    try:
        head = repo.head.peel(pygit2.Commit)
    except _READ_ERRORS as exc:
        _walk_failed(rows, stats, "", failure, exc)
        return None, set()
    stats.head = str(head.id)
    stored = rows.meta("history_head")
    stored_prefix = rows.meta("history_prefix")
    if stored_prefix is not None and stored_prefix != prefix:
        stored = None
    store = _LineStore(rows)
    if failure is not None:
        if failure.head == stats.head:  # known, and nothing new to read
            stats.error = failure.error
            return (None if failure.files is None else store), _unreadable_paths(rows)
        stored = None  # HEAD moved: the missing objects may be here now, read it all again
    if stored == stats.head:
        return store, _unreadable_paths(rows)
    unreadable = _Unreadable(set() if stored is None else _unreadable_paths(rows))
    try:
        # A savepoint: a walk that fails leaves the stored history as it was.
        with rows.transaction():
            chain, found = _first_parent_chain(repo, head, stored)
            if not found or stored is None:
                if stored is not None:
                    log.info(
                        "history: %s is no longer on the first-parent chain; rebuilding", stored
                    )
                stats.rebuilt = stored is not None
                rows.forget_history()
                unreadable.paths.clear()
                chain, _ = _first_parent_chain(repo, head, None)
            number = rows.last_commit_number()
            commits = []
            touched: set[str] = set()
            for commit in chain:
                number += 1
                commits.append((number, str(commit.id), int(commit.commit_time), _subject(commit)))
                touched |= _apply_commit(repo, commit, number, store, prefix, unreadable)
            rows.add_commits(commits)
            store.save()
            rows.set_meta("history_head", stats.head)
            rows.set_meta("history_prefix", prefix)
            paths = sorted(p for p in unreadable.paths if p.startswith(prefix))
            rows.set_meta(_UNREADABLE_KEY, json.dumps(paths) if paths else None)
            if unreadable.error is not None and paths:
                stats.error = unreadable.error
                stats.error_is_new = True
                _record_failure(rows, HistoryFailure(stats.head, unreadable.error, len(paths)))
            else:
                _record_failure(rows, None)
    except _READ_ERRORS as exc:
        _walk_failed(rows, stats, stats.head, failure, exc)
        return None, set()
    stats.touched |= touched
    stats.commits = len(chain)
    stats.walk_seconds = time.perf_counter() - started
    return store, unreadable.paths


def _walk_failed(
    rows: HistoryRows,
    stats: HistoryStats,
    head: str,
    failure: HistoryFailure | None,
    exc: BaseException,
) -> None:
    """Record that the history cannot be read at this HEAD ("" when HEAD itself
    cannot be): every stale file is then timed by its modification time, and the
    stored history stays as it was."""
    stats.error = _message(exc)
    stats.error_is_new = failure is None or failure.head != head
    _record_failure(rows, HistoryFailure(head, stats.error, None))


def _subject(commit: pygit2.Commit) -> str:
    try:
        message = commit.message
    except (LookupError, ValueError):
        message = commit.raw_message.decode("utf-8", "replace")
    return message.strip().split("\n", 1)[0][:200]


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


def update_history(conn: apsw.Connection, root: Path) -> HistoryStats:
    """Walk new commits and give every stale file's nodes and chunks their created
    and last-changed times. Runs in one transaction; safe to interrupt."""
    started = time.perf_counter()
    stats = HistoryStats()
    found = _open_repository(root)
    rows = HistoryRows(conn)
    dirty_before = set(json.loads(rows.meta("history_dirty") or "[]"))
    with rows.transaction():
        if found is None:
            stats.source = "mtime"
            had_git = rows.meta("history_head")
            if had_git is not None:  # the folder stopped being a repository
                rows.forget_history()
                rows.set_meta("history_head", None)
            _record_failure(rows, None)
            rows.set_meta(_UNREADABLE_KEY, None)
            stale, _ = _stale_files(rows, set())
            now = time.time()
            for fid, _path, mtime_ns in list(rows.file_stamps(stale)):
                _time_by_mtime(rows, fid, mtime_ns, now)
            stats.files_timed = len(stale)
            rows.set_meta("history_dirty", None)
            stats.seconds = time.perf_counter() - started
            return stats
        repo, prefix = found
        stats.source = "git"
        store, unreadable = _walk(rows, repo, prefix, stats)
        root_touched = {p[len(prefix) :] for p in stats.touched if p.startswith(prefix)}
        stale, indexed_paths = _stale_files(rows, root_touched)
        times = _commit_times(rows)
        head_tree: pygit2.Tree | None = None
        if store is not None:
            try:
                head_tree = repo.head.peel(pygit2.Commit).tree
            except _READ_ERRORS:
                head_tree = None
        dirty_now: list[str] = []
        retimed: set[str] = set()
        now = time.time()
        for fid, path, mtime_ns in list(rows.file_stamps(stale)):
            retimed.add(path)
            git_path = prefix + path
            if store is None or head_tree is None or git_path in unreadable:
                _time_by_mtime(rows, fid, mtime_ns, now)
                continue
            try:
                lines, uncommitted = _working_lines(
                    repo, head_tree, git_path, root / path, store.get(git_path)
                )
            except _READ_ERRORS:
                _time_by_mtime(rows, fid, mtime_ns, now)
                continue
            if uncommitted:
                dirty_now.append(path)
            if lines is None:
                lines = FileLines([], [], [])
            _write_times(rows, fid, partial(_span_times, lines, times))
            rows.mark_timed(fid, now)
        # Dirty files that were not re-timed stay dirty; those that were say it anew.
        dirty = ((dirty_before - retimed) | set(dirty_now)) & indexed_paths
        rows.set_meta("history_dirty", json.dumps(sorted(dirty)) if dirty else None)
        stats.files_timed = len(stale)
        stats.uncommitted_files = len(dirty)
    stats.seconds = time.perf_counter() - started
    return stats
