"""Which files of a workspace folder get indexed.

Two ways to list candidates:

- git mode, when the root is inside a git work tree (and not itself ignored by
  it): `git ls-files -co --exclude-standard`, i.e. tracked files plus untracked
  files that no .gitignore, .git/info/exclude or global excludes file hides.
  Git submodules and untracked nested repositories are listed by git as one
  folder entry; they are listed in turn with their own `git ls-files`, so their
  files are indexed under their own ignore rules (as ripgrep and VS Code search
  do). Put them in `exclude` or `.codesiftignore` to leave them out. A
  submodule that was never cloned (a gitlink over an empty folder, or one
  without `.git`) has no files git can list: it is skipped, reported once.
- walk mode, everywhere else (or when git is missing or fails): a directory walk
  that never follows directory symlinks and honours every `.gitignore` in the
  tree, each anchored at the folder that holds it.

Both modes then apply the same filters: `.codesiftignore` files (gitignore
syntax, anywhere in the tree), `IndexSettings.exclude` (gitignore syntax,
relative to the root), `IndexSettings.excluded_dirs` (folder names, so a tracked
`vendor/` is still skipped), the symlink rules and cheap per-file checks that
need no content read (size, binary extension, minified or lock file by name).

`.codesiftignore` and `exclude` only ever remove files: a `!pattern` in them
cannot bring back a file that .gitignore hides, because git mode never sees it.

`Discovery.skipped` lists what codesift chose to leave out (limits, heuristics,
excluded folders, symlinks, vanished files), so a user can ask "why is this file
not found". Files hidden by an ignore file or an `exclude` pattern are not part
of the workspace and are not listed. An excluded folder is listed once, by its
own path, not file by file.

`discover_paths` gives the same verdict for a few given paths (a save, a watcher
batch) without listing the whole workspace: git is asked about those paths only,
and a walk reads only the ignore files of their ancestor folders. Both functions
run the same filters and the same git-listing loop, so they cannot drift apart.
"""

from __future__ import annotations

import logging
import os
import posixpath
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from codesift.errors import WorkspaceError

if TYPE_CHECKING:  # loaded when used: a freshness check of an unchanged index needs neither
    from codesift.config import IndexSettings
from codesift.workspace.filters import (
    BINARY_EXTENSIONS,
    CODESIFT_IGNORE_FILE,
    LOCK_FILE_NAMES,
    MINIFIED_SUFFIXES,
    SkippedFile,
    SourceFile,
    _Filters,
    _Found,
    _is_real_dir,
)
from codesift.workspace.git_files import (
    _from_git,
    _git_listing,
    _GitPathQuery,
    _in_git_work_tree,
    _ls_files,
)
from codesift.workspace.walk import _walk, _walk_paths

__all__ = [
    "BINARY_EXTENSIONS",
    "CODESIFT_IGNORE_FILE",
    "LOCK_FILE_NAMES",
    "MINIFIED_SUFFIXES",
    "Discovery",
    "FileStamps",
    "SkippedFile",
    "SourceFile",
    "discover_files",
    "discover_paths",
    "discover_stamps",
    "discover_stamps_listed",
]

logger = logging.getLogger("codesift.workspace.discovery")


@dataclass(frozen=True, slots=True)
class Discovery:
    files: list[SourceFile]  # sorted by path
    skipped: list[SkippedFile]  # sorted by path


# (size, mtime_ns) of each file `discover_files` lists, by relative path.
FileStamps = dict[str, tuple[int, int]]


def discover_files(root: Path, settings: IndexSettings) -> Discovery:
    """List the files of the workspace folder `root` that should be indexed.

    Raises WorkspaceError when `root` is missing, not a folder, or unreadable.
    """
    found, skipped, _ = _listing(root, settings)
    files = _source_files(found)
    files.sort(key=lambda f: f.path)
    skipped.sort(key=lambda s: s.path)
    return Discovery(files=files, skipped=skipped)


def discover_stamps(root: Path, settings: IndexSettings) -> FileStamps:
    """(size, mtime_ns) of every file `discover_files(root, settings)` lists, by
    path: what a freshness check compares with the index's files table. The same
    listing and filters, without a SourceFile (nor a language) per file.

    Raises WorkspaceError when `root` is missing, not a folder, or unreadable.
    """
    return discover_stamps_listed(root, settings)[0]


def discover_stamps_listed(root: Path, settings: IndexSettings) -> tuple[FileStamps, bool]:
    """`discover_stamps`, and whether git listed the files (False: the folder was
    walked: no git work tree above it, git could not list it, or the enclosing
    repository ignores it)."""
    found, _, by_git = _listing(root, settings)
    return {relpath: (st.st_size, st.st_mtime_ns) for relpath, _, st in found}, by_git


def _listing(root: Path, settings: IndexSettings) -> tuple[list[_Found], list[SkippedFile], bool]:
    root = _checked_root(root)
    listing = _git_listing(root)
    filters = _Filters(root, settings, use_gitignore=listing is None)
    if listing is None:
        found, skipped = _walk(filters)
        mode = "walk"
    else:
        found, skipped = _from_git(filters, listing)
        mode = "git"
    found = _one_path_per_file(filters.real_root, found, skipped)
    logger.debug(
        "discovered %d files in %s (%s mode), skipped %d", len(found), root, mode, len(skipped)
    )
    return found, skipped, listing is not None


