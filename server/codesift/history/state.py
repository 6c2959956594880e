"""What the index's git history holds and what is left of its pass: the stats and
progress of an update, a recorded failure, the pending work (commits to walk,
files to time) and the status `codesift status` shows; which repository holds a
folder. history/update.py runs the pass; history/timing.py times the files.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path

import apsw
import pygit2

from codesift.store.history import HistoryRows

__all__ = [
    "HistoryFailure",
    "HistoryPending",
    "HistoryProgress",
    "HistoryProgressCallback",
    "HistoryStats",
    "HistoryStatus",
    "history_failure",
    "history_pending",
    "history_status",
    "in_git_history",
]

# git diff (and so git blame) slides hunks by indentation since git 2.14; libgit2
# does so only when asked. Without it about 0.1% of lines blame another commit.
_DIFF_FLAGS = pygit2.enums.DiffOption.INDENT_HEURISTIC


@dataclass(frozen=True, slots=True)
class HistoryProgress:
    """How far an update is: phase "walking" (commits walked of those to walk) or
    "timing" (files timed of those to time)."""

    phase: str
    done: int
    total: int


HistoryProgressCallback = Callable[[HistoryProgress], None]
# The caller's turn to write one step (its write lock): yields False to stop.
_Step = Callable[[], AbstractContextManager[bool]]


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
    # False: cancelled or stopped half-way; what was done is saved and the next
    # update goes on from there.
    complete: bool = True


@dataclass(frozen=True, slots=True)
class HistoryFailure:
    """Git history this index could not read, recorded at HEAD `head`."""

    head: str
    error: str  # git's message, e.g. "object not found - ..."
    files: int | None  # files timed by modification time instead; None: every file


_FAILURE_KEY = "history_error"
_UNREADABLE_KEY = "history_unreadable"
# Files that walked commits touched, to be timed again (kept across a walk that stops).
_RETIME_KEY = "history_retime"
# {"done": commits walked, "total": commits to walk} while a walk is unfinished.
_WALK_KEY = "history_walk"
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
class HistoryPending:
    """What the history pass still has to do: commits to walk (`commits_done` of
    `commits_total` in the walk under way, 0 of N before it starts) and files to
    time. Nothing pending: search results carry git times and time filters see
    every file."""

    commits_done: int = 0
    commits_total: int = 0
    files: int = 0

    @property
    def pending(self) -> bool:
        return self.commits_done < self.commits_total or self.files > 0

    def as_json(self) -> dict[str, int | bool]:
        return {
            "pending": self.pending,
            "commits_done": self.commits_done,
            "commits_total": self.commits_total,
            "files": self.files,
        }


def history_pending(conn: apsw.Connection, root: Path) -> HistoryPending:
    """What is left of the history pass for the index on `conn` of the folder
    `root` (cheap: git counts the commits, SQLite the files)."""
    rows = HistoryRows(conn)
    files = rows.untimed_count() + len(_retime_paths(rows))
    found = _open_repository(root)
    if found is None:
        return HistoryPending(files=files)
    repo, prefix = found
    try:
        head = str(repo.head.peel(pygit2.Commit).id)
    except _READ_ERRORS:
        return HistoryPending(files=files)
    stored = rows.meta("history_head")
    if rows.meta("history_prefix") not in (None, prefix):
        stored = None
    failure = _failure(rows)
    if stored == head or (failure is not None and failure.head == head):
        return HistoryPending(files=files)
    walk = rows.meta(_WALK_KEY)
    if walk is not None:
        with contextlib.suppress(ValueError, KeyError, TypeError):
            data = json.loads(walk)
            done, total = int(data["done"]), int(data["total"])
            return HistoryPending(done, max(total, done + 1), files)
    return HistoryPending(0, max(1, _commits_between(repo, head, stored)), files)


def _commits_between(repo: pygit2.Repository, head: str, stored: str | None) -> int:
    """First-parent commits from `head` back to `stored` (all of them without)."""
    # The walk's module (and numpy, which its line tables use) is not needed by an
    # index run that only asks whether the root is in git.
    from codesift.history.gitlog import git_program

    git = git_program()
    if git is not None and repo.workdir and not _partial_clone(repo):
        revisions = [head] if stored is None else [head, "^" + stored]
        with contextlib.suppress(OSError, subprocess.SubprocessError, ValueError):
            out = subprocess.run(
                [git, "rev-list", "--first-parent", "--count", *revisions],
                cwd=repo.workdir,
                capture_output=True,
                check=True,
                timeout=60,
            ).stdout
            return int(out.strip() or 0)
    commit = repo.get(head)
    count = 0
    while isinstance(commit, pygit2.Commit) and str(commit.id) != stored:
        count += 1
        try:
            commit = commit.parents[0] if commit.parents else None
        except _READ_ERRORS:
            break
    return count


@dataclass(frozen=True, slots=True)
class HistoryStatus:
    """Where the index's times come from, for `codesift status`."""

    source: str  # "git", or "mtime" (not a git repository, or not updated yet)
    available: bool  # False: git history this clone lacks, see `error`
    error: str | None  # why the history cannot be read
    head: str | None  # the HEAD the history was read (or failed) at
    mtime_files: int  # files dated by modification time because of `error`
    # What the history pass still has to do (read when the folder is known): is
    # anything left, commits walked of those to walk, files to time.
    pending: bool = False
    commits_done: int = 0
    commits_total: int = 0
    files_pending: int = 0


def history_status(conn: apsw.Connection, root: Path | None = None) -> HistoryStatus:
    rows = HistoryRows(conn)
    failure = _failure(rows)
    left = history_pending(conn, root) if root is not None else HistoryPending()
    pending = (left.pending, left.commits_done, left.commits_total, left.files)
    if failure is None:
        head = rows.meta("history_head")
        in_git = head is not None or (root is not None and _open_repository(root) is not None)
        return HistoryStatus("git" if in_git else "mtime", True, None, head, 0, *pending)
    files = failure.files
    if files is None:
        files = rows.file_count()
    return HistoryStatus("git", False, failure.error, failure.head or None, files, *pending)


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


def _partial_clone(repo: pygit2.Repository) -> bool:
    """Whether objects may be missing on purpose (`git clone --filter`): git would
    fetch them from the remote as the walk needs them; libgit2 reads what is here."""
    try:
        return "extensions.partialclone" in repo.config
    except (pygit2.GitError, KeyError, ValueError):
        return True


def _retime_paths(rows: HistoryRows) -> set[str]:
    """Files (relative to the root) that walked commits touched and that are not
    timed again yet: kept across a walk that stops half-way."""
    return set(json.loads(rows.meta(_RETIME_KEY) or "[]"))
