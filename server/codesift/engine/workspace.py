"""Which workspace a command works on, its settings and where its index lives.

Resolved once per front end request: `open_workspace` (or `Workspace.at`) gives
the root, the settings (`.codesift.toml` under the root, then the front end's
overrides) and the index path (`index.db_path`, relative to the root).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codesift.config import CONFIG_FILE_NAME, IndexSettings, Settings, load_settings, merge_settings
from codesift.errors import WorkspaceError

__all__ = [
    "Workspace",
    "db_path_for",
    "existing_folder",
    "find_root",
    "folder_names",
    "indexed_folders_below",
    "indexed_root",
    "workspace_above",
]

_DEFAULT_DB_PATH = IndexSettings().db_path


def db_path_for(root: Path, settings: Settings) -> Path:
    """The index file of the workspace `root` (`index.db_path`, relative to it)."""
    path = Path(os.path.expanduser(settings.index.db_path))
    return path if path.is_absolute() else root / path


def existing_folder(raw: str | Path, option: str) -> Path:
    """`raw` as an absolute folder; WorkspaceError when it does not exist or is a file
    (a mistyped --root must not create an empty index somewhere)."""
    path = Path(os.path.expanduser(str(raw)))
    if not path.exists():
        raise WorkspaceError(f"{option} {raw}: no such folder")
    if not path.is_dir():
        raise WorkspaceError(f"{option} {raw} is not a folder")
    return path.resolve()


def _index_of(folder: Path) -> Path:
    """Where the index of a workspace rooted at `folder` would be, read from its
    `.codesift.toml` when it has one (a broken file counts as the default)."""
    config = folder / CONFIG_FILE_NAME
    try:
        text = config.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):  # none, or unreadable: reported when opened
        return folder / _DEFAULT_DB_PATH
    if "db_path" in text:  # else the default: the settings are read once, when opened
        try:
            return db_path_for(folder, load_settings(folder))
        except Exception:  # a broken config is reported when the workspace is opened
            pass
    return folder / _DEFAULT_DB_PATH


def indexed_root(start: Path) -> Path | None:
    """The nearest folder at or above `start` whose index exists (honouring each
    folder's `index.db_path`), or None."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if _index_of(folder).is_file():
            return folder
    return None


def _git_toplevel(start: Path) -> Path | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(start), "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode == 0 and out.stdout.strip():
        return Path(out.stdout.strip())
    return None


def workspace_above(start: Path) -> Path | None:
    """The workspace `start` is in: the nearest folder at or above it holding a
    codesift index, else the enclosing git work tree; None when neither (a scratch
    folder, a home folder)."""
    start = start.resolve()
    return indexed_root(start) or _git_toplevel(start)


# Folders `indexed_folders_below` never looks into: dependencies and caches.
_NOT_WORKSPACES = frozenset({"node_modules", "__pycache__", "venv", "site-packages"})


def indexed_folders_below(start: Path, *, max_depth: int = 4) -> list[Path]:
    """The folders under `start` (at most `max_depth` levels down) that hold a
    codesift index, sorted: each is a workspace of its own, so none is looked
    into further (a nested folder with its own index is that index). Hidden
    folders and dependency folders are skipped."""
    start = start.resolve()
    found: list[Path] = []
    for folder, dirs, _ in os.walk(start):
        here = Path(folder)
        if here != start and _index_of(here).is_file():
            found.append(here)
            dirs.clear()
            continue
        depth = len(here.relative_to(start).parts)
        dirs[:] = (
            []
            if depth >= max_depth
            else sorted(d for d in dirs if not d.startswith(".") and d not in _NOT_WORKSPACES)
        )
    return sorted(found)


def find_root(start: Path, *, git: bool = True) -> Path:
    """The workspace root for `start`: the nearest folder holding a codesift index,
    else (with `git`) the enclosing git work tree, else `start` itself."""
    start = start.resolve()
    found = indexed_root(start)
    if found is not None:
        return found
    top = _git_toplevel(start) if git else None
    return top if top is not None else start


@dataclass(frozen=True, slots=True)
class Workspace:
    """A workspace root, its settings and its index file."""

    root: Path
    settings: Settings
    db_path: Path
    # The settings file given on top of .codesift.toml (`--config`), which the
    # background passes this workspace starts (engine/detached.py) are given too.
    config_file: Path | None = None

    @classmethod
    def at(
        cls,
        root: Path,
        overrides: Mapping[str, Any] | None = None,
        *,
        config_file: Path | None = None,
    ) -> Workspace:
        """The workspace rooted at `root`: defaults, `<root>/.codesift.toml`, then
        `overrides` ({"search": {"top_k": 20}, ...}, read from `config_file` when
        given); ConfigError for a bad value."""
        settings = load_settings(root)
        if overrides:
            settings = merge_settings(
                settings,
                {k: dict(v) if isinstance(v, Mapping) else v for k, v in overrides.items()},
            )
        return cls(root, settings, db_path_for(root, settings), config_file)

    @classmethod
    def resolve(
        cls,
        root: str | Path | None = None,
        *,
        start: Path | None = None,
        option: str = "--root",
        git: bool = True,
        overrides: Mapping[str, Mapping[str, Any]] | None = None,
    ) -> Workspace:
        """The workspace named by `root` (it must be a folder), else the one `start`
        (default: the current folder) is in: see `find_root`."""
        if root is not None:
            folder = existing_folder(root, option)
        else:
            folder = find_root(start or Path.cwd(), git=git)
        return cls.at(folder, overrides)


def folder_names(roots: Sequence[Path]) -> list[str]:
    """A name for each folder, as routing and a search over several folders show
    it: its own name, with as many parent folders before it as it takes to tell
    it from the others (`app/src` and `lib/src`)."""
    parts = [root.parts[1:] if root.anchor else root.parts for root in roots]
    depth = [1] * len(roots)
    while True:
        names = ["/".join(p[-d:]) for p, d in zip(parts, depth, strict=True)]
        clash = {n for n in names if names.count(n) > 1}
        grow = [i for i, n in enumerate(names) if n in clash and depth[i] < len(parts[i])]
        if not grow:
            return names
        for i in grow:
            depth[i] += 1