def _link_target(real_root: Path, abs_path: str) -> str | None:
    """The relative path of the file the symlink `abs_path` leads to (inside the
    workspace: the listing checked it), None when `abs_path` is no symlink."""
    if not os.path.islink(abs_path):
        return None
    try:
        return Path(os.path.realpath(abs_path, strict=True)).relative_to(real_root).as_posix()
    except (OSError, ValueError):
        return None


def _one_path_per_file(
    real_root: Path, found: list[_Found], skipped: list[SkippedFile]
) -> list[_Found]:
    """`found` with each file reached through symlinks listed once: a symlink to a
    file listed under its own path is skipped (`symlink to T (indexed there)`), and
    of several symlinks to a file not listed otherwise (in an excluded folder, say)
    the first by path is kept. Hard links are separate files. Links share their
    target's stat, so only files sharing a device and inode are looked at."""
    by_file: dict[tuple[int, int], list[_Found]] = {}
    for entry in found:
        by_file.setdefault((entry[2].st_dev, entry[2].st_ino), []).append(entry)
    dropped: set[str] = set()
    for entries in by_file.values():
        if len(entries) < 2:
            continue
        targets = {e[0]: _link_target(real_root, e[1]) for e in entries}
        own = sorted(path for path, target in targets.items() if target is None)
        links = sorted(path for path, target in targets.items() if target is not None)
        kept = set(own) if own else {links[0]}
        for link in links:
            if link in kept:
                continue
            target = targets[link] or ""
            where = "there" if target in kept else f"as {min(kept)}"
            skipped.append(SkippedFile(link, f"symlink to {target} (indexed {where})"))
            dropped.add(link)
    return [entry for entry in found if entry[0] not in dropped] if dropped else found


def _source_files(found: Iterable[_Found]) -> list[SourceFile]:
    # The language table is the parsers' (imported here: a freshness check needs none).
    from codesift.parsing.languages import detect_language

    return [
        SourceFile(
            path=relpath,
            abs_path=Path(abs_path),
            size=st.st_size,
            mtime_ns=st.st_mtime_ns,
            language=detect_language(relpath),
        )
        for relpath, abs_path, st in found
    ]


def discover_paths(root: Path, settings: IndexSettings, paths: Iterable[str]) -> Discovery:
    """The verdict `discover_files(root, settings)` gives on just these paths.

    `paths` are relative to `root` (POSIX or OS separators, "./" allowed) or
    absolute under it; paths outside the root are dropped. A path that is missing,
    a folder, or ignored is in neither list, as with `discover_files`; a file's
    skip reason is the one `discover_files` would give. Folder-level entries
    ("excluded folder", "unreadable folder", "nested repository git cannot
    list", "submodule not checked out") describe folders, not the files asked
    about, and are never returned.

    Costs a few git calls (git mode) or a few stats per ancestor folder (walk
    mode), whatever the size of the workspace.

    Raises WorkspaceError when `root` is missing, not a folder, or unreadable.
    """
    root = _checked_root(root)
    # Folders only ever get folder-level verdicts; asking git about one would
    # list its whole subtree for nothing.
    wanted = {p for p in _relative_paths(root, paths) if not _is_real_dir(root / p)}
    if not wanted:
        return Discovery(files=[], skipped=[])

    listing: list[str] | None = None
    query: _GitPathQuery | None = None
    if _in_git_work_tree(root):
        query = _GitPathQuery(root, wanted)
        listing = _ls_files(root, query.pathspecs(""))
    filters = _Filters(root, settings, use_gitignore=listing is None)
    if listing is None or query is None:
        found, skipped = _walk_paths(filters, wanted)
    else:
        found, skipped = _from_git(filters, listing, query.list_nested)
    found = [f for f in found if f[0] in wanted]
    # A symlink to a file the workspace lists under its own path is that file.
    targets = {f[0]: _link_target(filters.real_root, f[1]) for f in found}
    linked = {t for t in targets.values() if t is not None and t not in wanted}
    listed = {f.path for f in discover_paths(root, settings, linked).files} if linked else set()
    for path, target in targets.items():
        if target is not None and (target in listed or target in targets):
            skipped.append(SkippedFile(path, f"symlink to {target} (indexed there)"))
    found = _one_path_per_file(
        filters.real_root,
        [f for f in found if targets[f[0]] not in listed and targets[f[0]] not in targets],
        skipped,
    )
    # Git may list more than was asked (ancestor .codesiftignore files, whole
    # nested repositories when a call had to be widened): keep what was asked.
    files = sorted(_source_files(found), key=lambda f: f.path)
    skipped = sorted((s for s in skipped if s.path in wanted), key=lambda s: s.path)
    return Discovery(files=files, skipped=skipped)


def _checked_root(root: Path) -> Path:
    root = root.absolute()
    if not root.exists():
        raise WorkspaceError(f"workspace folder {root} does not exist")
    if not root.is_dir():
        raise WorkspaceError(f"workspace folder {root} is not a folder")
    return root


def _relative_paths(root: Path, paths: Iterable[str]) -> set[str]:
    """Normalised relative POSIX paths; those outside the root are dropped."""
    bases: tuple[Path, ...] | None = None
    result: set[str] = set()
    for raw in paths:
        path = Path(raw)
        if path.is_absolute():
            if bases is None:
                # An editor may report the resolved path of a root opened via a link.
                bases = (root, Path(os.path.realpath(root)))
            base = next((b for b in bases if path.is_relative_to(b)), None)
            if base is None:
                continue
            path = path.relative_to(base)
        relpath = posixpath.normpath(path.as_posix())
        if relpath in (".", "..") or relpath.startswith(("../", "/")):
            continue
        result.add(relpath)
    return result
