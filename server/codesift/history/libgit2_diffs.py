"""Commit diffs read with libgit2: the history walk's way when no usable git is
installed, and the one that survives missing objects (a partial or shallow clone)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pygit2

from codesift.history.gitlog import CommitDiff, FileDelta
from codesift.history.lines import patch_of
from codesift.history.state import _DIFF_FLAGS, _READ_ERRORS, _message

__all__ = ["_Unreadable", "_first_parent_chain", "_pygit2_diff", "_pygit2_diffs"]

_ADDED = pygit2.enums.DeltaStatus.ADDED
_DELETED = pygit2.enums.DeltaStatus.DELETED
_RENAMED = pygit2.enums.DeltaStatus.RENAMED
_STATUS_LETTERS = {_ADDED: "A", _DELETED: "D", _RENAMED: "R"}


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
        self.add_message(path, _message(exc))

    def add_message(self, path: str, message: str) -> None:
        self.paths.add(path)
        if self.error is None:
            self.error = message


def _pygit2_diffs(
    repo: pygit2.Repository,
    commits: list[pygit2.Commit],
    unreadable: _Unreadable,
) -> Iterator[CommitDiff]:
    """The commits' zero-context diffs against their first parents, read with
    libgit2: the walk's way when no usable git is installed, and the one that
    survives missing objects (a file whose diff needs one joins `unreadable`)."""
    for commit in commits:
        yield _pygit2_diff(commit, unreadable)


def _pygit2_diff(commit: pygit2.Commit, unreadable: _Unreadable) -> CommitDiff:
    try:
        parent = commit.parents[0] if commit.parents else None
    except (KeyError, pygit2.GitError):  # a shallow clone's boundary
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
    out = CommitDiff(str(commit.id), int(commit.commit_time), _subject(commit))
    for index, delta in enumerate(diff.deltas):
        status = _STATUS_LETTERS.get(delta.status, "M")
        item = FileDelta(status, delta.old_file.path, delta.new_file.path)
        out.deltas.append(item)
        if status == "D":
            continue
        try:
            if item.new_path in unreadable.paths or (
                status == "R" and item.old_path in unreadable.paths
            ):
                raise KeyError("earlier history of the file is missing")
            patch = diff[index]
        except _READ_ERRORS as exc:
            item.unreadable = _message(exc)
            continue
        if patch is None or delta.is_binary or patch.delta.is_binary:
            item.binary = True
            continue
        item.patch = patch_of(patch)
    return out


def _subject(commit: pygit2.Commit) -> str:
    try:
        message = commit.message
    except (LookupError, ValueError):
        message = commit.raw_message.decode("utf-8", "replace")
    return message.strip().split("\n", 1)[0][:200]
