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
import stat
import subprocess
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

from codesift.errors import WorkspaceError

if TYPE_CHECKING:  # loaded when used: a freshness check of an unchanged index needs neither
    import pathspec

    from codesift.config import IndexSettings

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

logger = logging.getLogger(__name__)

CODESIFT_IGNORE_FILE = ".codesiftignore"
_GITIGNORE_FILE = ".gitignore"
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
_IGNORE_FILE_NAMES = (_GITIGNORE_FILE, CODESIFT_IGNORE_FILE)

# Lower-case extensions of files that are never source text.
BINARY_EXTENSIONS: frozenset[str] = frozenset(
    {
        # images
        ".png", ".jpg", ".jpeg", ".gif", ".bmp", ".ico", ".icns", ".tif", ".tiff",
        ".webp", ".avif", ".heic", ".heif", ".psd", ".xcf", ".svgz", ".cur",
        # archives and packages
        ".zip", ".tar", ".gz", ".tgz", ".bz2", ".xz", ".txz", ".7z", ".rar", ".zst",
        ".lz4", ".lzma", ".jar", ".war", ".ear", ".whl", ".egg", ".apk", ".aab",
        ".ipa", ".deb", ".rpm", ".dmg", ".iso", ".msi", ".cab", ".crx", ".xpi",
        ".nupkg", ".gem",
        # compiled objects and executables
        ".o", ".obj", ".a", ".lib", ".so", ".dylib", ".dll", ".exe", ".bin", ".elf",
        ".pyc", ".pyo", ".pyd", ".class", ".dex", ".wasm", ".beam", ".rlib", ".pdb",
        ".ilk", ".exp", ".idb", ".gch", ".pch", ".mo", ".node", ".lockb",
        # fonts
        ".ttf", ".otf", ".woff", ".woff2", ".eot", ".pfb", ".pfm",
        # audio and video
        ".mp3", ".mp4", ".m4a", ".m4v", ".wav", ".flac", ".ogg", ".oga", ".ogv",
        ".opus", ".aac", ".wma", ".wmv", ".avi", ".mov", ".mkv", ".webm", ".flv",
        ".mid", ".midi", ".aiff", ".swf",
        # office documents
        ".pdf", ".doc", ".docx", ".xls", ".xlsx", ".ppt", ".pptx", ".odt", ".ods",
        ".odp", ".epub", ".rtf",
        # databases
        ".sqlite", ".sqlite3", ".db", ".db3", ".mdb", ".accdb", ".db-wal", ".db-shm",
        ".sqlite-wal", ".sqlite-shm",
        # data, models and keys
        ".npy", ".npz", ".pkl", ".pickle", ".h5", ".hdf5", ".parquet", ".feather",
        ".onnx", ".pt", ".pth", ".ckpt", ".safetensors", ".tflite", ".pb", ".gguf",
        ".der", ".p12", ".pfx", ".jks", ".keystore",
        # 3D assets
        ".blend", ".fbx", ".glb", ".3ds",
    }
)  # fmt: skip

# Lower-case file name endings of minified bundles and source maps.
MINIFIED_SUFFIXES: tuple[str, ...] = (
    ".min.js",
    ".min.mjs",
    ".min.cjs",
    ".min.css",
    "-min.js",
    "-min.css",
    ".bundle.js",
    ".map",
)

# Generated dependency pins: large, noisy, and never what a code search is for.
LOCK_FILE_NAMES: frozenset[str] = frozenset(
    {
        "package-lock.json",
        "npm-shrinkwrap.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "bun.lock",
        "Cargo.lock",
        "poetry.lock",
        "Pipfile.lock",
        "uv.lock",
        "pdm.lock",
        "composer.lock",
        "Gemfile.lock",
        "Podfile.lock",
        "pubspec.lock",
        "mix.lock",
        "flake.lock",
        "packages.lock.json",
        "go.sum",
    }
)

