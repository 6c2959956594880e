"""Per-line history of one file: applying zero-context diffs, moves, deletion
marks, the compact encoding, and agreement with `git blame`."""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

import numpy as np
import pygit2
import pytest

from codesift.history.libgit2_diffs import _first_parent_chain, _pygit2_diff, _Unreadable
from codesift.history.lines import (
    UNCOMMITTED,
    FileLines,
    LineStore,
    apply_patch,
    decode_lines,
    encode_lines,
    span_times,
)
from codesift.history.update import _apply_commit


def patch(old: str, new: str) -> pygit2.Patch:
    return pygit2.Patch.create_from(old.encode(), new.encode(), context_lines=0)


def test_changed_and_inserted_lines_take_the_commit() -> None:
    v1 = "a\nb\nc\nd\n"
    lines = apply_patch(None, patch("", v1), 1)
    assert lines.last == [1, 1, 1, 1]
    lines = apply_patch(lines, patch(v1, "a\nB\nc\nd\ne\n"), 2)
    assert lines.last == [1, 2, 1, 1, 2]
    assert lines.born == [1, 2, 1, 1, 2]
    assert lines.gone == [0] * 5


def test_deleted_lines_mark_the_line_before() -> None:
    v1 = "a\nb\nc\nd\n"
    lines = apply_patch(None, patch("", v1), 1)
    lines = apply_patch(lines, patch(v1, "a\nd\n"), 3)
    assert lines.last == [1, 1]
    assert lines.gone == [3, 0]
    # deleting the first line leaves no line before it to mark
    lines = apply_patch(lines, patch("a\nd\n", "d\n"), 4)
    assert lines.gone == [0]


def test_moved_block_keeps_its_birth_but_counts_as_changed() -> None:
    block = "def moved(x):\n    total = x.sum()\n    return total\n"
    other = "def other():\n    return 42\n"
    v1 = block + other
    v2 = other + "\n" + block.replace("    ", "        ")  # moved down and re-indented
    lines = apply_patch(None, patch("", v1), 1)
    lines = apply_patch(lines, patch(v1, v2), 2)
    moved = slice(3, 6)
    assert lines.last[moved] == [2, 2, 2]
    assert lines.born[moved] == [1, 1, 1]


def test_a_coincidental_single_line_is_not_a_move() -> None:
    v1 = "x = compute_the_total(a)\nkeep\n"
    v2 = "keep\nnew_function()\nx = compute_the_total(a)\n"
    lines = apply_patch(None, patch("", v1), 1)
    lines = apply_patch(lines, patch(v1, v2), 2)
    assert lines.born == [1, 2, 2]


def test_encoding_round_trips_and_is_compact() -> None:
    rng = random.Random(3)
    last = [rng.choice([1, 1, 1, 7, 9]) for _ in range(5000)]
    last.sort()
    lines = FileLines(last, sorted(last), [0] * 4999 + [9])
    blob = encode_lines(lines)
    assert decode_lines(blob) == lines
    assert len(blob) < 100
    assert decode_lines(encode_lines(FileLines([], [], []))) == FileLines([], [], [])


def test_span_times() -> None:
    times = np.array([0, 100, 200, 300, 999], dtype=np.int64)  # last: UNCOMMITTED
    lines = FileLines([1, 2, 1, 1], [1, 2, 1, 1], [0, 3, 0, 0])
    created, created_commit, changed, changed_commit = span_times(lines, times, [(1, 4)])[0]
    assert (created, created_commit) == (100, 1)
    assert (changed, changed_commit) == (300, 3)  # a deletion after line 2
    # a deletion after the span's last line is outside it
    assert span_times(lines, times, [(1, 2)])[0][2] == 200
    new_header = FileLines([3, 1, 1], [3, 1, 1], [0, 0, 0])
    assert span_times(new_header, times, [(1, 3)])[0][0] == 100  # most lines are old
    mostly_new = FileLines([3, 3, 1], [3, 3, 1], [0, 0, 0])
    assert span_times(mostly_new, times, [(1, 3)])[0][0] == 300
    dirty = FileLines([1, UNCOMMITTED], [1, UNCOMMITTED], [0, 0])
    assert span_times(dirty, times, [(1, 2)])[0][2:] == (999, UNCOMMITTED)


def _git(root: Path, *args: str, when: int | None = None) -> str:
    env = dict(os.environ)
    if when is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"@{when} +0000"
    return subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True, env=env
    ).stdout


@pytest.mark.usefixtures("git_isolation")
def test_last_change_of_every_line_equals_git_blame(make_repo: object) -> None:
    root: Path = make_repo({}, commit=False)  # type: ignore[operator]
    rng = random.Random(11)
    files: dict[str, list[str]] = {}
    for step in range(40):
        for _ in range(rng.randint(1, 3)):
            name = f"f{rng.randrange(6)}.txt"
            body = files.setdefault(name, [])
            for _ in range(rng.randint(1, 6)):
                op = rng.random()
                at = rng.randint(0, len(body))
                if op < 0.5 or not body:
                    body[at:at] = [f"line {step} {rng.randrange(1000)}"] * rng.randint(1, 3)
                elif op < 0.8:
                    body[min(at, len(body) - 1)] = f"edit {step} {rng.randrange(1000)}"
                else:
                    del body[min(at, len(body) - 1) : min(at, len(body) - 1) + rng.randint(1, 3)]
            (root / name).write_text("".join(f"{line}\n" for line in body))
        if step == 25 and "f0.txt" in files:
            _git(root, "add", "-A")
            _git(root, "mv", "f0.txt", "renamed.txt")
            files["renamed.txt"] = files.pop("f0.txt")
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "--allow-empty", "-m", f"step {step}", when=1_700_000_000 + step)
    repo = pygit2.Repository(str(root))
    chain, _ = _first_parent_chain(repo, repo.head.peel(pygit2.Commit), None)
    store = LineStore(None)  # type: ignore[arg-type]
    store.cache = {}
    store.get = lambda path: store.cache.get(path)  # type: ignore[method-assign]
    oid_of: dict[int, str] = {}
    for number, commit in enumerate(chain, start=1):
        oid_of[number] = str(commit.id)
        _apply_commit(_pygit2_diff(commit, _Unreadable(set())), number, store, "")
    for name in files:
        blamed = [
            line.split()[0]
            for line in _git(root, "blame", "--porcelain", "-M0", name).splitlines()
            if len(line.split()) >= 3 and len(line.split()[0]) == 40 and line.split()[1].isdigit()
        ]
        lines = store.cache[name]
        assert lines is not None
        assert [oid_of[n] for n in lines.last] == blamed, name
