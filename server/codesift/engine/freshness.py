"""Whether an index is up to date, answered without the indexer.

A one-shot command (`codesift search`) brings the index up to date before it
reads. Most of the time nothing changed, and the indexer (its parsers, pygit2,
its worker pool) would load only to find that out. `index_is_current` checks
what the indexer's plan and its git-history update would find, with the
standard library and the store alone:

- the listing `discover_files` would make (`discover_stamps_listed`: the same walk or
  `git ls-files`, the same filters) holds exactly the files the index holds (or
  skipped when last read), each with the size and modification time it had then;
- no index run was left unfinished, and the files were parsed by this version
  of parsing (parsing/model.py, EXTRACTION_VERSION);
- the git history is up to date: the index was timed at the HEAD the work tree
  has now (read from the repository's files: HEAD, its ref, packed-refs), no
  history failure is recorded and every file was timed after it was indexed;
  outside git, no file waits to be timed. A folder its enclosing repository
  ignores counts as outside git, as it does for the indexer (walked, timed by
  modification times), while the history says so (no HEAD recorded).

Anything it cannot tell for certain (a reftable repository, a HEAD it cannot
read, a recorded history failure) answers False: the indexer then runs, as it
always did, and decides.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

import apsw

from codesift.config import IndexSettings
from codesift.store.history import HistoryRows
from codesift.store.indexed_files import (
    extraction_is,
    indexed_files,
    run_in_progress,
    skipped_files,
)
from codesift.workspace import discover_stamps_listed

__all__ = [
    "HISTORY_META_KEYS",
    "Freshness",
    "freshness",
    "git_head",
    "index_is_current",
]

# The meta values history/update.py keeps (a test compares them with its own).
HISTORY_HEAD_KEY = "history_head"
HISTORY_PREFIX_KEY = "history_prefix"
HISTORY_FAILURE_KEY = "history_error"
HISTORY_UNREADABLE_KEY = "history_unreadable"
HISTORY_DIRTY_KEY = "history_dirty"
HISTORY_META_KEYS = (
    HISTORY_HEAD_KEY,
    HISTORY_PREFIX_KEY,
    HISTORY_FAILURE_KEY,
    HISTORY_UNREADABLE_KEY,
    HISTORY_DIRTY_KEY,
)

_OBJECT_ID = re.compile(r"[0-9a-f]{40}([0-9a-f]{24})?")
_MAX_SYMREF_DEPTH = 5


def index_is_current(root: Path, settings: IndexSettings, conn: apsw.Connection) -> bool:
    """True when an index run on `conn` would find nothing to do and its git
    history is complete (see the module doc); False when either has work, or
    when that cannot be told without them."""
    current, by_git = _files_current(root, settings, conn)
    return current and _history_is_current(root, HistoryRows(conn), walked=not by_git)


@dataclass(frozen=True, slots=True)
class Freshness:
    """files: an index run would find no file to read again; history: the git
    history pass would find nothing to do."""

    files: bool
    history: bool


def freshness(root: Path, settings: IndexSettings, conn: apsw.Connection) -> Freshness:
    """What an index run and a history pass would find to do (see the module doc);
    history is only looked at when the files are current (False otherwise)."""
    current, by_git = _files_current(root, settings, conn)
    if not current:
        return Freshness(False, False)
    return Freshness(True, _history_is_current(root, HistoryRows(conn), walked=not by_git))


def _files_current(root: Path, settings: IndexSettings, conn: apsw.Connection) -> tuple[bool, bool]:
    """Whether the files are current, and whether git listed them."""
    # Read without the writer (its modules cost a one-shot read ~12 ms of CPU).
    from codesift.parsing.model import EXTRACTION_VERSION

    if run_in_progress(conn) or not extraction_is(conn, EXTRACTION_VERSION):
        return False, False
    listed, by_git = discover_stamps_listed(root, settings)
    known = indexed_files(conn)
    skipped = skipped_files(conn)
    if len(listed) != len(known) + len(skipped):
        return False, by_git
    for path, stamp in listed.items():
        if known.get(path) != stamp:
            was_skipped = skipped.get(path)
            if was_skipped is None or was_skipped[:2] != stamp:
                return False, by_git
    return True, by_git


def _history_is_current(root: Path, rows: HistoryRows, *, walked: bool) -> bool:
    if rows.meta(HISTORY_FAILURE_KEY) is not None:
        return False
    for timing in rows.timing_states():
        if timing.history_at is None or float(timing.history_at) < float(timing.indexed_at):
            return False
    real_root = os.path.realpath(root)
    work_tree = _work_tree_of(real_root)
    # Walked although a work tree is above it (its repository ignores it) and timed
    # outside git by the history (no HEAD recorded): it is outside git for both.
    if work_tree is None or (walked and rows.meta(HISTORY_HEAD_KEY) is None):
        # outside git: files are timed by their modification time
        return all(
            rows.meta(key) is None
            for key in (HISTORY_HEAD_KEY, HISTORY_UNREADABLE_KEY, HISTORY_DIRTY_KEY)
        )
    head = git_head(work_tree)
    if head is None or rows.meta(HISTORY_HEAD_KEY) != head:
        return False
    rel = os.path.relpath(real_root, work_tree)
    prefix = "" if rel == "." else Path(rel).as_posix() + "/"
    return rows.meta(HISTORY_PREFIX_KEY) in (None, prefix)


def _work_tree_of(folder: str) -> str | None:
    """The nearest folder at or above `folder` holding a `.git` (folder or file)."""
    while True:
        if os.path.lexists(os.path.join(folder, ".git")):
            return folder
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def git_head(work_tree: str) -> str | None:
    """The commit id HEAD names in the work tree `work_tree` (the folder holding
    `.git`), read from the repository's files; None when there is none yet or it
    cannot be read this way (a reftable repository, a damaged file)."""
    try:
        git_dir = _git_dir(work_tree)
        if git_dir is None or os.path.exists(os.path.join(git_dir, "reftable")):
            return None
        common = git_dir
        commondir = os.path.join(git_dir, "commondir")
        if os.path.isfile(commondir):  # a linked work tree: refs live in the main one
            with open(commondir, encoding="utf-8") as file:
                common = os.path.normpath(os.path.join(git_dir, file.read().strip()))
        with open(os.path.join(git_dir, "HEAD"), encoding="utf-8") as file:
            value = file.read().strip()
        for _ in range(_MAX_SYMREF_DEPTH):
            if not value.startswith("ref:"):
                return value if _OBJECT_ID.fullmatch(value) else None
            target = _read_ref(value[4:].strip(), git_dir, common)
            if target is None:
                return None
            value = target
    except (OSError, UnicodeDecodeError):
        return None
    return None


def _git_dir(work_tree: str) -> str | None:
    dot_git = os.path.join(work_tree, ".git")
    if os.path.isdir(dot_git):
        return dot_git
    with open(dot_git, encoding="utf-8") as file:  # a submodule or linked work tree
        line = file.readline().strip()
    if not line.startswith("gitdir:"):
        return None
    return os.path.normpath(os.path.join(work_tree, line[len("gitdir:") :].strip()))


def _read_ref(name: str, git_dir: str, common: str) -> str | None:
    """The value of ref `name` (an object id, or `ref: ...` for a symbolic ref)."""
    if not name.startswith("refs/") and name != "HEAD":
        return None
    for folder in (git_dir, common) if name.startswith("refs/worktree/") else (common, git_dir):
        try:
            with open(os.path.join(folder, name), encoding="utf-8") as file:
                return file.read().strip()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            continue
    try:
        with open(os.path.join(common, "packed-refs"), encoding="utf-8") as file:
            for line in file:
                if line.startswith(("#", "^")):
                    continue
                object_id, _, ref = line.strip().partition(" ")
                if ref == name:
                    return object_id
    except FileNotFoundError:
        return None
    return None