# Operating system litter without a telling extension.
_JUNK_FILE_NAMES = frozenset({".DS_Store", "Thumbs.db", "desktop.ini"})


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A file to index."""

    path: str  # relative POSIX path from the root, e.g. "pkg/mod.py"
    abs_path: Path  # root / path (the link itself for a symlinked file)
    size: int  # of the file's content (a symlink's target)
    mtime_ns: int  # of the file's content (a symlink's target)
    language: str  # detect_language(path)


@dataclass(frozen=True, slots=True)
class SkippedFile:
    """A file or folder left out, with a short reason a person can read."""

    path: str  # relative POSIX path; a folder's own path for "excluded folder"
    reason: str


@dataclass(frozen=True, slots=True)
class Discovery:
    files: list[SourceFile]  # sorted by path
    skipped: list[SkippedFile]  # sorted by path


# (size, mtime_ns) of each file `discover_files` lists, by relative path.
FileStamps = dict[str, tuple[int, int]]

# A file a listing keeps: its relative path, its path on disk (the link itself for a
# symlinked file) and the stat of its content (a symlink's target).
_Found = tuple[str, str, os.stat_result]


class _DirVerdict(Enum):
    KEEP = "keep"
    IGNORED = "ignored"  # hidden by an ignore file or pattern: not reported
    EXCLUDED = "excluded"  # an excluded folder name: reported once
    OWN_INDEX = "own index"  # a folder with a codesift index of its own: reported once


# Why a folder's files are left out, for the folders that are reported.
_DIR_REASONS = {
    _DirVerdict.EXCLUDED: "excluded folder",
    _DirVerdict.OWN_INDEX: "folder with its own codesift index",
}
# Where a folder's own index is (the default `index.db_path`).
_OWN_INDEX = (".codesift", "index.db")


class _IgnoreTree:
    """Ignore files of one kind across a tree, with git's precedence.

    The deepest ignore file with a matching pattern decides, and within it the
    last matching pattern; a file's patterns are relative to its own folder.
    """

    __slots__ = ("_specs",)

    def __init__(self) -> None:
        self._specs: dict[str, pathspec.GitIgnoreSpec] = {}

    def load(self, root: Path, reldir: str, name: str) -> None:
        path = root / reldir / name if reldir else root / name
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return
        except OSError as exc:
            logger.warning("cannot read %s, its patterns are not applied: %s", path, exc)
            return
        self.add(reldir, text.splitlines())

    def add(self, reldir: str, lines: Sequence[str]) -> None:
        if not lines:
            return
        import pathspec  # ~15 ms: only for a tree with ignore patterns

        spec = pathspec.GitIgnoreSpec.from_lines(lines)
        if len(spec):
            self._specs[reldir] = spec

    def ignored(self, relpath: str, is_dir: bool) -> bool:
        if not self._specs:
            return False
        folder = relpath
        while True:
            cut = folder.rfind("/")
            folder = folder[:cut] if cut >= 0 else ""
            spec = self._specs.get(folder)
            if spec is not None:
                sub = relpath[len(folder) + 1 :] if folder else relpath
                # A trailing slash lets folder-only patterns ("build/") match.
                result = spec.check_file(sub + "/" if is_dir else sub)
                if result.include is not None:
                    return bool(result.include)
            if not folder:
                return False


# Files that mark a project folder, whose build output folders (IndexSettings.
# output_dirs) are not source.
PROJECT_MANIFESTS: tuple[str, ...] = (
    "package.json",
    "Cargo.toml",
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "Makefile",
    "CMakeLists.txt",
    "build.gradle",
    "build.gradle.kts",
    "pom.xml",
    "build.sbt",
    "mix.exs",
    "go.mod",
    "build.zig",
    "Package.swift",
    "composer.json",
    "Gemfile",
    "meson.build",
)


class _Filters:
    """The rules both modes share: ignore files, exclude patterns, excluded folders."""

    def __init__(self, root: Path, settings: IndexSettings, *, use_gitignore: bool) -> None:
        self.root = root
        self.real_root = Path(os.path.realpath(root))
        self.max_bytes = settings.max_file_bytes
        self.excluded_dirs = frozenset(settings.excluded_dirs)
        self.output_dirs = frozenset(settings.output_dirs)
        self._has_manifest: dict[str, bool] = {}
        self.use_gitignore = use_gitignore
        self.gitignore = _IgnoreTree()
        self.codesiftignore = _IgnoreTree()
        self.exclude = _IgnoreTree()
        self.exclude.add("", settings.exclude)

    def load_ignore_files(self, reldir: str, names: Iterable[str]) -> None:
        names = set(names)
        if self.use_gitignore and _GITIGNORE_FILE in names:
            self.gitignore.load(self.root, reldir, _GITIGNORE_FILE)
        if CODESIFT_IGNORE_FILE in names:
            self.codesiftignore.load(self.root, reldir, CODESIFT_IGNORE_FILE)

    def ignored(self, relpath: str, is_dir: bool) -> bool:
        return (
            (self.use_gitignore and self.gitignore.ignored(relpath, is_dir))
            or self.codesiftignore.ignored(relpath, is_dir)
            or self.exclude.ignored(relpath, is_dir)
        )

    def dir_verdict(self, reldir: str) -> _DirVerdict:
        """The folder's own verdict; its parents are the caller's business."""
        name = reldir.rsplit("/", 1)[-1]
        # The repository database and codesift's own index folder are never source,
        # whatever excluded_dirs says (and not worth reporting as skipped).
        if name in (".git", ".codesift") or self.ignored(reldir, is_dir=True):
            return _DirVerdict.IGNORED
        if name in self.excluded_dirs:
            return _DirVerdict.EXCLUDED
        if name in self.output_dirs:
            parent = reldir.rpartition("/")[0]
            if not parent or self._beside_manifest(parent):
                return _DirVerdict.EXCLUDED
        if reldir and os.path.isfile(self.root.joinpath(reldir, *_OWN_INDEX)):
            # A workspace of its own (a nested repository someone indexed): its
            # files are searched through its index, not indexed twice.
            return _DirVerdict.OWN_INDEX
        return _DirVerdict.KEEP

    def _beside_manifest(self, reldir: str) -> bool:
        known = self._has_manifest.get(reldir)
        if known is None:
            folder = self.root / reldir
            known = self._has_manifest[reldir] = any(
                (folder / name).is_file() for name in PROJECT_MANIFESTS
            )
        return known

    def inspect(self, relpath: str, abs_path: str, st: os.stat_result) -> _Found | SkippedFile:
        """Cheap checks on a non-directory entry, given its lstat result (no
        SourceFile yet: a freshness check needs only the stat)."""
        name = relpath.rsplit("/", 1)[-1]
        reason = _name_skip_reason(name)
        if reason is not None:
            return SkippedFile(relpath, reason)
        if stat.S_ISLNK(st.st_mode):
            link = self._follow_link(relpath, abs_path)
            if isinstance(link, SkippedFile):
                return link
            st = link
        if stat.S_ISDIR(st.st_mode):
            return SkippedFile(relpath, "symlink to a folder")
        if not stat.S_ISREG(st.st_mode):
            # FIFOs and devices would block or never end when read.
            return SkippedFile(relpath, "not a regular file")
        if st.st_size > self.max_bytes:
            return SkippedFile(relpath, f"larger than {self.max_bytes} bytes")
        return relpath, abs_path, st

    def _follow_link(self, relpath: str, abs_path: str) -> os.stat_result | SkippedFile:
        try:
            target = Path(os.path.realpath(abs_path, strict=True))
        except FileNotFoundError:
            return SkippedFile(relpath, "dangling symlink")
        except OSError as exc:
            # ELOOP for a -> b -> a; anything else is reported as it is.
            return SkippedFile(relpath, f"broken symlink: {exc.strerror or exc}")
        if not target.is_relative_to(self.real_root):
            # Following it could index a whole home folder, or a secret.
            return SkippedFile(relpath, "symlink outside workspace")
        try:
            return target.stat()
        except OSError:
            return SkippedFile(relpath, "vanished")


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


def _is_real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


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


def _add(result: _Found | SkippedFile, files: list[_Found], skipped: list[SkippedFile]) -> None:
    if isinstance(result, SkippedFile):
        skipped.append(result)
    else:
        files.append(result)


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


def _clean_relpath(raw: str) -> str | None:
    """`raw` from a git listing as a normalised relative POSIX path; None for the
    root itself ("", ".", "./") and for anything that would leave it."""
    relpath = posixpath.normpath(raw.rstrip("/")) if raw.strip("/") else "."
    if relpath in (".", "..") or relpath.startswith(("../", "/")):
        return None
    return relpath


def _name_skip_reason(name: str) -> str | None:
    """Skips decided by the file name alone."""
    if name in LOCK_FILE_NAMES:
        return "lock file"
    if name in _JUNK_FILE_NAMES:
        return "binary file type"
    lower = name.lower()
    dot = lower.rfind(".")
    if dot > 0 and lower[dot:] in BINARY_EXTENSIONS:
        return "binary file type"
    if lower.endswith(MINIFIED_SUFFIXES):
        return "minified bundle or source map"
    return None
