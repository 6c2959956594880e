"""First-parent history read from `git log -p -U0`: the fast way to walk a deep history.

libgit2 (pygit2) diffs trees and blobs in this process, one commit at a time; git
itself does the same work several times faster and, as a child process, on the
other core while this one applies the hunks. `log_diffs` runs

    git log --first-parent --diff-merges=first-parent --reverse -p -U0 -M ...

over a commit range, optionally limited to the indexed folder's path, and yields
one `CommitDiff` per commit that touched it: each file's status, old and new
path, whether it is binary, and its hunks as a `FilePatch`. The walk in
history/update.py falls back to pygit2 when no usable git is installed
(`git_program`), with the same results.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from codesift.history.lines import FilePatch

__all__ = ["CommitDiff", "FileDelta", "GitLogError", "first_parent_ids", "git_program", "log_diffs"]

log = logging.getLogger(__name__)

# --diff-merges=first-parent came with git 2.31.
_MIN_VERSION = (2, 31)
_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_COMMIT_MARK = b"\x00"
# What makes git's output the same whatever the user's configuration says.
_CONFIG = (
    "-c",
    "core.quotePath=false",
    "-c",
    "diff.noprefix=false",
    "-c",
    "diff.mnemonicPrefix=false",
    "-c",
    "diff.renameLimit=1000",
    "-c",
    "log.showSignature=false",
    "-c",
    "diff.algorithm=myers",
)


class GitLogError(RuntimeError):
    """git could not list the history (a missing object, a damaged repository)."""


@dataclass(slots=True)
class FileDelta:
    """One file's change in a commit. status: "A" added, "D" deleted, "M"
    modified, "R" renamed (old_path != new_path)."""

    status: str
    old_path: str
    new_path: str
    binary: bool = False
    patch: FilePatch = field(default_factory=FilePatch)
    # Why the diff could not be read (libgit2 reader: a missing object), or None.
    unreadable: str | None = None


@dataclass(slots=True)
class CommitDiff:
    oid: str
    time: int
    subject: str
    deltas: list[FileDelta] = field(default_factory=list)


_program: tuple[str | None] | None = None


def git_program() -> str | None:
    """The git executable when it is recent enough for `log_diffs`, else None."""
    global _program
    if _program is None:
        found = shutil.which("git")
        usable: str | None = None
        if found is not None:
            try:
                out = subprocess.run(
                    [found, "--version"], capture_output=True, text=True, timeout=10, check=True
                ).stdout
                match = re.search(r"(\d+)\.(\d+)", out)
                if match and (int(match[1]), int(match[2])) >= _MIN_VERSION:
                    usable = found
            except (OSError, subprocess.SubprocessError):
                usable = None
        _program = (usable,)
    return _program[0]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    for key in ("GIT_EXTERNAL_DIFF", "GIT_DIFF_OPTS", "GIT_PAGER", "PAGER"):
        env.pop(key, None)
    env["GIT_NO_LAZY_FETCH"] = "1"  # never fetch a partial clone's objects (git >= 2.44)
    env["GIT_TERMINAL_PROMPT"] = "0"
    env["LC_ALL"] = "C"
    return env


def first_parent_ids(git: str, workdir: Path, head: str) -> list[str]:
    """The first-parent chain from `head` back to the root, newest first."""
    try:
        result = subprocess.run(
            [git, *_CONFIG, "rev-list", "--first-parent", head],
            cwd=workdir,
            capture_output=True,
            env=_env(),
            check=False,
        )
    except OSError as exc:
        raise GitLogError(str(exc)) from exc
    if result.returncode != 0:
        message = os.fsdecode(result.stderr).strip().splitlines()
        raise GitLogError(
            message[-1] if message else f"git rev-list exited with {result.returncode}"
        )
    return result.stdout.decode("ascii").split()


def _unquote(raw: bytes) -> str:
    """A path as git prints it: C-quoted ("a\\tb", octal escapes) when it holds
    special characters, else as is."""
    if not raw.startswith(b'"') or not raw.endswith(b'"'):
        return os.fsdecode(raw)
    body = raw[1:-1]
    out = bytearray()
    i = 0
    simple = {ord("n"): 10, ord("t"): 9, ord("r"): 13, ord("a"): 7, ord("b"): 8, ord("f"): 12}
    simple |= {ord("v"): 11, ord('"'): 34, ord("\\"): 92}
    while i < len(body):
        c = body[i]
        if c == 92 and i + 1 < len(body):  # backslash
            nxt = body[i + 1]
            if 48 <= nxt <= 55 and i + 3 < len(body):
                out.append(int(body[i + 1 : i + 4], 8) & 0xFF)
                i += 4
                continue
            out.append(simple.get(nxt, nxt))
            i += 2
            continue
        out.append(c)
        i += 1
    return os.fsdecode(bytes(out))


def _header_path(rest: bytes) -> str | None:
    """The path of a `--- a/x` / `+++ b/x` line (None for /dev/null)."""
    rest = rest.rstrip(b"\n").rstrip(b"\r")
    if rest.endswith(b"\t"):  # git adds a tab after names with spaces
        rest = rest[:-1]
    if rest == b"/dev/null":
        return None
    path = _unquote(rest)
    return path[2:] if path[:2] in ("a/", "b/") else path


def _diff_git_paths(line: bytes) -> tuple[str, str]:
    """Old and new path from `diff --git a/X b/Y`: exact when both are the same
    (a mode change), a guess otherwise, which the ---/+++ and rename lines that
    follow correct."""
    rest = line[len(b"diff --git ") :].rstrip(b"\n")
    if rest.startswith(b'"'):
        end = 1
        while True:
            end = rest.index(b'"', end)
            if rest[end - 1 : end] != b"\\":
                break
            end += 1
        old = _unquote(rest[: end + 1])[2:]
        return old, _unquote(rest[end + 2 :])[2:]
    size = (len(rest) - 5) // 2
    if size > 0 and rest[2 + size : 5 + size] == b" b/" and rest[2 : 2 + size] == rest[5 + size :]:
        same = os.fsdecode(rest[2 : 2 + size])
        return same, same
    old_raw, _, new_raw = rest.partition(b" b/")
    return os.fsdecode(old_raw[2:]), _unquote(new_raw)


def log_diffs(
    git: str,
    workdir: Path,
    revisions: list[str],
    prefix: str = "",
) -> Iterator[CommitDiff]:
    """Each first-parent commit of `revisions` (e.g. ["HEAD"], or ["new", "^old"])
    oldest first, with its zero-context diff against its first parent, limited to
    `prefix` (a folder path ending in "/", or "" for the whole repository).
    Raises GitLogError when git fails (a missing object: a shallow or partial
    clone)."""
    args = [
        git,
        *_CONFIG,
        "log",
        "--first-parent",
        "--diff-merges=first-parent",
        "--reverse",
        "--root",
        "-p",
        "-U0",
        "-M",
        "--indent-heuristic",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--full-history",
        "--format=%x00%H %ct %s",
        *revisions,
        "--",
    ]
    if prefix:
        args.append(":(top,literal)" + prefix.rstrip("/"))
    proc = subprocess.Popen(
        args,
        cwd=workdir,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(),
    )
    assert proc.stdout is not None and proc.stderr is not None
    finished = False
    try:
        yield from _parse(proc.stdout)
        finished = True
    finally:
        if not finished:  # the caller stopped early (cancelled): stop git too
            with contextlib.suppress(OSError):
                proc.kill()
        proc.stdout.close()
        err = proc.stderr.read()
        proc.stderr.close()
        code = proc.wait()
    if finished and code != 0:
        message = os.fsdecode(err).strip().splitlines()
        raise GitLogError(message[-1] if message else f"git log exited with {code}")


def _parse(stream: Iterator[bytes]) -> Iterator[CommitDiff]:
    commit: CommitDiff | None = None
    delta: FileDelta | None = None
    # Lines of the current hunk still to come: a +/- line is content only then
    # (an added line "++ x" would otherwise read as a +++ header).
    old_left = new_left = 0
    old_no = new_no = 0
    deleted: list[tuple[int, bytes]] = []
    added: list[tuple[int, bytes]] = []
    for line in stream:
        first = line[:1]
        if first == b"-" and old_left:
            deleted.append((old_no, line[1:].strip()))
            old_no += 1
            old_left -= 1
            continue
        if first == b"+" and new_left:
            added.append((new_no, line[1:].strip()))
            new_no += 1
            new_left -= 1
            continue
        if first == b"\\":  # "\ No newline at end of file"
            continue
        old_left = new_left = 0
        if first == b"@":
            match = _HUNK.match(line)
            if match is not None and delta is not None:
                old_start, old_left = int(match[1]), int(match[2] or 1)
                new_start, new_left = int(match[3]), int(match[4] or 1)
                delta.patch.hunks.append((old_start, old_left, new_start, new_left))
                old_no, new_no = old_start - 1, new_start - 1
                continue
        elif first == _COMMIT_MARK:
            if commit is not None:
                yield commit
            commit = _commit_of(line)
            delta = None
            continue
        if commit is None:
            continue
        if line.startswith(b"diff --git "):
            old_path, new_path = _diff_git_paths(line)
            deleted, added = [], []
            delta = FileDelta("M", old_path, new_path, patch=FilePatch([], deleted, added))
            commit.deltas.append(delta)
        elif delta is not None:
            _read_header_line(delta, line)
    if commit is not None:
        yield commit


def _commit_of(line: bytes) -> CommitDiff:
    """The commit a `--format=%x00%H %ct %s` line starts."""
    head, _, subject = line[1:].rstrip(b"\n").partition(b" ")
    when, _, subject = subject.partition(b" ")
    return CommitDiff(head.decode("ascii"), int(when), subject.decode("utf-8", "replace"))


def _old_header(delta: FileDelta, rest: bytes) -> None:
    path = _header_path(rest)
    if path is None:
        delta.status = "A"
    else:
        delta.old_path = path


def _new_header(delta: FileDelta, rest: bytes) -> None:
    path = _header_path(rest)
    if path is None:
        delta.status = "D"
    else:
        delta.new_path = path


def _new_file(delta: FileDelta, _rest: bytes) -> None:
    delta.status = "A"


def _deleted_file(delta: FileDelta, _rest: bytes) -> None:
    delta.status = "D"


def _renamed_from(delta: FileDelta, rest: bytes) -> None:
    delta.status = "R"
    delta.old_path = _unquote(rest.rstrip(b"\n"))


def _renamed_to(delta: FileDelta, rest: bytes) -> None:
    delta.status = "R"
    delta.new_path = _unquote(rest.rstrip(b"\n"))


def _copied_to(delta: FileDelta, rest: bytes) -> None:
    delta.status = "A"
    delta.new_path = _unquote(rest.rstrip(b"\n"))


def _binary(delta: FileDelta, _rest: bytes) -> None:
    delta.binary = True


# The extended header lines of a file's diff that say something about it, by
# their start (the first that matches reads the rest of the line).
_HEADER_READERS: tuple[tuple[bytes, Callable[[FileDelta, bytes], None]], ...] = (
    (b"--- ", _old_header),
    (b"+++ ", _new_header),
    (b"new file mode", _new_file),
    (b"deleted file mode", _deleted_file),
    (b"rename from ", _renamed_from),
    (b"rename to ", _renamed_to),
    (b"copy to ", _copied_to),
    (b"Binary files ", _binary),
    (b"GIT binary patch", _binary),
)


def _read_header_line(delta: FileDelta, line: bytes) -> None:
    """What a line of a file's diff header (before its first hunk) says of it."""
    for start, read in _HEADER_READERS:
        if line.startswith(start):
            read(delta, line[len(start) :])
            return
