"""Line-level history of one file, updated one diff at a time.

For every line of a file three commit numbers are kept (numbers index the
commits table, in walk order; 0 means none, UNCOMMITTED a working-tree edit):

last  the commit that last changed the line: what `git blame` reports
born  the commit whose version of the file first had the line's text, following
      lines that moved or were re-indented within the file in one commit
      (blocks of at least MOVE_MIN_LINES lines and MOVE_MIN_CHARS bytes)
gone  the newest commit that deleted lines right after this line, so a node
      whose lines were only deleted still counts as changed (blame cannot see it)

Patches are applied with no context lines: each hunk replaces `old_lines`
lines at `old_start` by `new_lines` new ones.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

if TYPE_CHECKING:
    from codesift.store.history import HistoryRows

__all__ = [
    "MOVE_MIN_CHARS",
    "MOVE_MIN_LINES",
    "UNCOMMITTED",
    "FileLines",
    "FilePatch",
    "LineStore",
    "apply_patch",
    "decode_lines",
    "encode_lines",
    "patch_of",
]

UNCOMMITTED = -1
MOVE_MIN_LINES = 2
MOVE_MIN_CHARS = 20


@dataclass(slots=True)
class FileLines:
    last: list[int]
    born: list[int]
    gone: list[int]

    @classmethod
    def new(cls, count: int, commit: int) -> FileLines:
        return cls([commit] * count, [commit] * count, [0] * count)

    def __len__(self) -> int:
        return len(self.last)


@dataclass(slots=True)
class FilePatch:
    """A zero-context diff of one file, as `apply_patch` needs it: each hunk's
    (old_start, old_lines, new_start, new_lines), and the deleted and added lines
    as (0-based line index, bytes without surrounding ASCII whitespace) for
    following moved lines (never decoded: only compared). Made from `git log -p`
    output (history/gitlog.py) or from a pygit2 Patch (`patch_of`)."""

    hunks: list[tuple[int, int, int, int]] = field(default_factory=list)
    deleted: list[tuple[int, bytes]] = field(default_factory=list)
    added: list[tuple[int, bytes]] = field(default_factory=list)


def patch_of(patch: Any) -> FilePatch:
    """A pygit2 Patch as a FilePatch."""
    out = FilePatch()
    for hunk in patch.hunks:
        out.hunks.append((hunk.old_start, hunk.old_lines, hunk.new_start, hunk.new_lines))
        for line in hunk.lines:
            if line.origin == "-":
                out.deleted.append((line.old_lineno - 1, line.raw_content.strip()))
            elif line.origin == "+":
                out.added.append((line.new_lineno - 1, line.raw_content.strip()))
    return out


def _moves(patch: FilePatch) -> list[tuple[int, int]]:
    """(new index, old index) of added lines that are deleted lines moved within the
    file (compared without surrounding whitespace), in blocks long enough not to
    be a coincidence."""
    deleted, added = patch.deleted, patch.added
    if not deleted or not added:
        return []
    where: dict[bytes, list[int]] = {}
    for i, (_, text) in enumerate(deleted):
        if text:
            where.setdefault(text, []).append(i)
    used = [False] * len(deleted)
    out: list[tuple[int, int]] = []
    j = 0
    while j < len(added):
        best_len, best_at = 0, -1
        for i in where.get(added[j][1], ()):
            if used[i]:
                continue
            length = 0
            while (
                j + length < len(added)
                and i + length < len(deleted)
                and not used[i + length]
                and added[j + length][1] == deleted[i + length][1]
                and added[j + length][0] == added[j][0] + length
                and deleted[i + length][0] == deleted[i][0] + length
            ):
                length += 1
            if length > best_len:
                best_len, best_at = length, i
        chars = sum(len(added[j + k][1]) for k in range(best_len))
        if best_len >= MOVE_MIN_LINES and chars >= MOVE_MIN_CHARS:
            for k in range(best_len):
                used[best_at + k] = True
                out.append((added[j + k][0], deleted[best_at + k][0]))
            j += best_len
        else:
            j += 1
    return out


def apply_patch(
    old: FileLines | None, patch: FilePatch | Any, commit: int, *, follow_moves: bool = True
) -> FileLines:
    """The file's lines after a zero-context `patch` (a FilePatch, or a pygit2
    Patch) made by `commit`."""
    if not isinstance(patch, FilePatch):
        patch = patch_of(patch)
    hunks = patch.hunks
    if old is None or not len(old):
        count = sum(h[3] for h in hunks)
        return FileLines.new(count, commit)
    last, born, gone = old.last, old.born, old.gone
    new_last: list[int] = []
    new_born: list[int] = []
    new_gone: list[int] = []
    pos = 0
    deletions = additions = False
    for old_start, old_lines, _new_start, new_lines in hunks:
        start = old_start - 1 if old_lines else old_start
        new_last += last[pos:start]
        new_born += born[pos:start]
        new_gone += gone[pos:start]
        if old_lines:
            deletions = True
            if not new_lines and new_gone:
                new_gone[-1] = commit  # lines were deleted right after this one
        if new_lines:
            additions = True
            new_last += [commit] * new_lines
            new_born += [commit] * new_lines
            new_gone += [0] * new_lines
        pos = start + old_lines
    new_last += last[pos:]
    new_born += born[pos:]
    new_gone += gone[pos:]
    if follow_moves and deletions and additions:
        for new_index, old_index in _moves(patch):
            if new_index < len(new_born) and old_index < len(born):
                new_born[new_index] = born[old_index]
    return FileLines(new_last, new_born, new_gone)


def _runs(values: Sequence[int]) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint32]]:
    arr = np.asarray(values, dtype=np.int64)
    if not len(arr):
        return np.zeros(0, np.uint32), np.zeros(0, np.uint32)
    starts = np.flatnonzero(np.concatenate(([True], arr[1:] != arr[:-1])))
    lengths = np.diff(np.append(starts, len(arr)))
    return arr[starts].astype(np.uint32), lengths.astype(np.uint32)


def encode_lines(lines: FileLines) -> bytes:
    """Run-length encoded arrays, zlib-compressed: a few bytes per run of lines
    that share a commit. UNCOMMITTED is never persisted."""
    parts: list[bytes] = []
    header: list[int] = []
    for values in (lines.last, lines.born, lines.gone):
        run_values, run_lengths = _runs(values)
        header.append(len(run_values))
        parts.append(run_values.astype("<u4").tobytes())
        parts.append(run_lengths.astype("<u4").tobytes())
    return zlib.compress(struct.pack("<3I", *header) + b"".join(parts), 6)


def decode_lines(blob: bytes) -> FileLines:
    raw = zlib.decompress(blob)
    counts = struct.unpack_from("<3I", raw)
    offset = 12
    arrays: list[list[int]] = []
    for count in counts:
        values = np.frombuffer(raw, "<u4", count, offset)
        offset += 4 * count
        lengths = np.frombuffer(raw, "<u4", count, offset)
        offset += 4 * count
        arrays.append(np.repeat(values.astype(np.int64), lengths).tolist())
    return FileLines(arrays[0], arrays[1], arrays[2])


def span_times(
    lines: FileLines,
    times: npt.NDArray[np.int64],
    spans: Iterable[tuple[int, int]],
) -> list[tuple[int, int, int, int]]:
    """For each 1-based inclusive line span: (created time, created commit, changed
    time, changed commit). `times` maps a commit number to its time; its last
    element is the time of UNCOMMITTED.

    changed  the newest `last` over the span's lines, or a deletion between them
    created  when the span's first line (a definition's header, a section's
             heading) appeared, or when half of its lines existed, whichever is
             earlier. Not the oldest line: diffs align blank lines and common
             statements of a new function with old ones, and one such line would
             make the whole function old. A function whose body changed keeps its
             header; one whose signature changed keeps most of its lines.
    """
    last = np.asarray(lines.last, dtype=np.int64)
    born = np.asarray(lines.born, dtype=np.int64)
    gone = np.asarray(lines.gone, dtype=np.int64)
    t_last, t_born, t_gone = times[last], times[born], times[gone]
    out: list[tuple[int, int, int, int]] = []
    count = len(last)
    for start, end in spans:
        lo = max(start, 1) - 1
        hi = min(end, count)
        if hi <= lo:
            if count == 0:
                out.append((0, 0, 0, 0))
                continue
            lo, hi = min(lo, count - 1), min(lo, count - 1) + 1
        window = t_born[lo:hi]
        i_half = lo + int(np.argpartition(window, (hi - lo - 1) // 2)[(hi - lo - 1) // 2])
        i_born = lo if t_born[lo] <= t_born[i_half] else i_half
        i_last = lo + int(np.argmax(t_last[lo:hi]))
        created, created_commit = int(t_born[i_born]), int(born[i_born])
        changed, changed_commit = int(t_last[i_last]), int(last[i_last])
        if hi - 1 > lo:  # deletions between the span's own lines
            i_gone = lo + int(np.argmax(t_gone[lo : hi - 1]))
            if t_gone[i_gone] > changed:
                changed, changed_commit = int(t_gone[i_gone]), int(gone[i_gone])
        out.append((created, created_commit, changed, changed_commit))
    return out


class LineStore:
    """Per-file line histories, loaded from the index on first use (the walk in
    update.py and the timing in timing.py share one)."""

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
