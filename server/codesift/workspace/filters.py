"""What a workspace listing keeps and why (workspace/discovery.py says more): the
records of a listed or left-out file, the ignore files of a tree, the filters
both listing modes share (`.codesiftignore`, `exclude`, excluded folders,
symlinks, per-file checks by name and size), and the names of files that are
never source text."""

from __future__ import annotations

import logging
import os
import posixpath
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # loaded when used: a freshness check of an unchanged index needs neither
    import pathspec

    from codesift.config import IndexSettings

logger = logging.getLogger("codesift.workspace.discovery")

CODESIFT_IGNORE_FILE = ".codesiftignore"
_GITIGNORE_FILE = ".gitignore"
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


def _is_real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def _add(result: _Found | SkippedFile, files: list[_Found], skipped: list[SkippedFile]) -> None:
    if isinstance(result, SkippedFile):
        skipped.append(result)
    else:
        files.append(result)


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
