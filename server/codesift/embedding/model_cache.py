"""The files of a model folder: written atomically, recorded in a manifest, and
changed by one process at a time.

A model folder (embedding/model.py) holds copies of the files it was assembled
from and what codesift derives from them (the query model, query_model.py). It
never points elsewhere: a symlink into the virtual environment that first built
it broke every later process once that environment was removed.

`manifest.json` records, for each file of the folder, its size, modification
time and SHA-256, what each copied file was copied from, and what the query
model was built from. A file whose size differs from its record, or whose
modification time differs and whose hash then does too, is damaged; the folder
is then assembled again. Every write goes to a temporary name in the same folder,
is flushed to disk and renamed over the target, so a reader sees the old file or
the new one, never half of one. Writers hold an exclusive `flock` on `.lock` in
the folder: one process builds while the others wait, then find the work done.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import stat
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "LOCK_FILE",
    "MANIFEST_FILE",
    "copy_atomically",
    "file_digest",
    "file_matches",
    "file_record",
    "folder_lock",
    "read_manifest",
    "remove_leftovers",
    "sync_file",
    "write_bytes_atomically",
    "write_manifest",
]

log = logging.getLogger(__name__)

MANIFEST_FILE = "manifest.json"
LOCK_FILE = ".lock"
_TEMP_SUFFIX = ".tmp"
_CHUNK = 1 << 20


def file_digest(path: Path) -> tuple[int, str]:
    """Size and SHA-256 (hex) of the file at `path` (~35 ms for the 23 MB model)."""
    digest = hashlib.sha256()
    size = 0
    with path.open("rb") as handle:
        while block := handle.read(_CHUNK):
            digest.update(block)
            size += len(block)
    return size, digest.hexdigest()


def file_record(path: Path, sha256: str) -> dict[str, Any]:
    """What the manifest keeps of a file whose hash is known."""
    info = path.stat()
    return {"size": info.st_size, "mtime_ns": info.st_mtime_ns, "sha256": sha256}


def file_matches(path: Path, record: Mapping[str, Any]) -> bool:
    """True when `path` is a regular file (not a symlink) that matches `record`:
    same size, and same modification time or else the same hash."""
    try:
        info = path.lstat()
    except OSError:
        return False
    if not stat.S_ISREG(info.st_mode) or info.st_size != record.get("size"):
        return False
    if info.st_mtime_ns == record.get("mtime_ns"):
        return True
    try:
        return file_digest(path)[1] == record.get("sha256")
    except OSError:
        return False


def _sync_folder(folder: Path) -> None:
    """Flush a rename in `folder` to disk (best effort: not every filesystem can)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def sync_file(path: Path) -> None:
    """Flush a file written by someone else (e.g. onnx) before it is renamed."""
    with path.open("rb") as handle:
        os.fsync(handle.fileno())


@contextlib.contextmanager
def _temporary(target: Path) -> Iterator[tuple[int, Path]]:
    """A new file next to `target`, renamed over it when the block ends without
    an error (after fsync) and removed when it raises."""
    fd, name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=_TEMP_SUFFIX, dir=target.parent)
    temp = Path(name)
    try:
        yield fd, temp
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.chmod(temp, 0o644)
        os.replace(temp, target)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        temp.unlink(missing_ok=True)
        raise
    _sync_folder(target.parent)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def copy_atomically(source: Path, target: Path) -> str:
    """Copy `source` to `target` (replacing a file or a symlink there); the SHA-256
    of what was copied, hashed as it was read."""
    digest = hashlib.sha256()
    with _temporary(target) as (fd, _), source.open("rb") as handle:
        while block := handle.read(_CHUNK):
            digest.update(block)
            _write_all(fd, block)
    return digest.hexdigest()


def write_bytes_atomically(target: Path, data: bytes) -> str:
    """Write `data` to `target`; its SHA-256."""
    with _temporary(target) as (fd, _):
        _write_all(fd, data)
    return hashlib.sha256(data).hexdigest()


def read_manifest(folder: Path) -> dict[str, Any] | None:
    """The folder's manifest, or None when it is missing or unreadable."""
    try:
        manifest = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None


def write_manifest(folder: Path, manifest: Mapping[str, Any]) -> None:
    """Replace the folder's manifest (hold `folder_lock`)."""
    text = json.dumps(manifest, indent=1, sort_keys=True) + "\n"
    write_bytes_atomically(folder / MANIFEST_FILE, text.encode("utf-8"))


@contextlib.contextmanager
def folder_lock(folder: Path, *, wait: bool = True) -> Iterator[bool]:
    """Hold the folder's exclusive lock for the block: True when held. With
    `wait=False` a lock another process holds gives False at once. A folder where
    the lock file cannot be made (read-only) gives False too: nothing can be
    written there anyway."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle = (folder / LOCK_FILE).open("ab")
    except OSError as exc:
        log.debug("cannot lock %s: %s", folder, exc)
        yield False
        return
    with handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except OSError:  # held elsewhere (LOCK_NB), or no locks on this filesystem
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def remove_leftovers(folder: Path) -> None:
    """Delete the temporary files of writers that died before renaming them (call
    it holding `folder_lock`: no live writer has any then)."""
    for leftover in folder.glob(f".*{_TEMP_SUFFIX}"):
        leftover.unlink(missing_ok=True)
