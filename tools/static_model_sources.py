"""The training corpus of codesift's static model: Debian packages at pinned versions.

tools/train_static_model.py trains the static table on source files sampled from
these packages (fetched with `apt-get download` at the pinned version, SHA-256
checked, unpacked with `dpkg-deb -x`, cached under bench/.data/static-model/), so
a rebuild reads the same files on any machine with Debian 12's archive. None of
them is a corpus of a measuring stick, checked before anything is staged
(`stick_overlap`): no package of the generated set (bench/docset.py, train and
held-out split alike), and none that holds a development set's code or code a
development-set corpus carries (DEV_SET_PACKAGES: the projects themselves, and the
Go standard library's vendored golang.org/x modules, setuptools' copies of the
standard library's distutils and backports). The JDK's sources are the one
package the generated set shares: the members it takes (`java.util.concurrent`,
`java.time`, `java.net.http`) are left out here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import docset  # noqa: E402  (bench/docset.py: the generated set's packages and fetcher)

__all__ = [
    "DEV_SET_PACKAGES",
    "JDK",
    "JDK_EXCLUDED",
    "JDK_FILES",
    "JDK_ZIP",
    "PACKAGE_LIST",
    "SOURCES",
    "Package",
    "Source",
    "read_packages",
    "source_files",
    "stick_overlap",
    "unpacked",
]

MAX_FILE_BYTES = 200_000
SKIPPED_DIRS = frozenset({"__pycache__", "test", "tests", "doc", "man"})


@dataclass(frozen=True, slots=True)
class Package:
    """A Debian binary package at a pinned version and digest."""

    name: str
    version: str
    sha256: str


@dataclass(frozen=True, slots=True)
class Source:
    """Files of one kind from some packages: those with `suffixes` (("",): shell
    scripts without a suffix, known by their `#!` line), `keep` of them sampled."""

    name: str
    packages: tuple[Package, ...]
    suffixes: tuple[str, ...]
    keep: int


PACKAGE_LIST = Path(__file__).resolve().with_name("static_model_packages.txt")


def read_packages(path: Path = PACKAGE_LIST) -> dict[str, tuple[Package, ...]]:
    """The pinned packages by source: `[source]` lines, then `package version sha256`."""
    found: dict[str, list[Package]] = {}
    current: list[Package] | None = None
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = found.setdefault(line[1:-1], [])
            continue
        fields = line.split()
        if current is None or len(fields) != 3:
            raise ValueError(f"{path.name}:{number}: expected `package version sha256`")
        current.append(Package(*fields))
    return {name: tuple(packages) for name, packages in found.items()}


SUFFIXES: dict[str, tuple[str, ...]] = {
    "python": (".py", ".md", ".rst"),
    "js-ts": (".js", ".mjs", ".cjs", ".ts", ".mts", ".md"),
    "c-cpp": (".h", ".hpp", ".hh", ".hxx"),
    "go": (".go", ".md"),
    "rust": (".rs", ".md"),
    "ruby": (".rb", ".md"),
    "lua": (".lua",),
    "php": (".php",),
    "bash": ("", ".sh"),
}
# Files per source: recipe 2's counts, so the languages weigh as they did.
KEEP: dict[str, int] = {
    "python": 1400,
    "js-ts": 1400,
    "c-cpp": 900,
    "go": 700,
    "rust": 700,
    "ruby": 368,
    "lua": 156,
    "php": 138,
    "bash": 120,
}
SOURCES: tuple[Source, ...] = tuple(
    Source(name, packages, SUFFIXES[name], KEEP[name]) for name, packages in read_packages().items()
)

JDK = Package(
    "openjdk-17-source",
    "17.0.21.1+2-1~deb12u1",
    "5106aa3881e3b49568823ebdfc3755d4043f6f53bbfc996d0efee03172dc0a9b",
)
JDK_ZIP = "usr/lib/jvm/openjdk-17/lib/src.zip"
JDK_FILES = 700
# The generated set's members of the JDK's sources (bench/docset.py), left out.
JDK_EXCLUDED: tuple[str, ...] = tuple(
    member for source in docset.SOURCES if source.package == JDK.name for member in source.members
)


# Debian packages (names, or prefixes ending in "-") that hold a development set's
# code: its projects, or code that one of its corpora carries (the Go standard
# library vendors golang.org/x/*; setuptools vendors importlib_metadata, tomli,
# zipp, typing_extensions and carries distutils, all in the Python stdlib copy).
DEV_SET_PACKAGES: tuple[str, ...] = (
    "golang-golang-x-",
    "python3-setuptools",
    "python3-jinja2",
    "python3-uvicorn",
    "golang-github-labstack-echo-",
    "node-commander",
    "node-koa",
    "node-ws",
    "node-rxjs",
    "node-tslib",
    "ruby-sidekiq",
    "php-slim",
    "librust-grep-",
    "librust-ignore-",
    "librust-globset-",
    "libleveldb-dev",
    "libjq-dev",
    "shellcheck",
    "pyenv",
)


def _is_dev_set_package(name: str) -> bool:
    return any(
        name.startswith(entry) if entry.endswith("-") else name == entry
        for entry in DEV_SET_PACKAGES
    )


def stick_overlap() -> list[str]:
    """The training packages that belong to a measuring stick: a package of the
    generated set or of a development set (must be none; the JDK's sources are
    shared with the generated set, its members excluded)."""
    stick = {source.package for source in docset.SOURCES} - {JDK.name}
    return sorted(
        p.name
        for s in SOURCES
        for p in s.packages
        if p.name in stick or _is_dev_set_package(p.name)
    )


def _deb(package: Package, debs: Path) -> Path:
    source = docset.DocsetSource(
        package.name, "", package.name, package.version, package.sha256, ()
    )
    return docset.fetch(source, debs)


def unpacked(package: Package, work: Path) -> Path:
    """The package's files, unpacked once under `work` (fetched at its pinned version
    and digest first; a failed download exits with one line)."""
    root = work / "packages" / package.name
    marker = root / ".sha256"
    if marker.is_file() and marker.read_text(encoding="utf-8") == package.sha256:
        return root
    deb = _deb(package, work / "debs")
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
    marker.write_text(package.sha256, encoding="utf-8")
    return root


def _is_shell_script(path: Path) -> bool:
    with path.open("rb") as handle:
        first = handle.readline(200)
    return first.startswith(b"#!") and first.rstrip().endswith((b"sh", b"sh -e"))


def _wanted(path: Path, suffixes: tuple[str, ...]) -> bool:
    name = path.name
    if "" in suffixes and "." not in name:
        return _is_shell_script(path)
    if name.endswith(".min.js"):
        return False
    if path.suffix == ".sh":
        return ".sh" in suffixes and _is_shell_script(path)
    return path.suffix in suffixes and path.suffix != ""


def source_files(root: Path, suffixes: tuple[str, ...]) -> Iterator[Path]:
    """The package tree's files of the source's kinds (200 bytes to 200 kB), in a
    fixed order; test, documentation and cache folders left out."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if path.is_symlink() or not path.is_file():
                continue
            if 200 < path.stat().st_size <= MAX_FILE_BYTES and _wanted(path, suffixes):
                yield path
