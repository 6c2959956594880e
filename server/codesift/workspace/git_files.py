"""Git mode of a workspace listing: `git ls-files -co --exclude-standard` at the
root and in each submodule or nested repository (workspace/discovery.py)."""

from __future__ import annotations

import logging
import os
import stat
import subprocess
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # loaded when used: a freshness check of an unchanged index needs neither
    pass

from codesift.workspace.filters import (
    _DIR_REASONS,
    CODESIFT_IGNORE_FILE,
    SkippedFile,
    _add,
    _clean_relpath,
    _DirVerdict,
    _Filters,
    _Found,
    _is_real_dir,
)

logger = logging.getLogger("codesift.workspace.discovery")

# `git ls-files` takes milliseconds even on large repos; a hung git (a network
# filesystem, a lock) must not hang indexing, so give up and walk instead.
_GIT_TIMEOUT_S = 30.0
# Set by git hooks and some editors; they would point our git calls at another
# repository than the one holding the root.
_GIT_ENV_OVERRIDES = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX")
# Past this many pathspecs (or this much command line) git matching every index
# entry against every pathspec costs more than one plain listing, and a long
# command line could exceed the OS limit: list everything and filter instead.
_MAX_PATHSPECS = 256
_MAX_PATHSPEC_CHARS = 24_000


# --- git mode --------------------------------------------------------------------------


