"""Walk mode of a workspace listing: a directory walk that never follows directory
symlinks and honours every `.gitignore` in the tree (workspace/discovery.py)."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from codesift.errors import WorkspaceError

if TYPE_CHECKING:  # loaded when used: a freshness check of an unchanged index needs neither
    pass

from codesift.workspace.filters import (
    _DIR_REASONS,
    _IGNORE_FILE_NAMES,
    SkippedFile,
    _add,
    _DirVerdict,
    _Filters,
    _Found,
    _is_real_dir,
)

logger = logging.getLogger("codesift.workspace.discovery")

# --- walk mode -------------------------------------------------------------------------


def _walk(filters: _Filters) -> tuple[list[_Found], list[SkippedFile]]:
    files: list[_Found] = []
    skipped: list[SkippedFile] = []
    root = filters.root
    pending = [""]
    while pending:
        reldir = pending.pop()
        abs_dir = root / reldir if reldir else root
        try:
            with os.scandir(abs_dir) as scan:
                entries = list(scan)
        except OSError as exc:
            if not reldir:
                raise WorkspaceError(f"cannot read workspace folder {root}: {exc}") from exc
            logger.warning("cannot read folder %s: %s", abs_dir, exc)
            skipped.append(SkippedFile(reldir, f"unreadable folder: {exc.strerror or exc}"))
            continue
        # Ignore files apply to their own folder's entries, so load them first.
        filters.load_ignore_files(reldir, (e.name for e in entries))
        for entry in entries:
            relpath = f"{reldir}/{entry.name}" if reldir else entry.name
            try:
                # Without following symlinks: a link to a folder is handled as a
                # file here and skipped by `inspect`, so loops like a -> . are harmless.
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                verdict = filters.dir_verdict(relpath)
                if verdict is _DirVerdict.KEEP:
                    pending.append(relpath)
                elif verdict in _DIR_REASONS:
                    skipped.append(SkippedFile(relpath, _DIR_REASONS[verdict]))
                continue
            # Git treats a symlink as a file, whatever it points to.
            if filters.ignored(relpath, is_dir=False):
                continue
            try:
                st = entry.stat(follow_symlinks=False)
            except (FileNotFoundError, NotADirectoryError):
                skipped.append(SkippedFile(relpath, "vanished"))
                continue
            except OSError as exc:
                skipped.append(SkippedFile(relpath, f"unreadable: {exc.strerror or exc}"))
                continue
            _add(filters.inspect(relpath, entry.path, st), files, skipped)
    return files, skipped


def _walk_paths(filters: _Filters, wanted: Iterable[str]) -> tuple[list[_Found], list[SkippedFile]]:
    """What `_walk` would find for these paths, visiting only their ancestors."""
    files: list[_Found] = []
    skipped: list[SkippedFile] = []
    root = filters.root
    try:
        with os.scandir(root):
            pass
    except OSError as exc:
        raise WorkspaceError(f"cannot read workspace folder {root}: {exc}") from exc
    filters.load_ignore_files("", _IGNORE_FILE_NAMES)
    # Memo: would the walk scan this folder (and so load its ignore files)?
    scanned: dict[str, bool] = {"": True}

    def walk_reaches(reldir: str) -> bool:
        known = scanned.get(reldir)
        if known is not None:
            return known
        cut = reldir.rfind("/")
        # The parent first: its ignore files decide this folder's verdict.
        result = walk_reaches(reldir[:cut] if cut >= 0 else "")
        if result:
            abs_dir = root / reldir
            # The walk never enters a symlinked folder, nor one it cannot list.
            result = (
                _is_real_dir(abs_dir)
                and filters.dir_verdict(reldir) is _DirVerdict.KEEP
                and _can_list(abs_dir)
            )
        if result:
            filters.load_ignore_files(reldir, _IGNORE_FILE_NAMES)
        scanned[reldir] = result
        return result

    for relpath in sorted(wanted):
        cut = relpath.rfind("/")
        if not walk_reaches(relpath[:cut] if cut >= 0 else ""):
            continue
        abs_path = root / relpath
        error: OSError | None = None
        try:
            st = os.lstat(abs_path)
        except (FileNotFoundError, NotADirectoryError):
            continue  # not in its folder's listing
        except OSError as exc:
            error = exc
        else:
            if stat.S_ISDIR(st.st_mode):
                continue
        if filters.ignored(relpath, is_dir=False):
            continue
        if error is not None:
            skipped.append(SkippedFile(relpath, f"unreadable: {error.strerror or error}"))
            continue
        _add(filters.inspect(relpath, str(abs_path), st), files, skipped)
    return files, skipped


def _can_list(abs_dir: Path) -> bool:
    try:
        with os.scandir(abs_dir):
            return True
    except OSError:
        return False