def _run_git(directory: Path, *args: str) -> subprocess.CompletedProcess[bytes] | None:
    env = {k: v for k, v in os.environ.items() if k not in _GIT_ENV_OVERRIDES}
    try:
        return subprocess.run(
            ["git", "-C", str(directory), *args],
            capture_output=True,
            timeout=_GIT_TIMEOUT_S,
            env=env,
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError:
        logger.debug("git is not installed; walking %s", directory)
    except (OSError, subprocess.TimeoutExpired) as exc:
        logger.warning("git failed in %s, walking the folder instead: %s", directory, exc)
    return None


def _git_listing(root: Path) -> list[str] | None:
    """The root's `git ls-files` paths, or None when walk mode should be used."""
    return _ls_files(root) if _in_git_work_tree(root) else None


def _in_git_work_tree(root: Path) -> bool:
    """Whether git mode applies to the root (else it is walked)."""
    if not _dot_git_above(root):
        # Git finds a work tree by a `.git` (folder or file) in the folder or one
        # above it (GIT_DIR and friends are not passed on): none, no repository,
        # and no git process to start (a few ms, more on a busy machine).
        logger.debug("%s is not in a git work tree (no .git above it)", root)
        return False
    probe = _run_git(root, "rev-parse", "--is-inside-work-tree", "--show-prefix")
    if probe is None:
        return False
    if probe.returncode != 0:
        # The usual case outside a repository; other failures (say, "dubious
        # ownership") deserve a visible note since results will differ.
        message = os.fsdecode(probe.stderr).strip()
        if "not a git repository" in message:
            logger.debug("%s is not in a git work tree", root)
        else:
            logger.warning("git cannot list %s, walking it instead: %s", root, message)
        return False
    lines = os.fsdecode(probe.stdout).splitlines()
    if not lines or lines[0].strip() != "true":
        return False  # inside a .git folder
    prefix = lines[1].strip() if len(lines) > 1 else ""
    if prefix:
        # A folder the enclosing repo ignores (say a dotfiles repo ignoring "*")
        # would list as empty; the user opened it on purpose, so walk it.
        ignored = _run_git(root, "check-ignore", "-q", ".")
        if ignored is not None and ignored.returncode == 0:
            logger.info("%s is ignored by its enclosing git repository; walking it", root)
            return False
    return True


def _dot_git_above(root: Path) -> bool:
    """Whether `root` or a folder above it holds a `.git` entry (above its path as
    given or as resolved: git looks above the latter)."""
    for start in {os.path.abspath(root), os.path.realpath(root)}:
        folder = start
        while True:
            if os.path.lexists(os.path.join(folder, ".git")):
                return True
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
    return False


def _ls_files(directory: Path, pathspecs: Sequence[str] | None = None) -> list[str] | None:
    """`git ls-files` of `directory`, restricted to `pathspecs` unless None."""
    if pathspecs is not None and (
        len(pathspecs) > _MAX_PATHSPECS or sum(map(len, pathspecs)) > _MAX_PATHSPEC_CHARS
    ):
        pathspecs = None
    args = ["ls-files", "-co", "--exclude-standard", "-z"]
    if pathspecs is not None:
        # Literal: a file named "a[1].py" or ":x.py" must not act as a glob or magic.
        args = ["--literal-pathspecs", *args, "--", *pathspecs]
    result = _run_git(directory, *args)
    if result is None:
        return None
    if result.returncode != 0:
        message = os.fsdecode(result.stderr).strip()
        if pathspecs is not None:
            # A failure due to the pathspecs alone must not switch to walk mode,
            # which the full listing would not do.
            logger.debug("git ls-files with pathspecs failed in %s: %s", directory, message)
            return _ls_files(directory)
        logger.warning("git ls-files failed in %s, walking it instead: %s", directory, message)
        return None
    # Paths are relative to `directory` even when it is a subfolder of the repo.
    # Unmerged files are listed once per stage: keep each path once.
    return list(dict.fromkeys(os.fsdecode(p) for p in result.stdout.split(b"\0") if p))


def _list_nested_repo(relpath: str, abs_path: Path) -> list[str] | None:
    return _ls_files(abs_path)


class _GitPathQuery:
    """Pathspecs that make git list, at each repository level, what matters for
    some paths: the paths themselves and the .codesiftignore files of their
    ancestor folders (git mode applies only those git lists).

    Git does not look into a nested repository or submodule for a pathspec below
    it, so a path there is asked about as its repository's folder, which the
    enclosing repository lists as one entry, and then asked in that repository.
    """

    def __init__(self, root: Path, wanted: Iterable[str]) -> None:
        self.root = root
        self._repo_dirs: dict[str, bool] = {}
        asked = set(wanted)
        seen: set[str] = set()
        for relpath in wanted:
            folder = relpath
            while folder:
                cut = folder.rfind("/")
                folder = folder[:cut] if cut >= 0 else ""
                if folder in seen:
                    break  # so are all its ancestors
                seen.add(folder)
                ignore_file = f"{folder}/{CODESIFT_IGNORE_FILE}" if folder else CODESIFT_IGNORE_FILE
                if os.path.lexists(root / ignore_file):
                    asked.add(ignore_file)
        self._asked = sorted(asked)

    def pathspecs(self, repo_dir: str) -> list[str]:
        """Pathspecs relative to `repo_dir` ("" for the root) for the paths under it."""
        prefix = f"{repo_dir}/" if repo_dir else ""
        specs: dict[str, None] = {}
        for relpath in self._asked:
            if relpath.startswith(prefix):
                specs[self._stop_at_repo(prefix, relpath)[len(prefix) :]] = None
        return list(specs)

    def list_nested(self, relpath: str, abs_path: Path) -> list[str] | None:
        specs = self.pathspecs(relpath)
        # Nothing asked below it: its listing would only be filtered away.
        return _ls_files(abs_path, specs) if specs else []

    def _stop_at_repo(self, prefix: str, relpath: str) -> str:
        """`relpath`, or its shallowest ancestor below `prefix` that is a repository."""
        cut = relpath.find("/", len(prefix))
        while cut >= 0:
            folder = relpath[:cut]
            if self._is_repo_dir(folder):
                return folder
            cut = relpath.find("/", cut + 1)
        return relpath

    def _is_repo_dir(self, relpath: str) -> bool:
        known = self._repo_dirs.get(relpath)
        if known is None:
            path = self.root / relpath
            # A ".git" folder or file (submodule) is what makes git stop there.
            known = _is_real_dir(path) and os.path.lexists(path / ".git")
            self._repo_dirs[relpath] = known
        return known


def _from_git(
    filters: _Filters,
    listing: list[str],
    list_nested: Callable[[str, Path], list[str] | None] = _list_nested_repo,
) -> tuple[list[_Found], list[SkippedFile]]:
    files: list[_Found] = []
    skipped: list[SkippedFile] = []
    root = filters.root
    # Memo of each folder's verdict including its parents': True = skip its contents.
    blocked: dict[str, bool] = {"": False}

    def dir_blocked(reldir: str) -> bool:
        known = blocked.get(reldir)
        if known is not None:
            return known
        cut = reldir.rfind("/")
        result = dir_blocked(reldir[:cut] if cut >= 0 else "")
        if not result:
            verdict = filters.dir_verdict(reldir)
            if verdict in _DIR_REASONS:
                skipped.append(SkippedFile(reldir, _DIR_REASONS[verdict]))
            result = verdict is not _DirVerdict.KEEP
        blocked[reldir] = result
        return result

    def load_codesiftignores(paths: list[str]) -> None:
        for path in paths:
            folder, _, name = path.rpartition("/")
            if name == CODESIFT_IGNORE_FILE:
                filters.load_ignore_files(folder, (name,))

    load_codesiftignores(listing)
    queue = list(listing)
    # Folders whose contents were queued (the root's by the caller): a listing that
    # names its own folder ("./" inside a submodule git cannot enter) or one listed
    # before must not be listed again, or discovery never ends.
    listed: set[str] = {""}
    index = 0
    while index < len(queue):
        relpath = _clean_relpath(queue[index])
        index += 1
        if relpath is None:
            continue
        cut = relpath.rfind("/")
        if dir_blocked(relpath[:cut] if cut >= 0 else ""):
            continue
        abs_path = root / relpath
        try:
            st = os.lstat(abs_path)
        except (FileNotFoundError, NotADirectoryError):
            # Tracked but deleted in the work tree, or deleted since listing.
            skipped.append(SkippedFile(relpath, "vanished"))
            continue
        except OSError as exc:
            skipped.append(SkippedFile(relpath, f"unreadable: {exc.strerror or exc}"))
            continue
        if stat.S_ISDIR(st.st_mode):
            # A submodule or an untracked nested repository: list it with its
            # own git so its own ignore rules apply.
            if relpath in listed or dir_blocked(relpath):
                continue
            listed.add(relpath)
            if not os.path.lexists(abs_path / ".git"):
                # A gitlink whose submodule was never cloned (or was deinitialised):
                # an empty folder, or one whose files belong to no repository git
                # can list. Inside it git lists the folder itself as "./".
                skipped.append(SkippedFile(relpath, "submodule not checked out"))
                continue
            nested = list_nested(relpath, abs_path)
            if nested is None:
                skipped.append(SkippedFile(relpath, "nested repository git cannot list"))
                continue
            nested_paths = [f"{relpath}/{p}" for p in nested]
            load_codesiftignores(nested_paths)
            queue.extend(nested_paths)
            continue
        if filters.ignored(relpath, is_dir=False):
            continue
        _add(filters.inspect(relpath, str(abs_path), st), files, skipped)
    return files, skipped
