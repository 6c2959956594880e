"""The development-set corpora, obtained exactly as ../shared/devset/corpora.json says.

Shared by the benchmark scripts. Everything is prepared under bench/.data/ (which
git ignores); read-only system trees (Go, Rust) are indexed in place with their
databases under bench/.data/db, so nothing is ever written into /usr.

- python-stdlib: a copy of the running interpreter's stdlib without site-packages
  and __pycache__ (`tar --exclude=./site-packages --exclude=__pycache__`). A copy
  that an earlier run finished (marker file beside it) is reused.
- go-stdlib: /usr/share/go-1.19/src from Debian golang-1.19-src=1.19.8-2.
- rust-std: /usr/src/rustc-1.63.0/library from Debian rust-src=1.63.0+dfsg1-2.
- js-npm, ts-rxjs: the devset's package.json + package-lock.json copied into a
  folder and `npm ci --ignore-scripts` run there (exact pinned trees).
- dev set 2 (../shared/devset2, 20 repositories): each `corpora/NAME.tar.xz` extracted
  into bench/.data/corpora/devset2/NAME (`tar -xJf`); the tarballs are `git archive`
  output, not repositories, so each is indexed as a plain folder. An extraction is
  reused while the marker beside it holds the tarball's digest.

`prepare_corpus(name, log)` returns a `Corpus` or raises `CorpusUnavailable`
with a message saying what is missing and the command that gets it.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CORPORA_DIR",
    "CORPUS_NAMES",
    "DATA_DIR",
    "DB_DIR",
    "DEVSET2_DIR",
    "DEVSET2_NAMES",
    "DEVSET_DIR",
    "Corpus",
    "CorpusUnavailable",
    "prepare_corpus",
]

BENCH_DIR = Path(__file__).resolve().parent
DATA_DIR = BENCH_DIR / ".data"
CORPORA_DIR = DATA_DIR / "corpora"
DB_DIR = DATA_DIR / "db"
# The labeled development set sits beside the repository (../shared/devset).
DEVSET_DIR = Path(
    os.environ.get("CODESIFT_DEVSET", Path(__file__).resolve().parents[2] / "shared" / "devset")
)

CORPUS_NAMES: tuple[str, ...] = ("python-stdlib", "go-stdlib", "rust-std", "js-npm", "ts-rxjs")
# Dev set 2 sits beside the first one (../shared/devset2).
DEVSET2_DIR = Path(os.environ.get("CODESIFT_DEVSET2", DEVSET_DIR.parent / "devset2"))
_DEVSET1_LANGUAGES = {
    "python-stdlib": "python",
    "go-stdlib": "go",
    "rust-std": "rust",
    "js-npm": "javascript",
    "ts-rxjs": "typescript",
}


def _devset2_catalog() -> list[dict[str, object]]:
    path = DEVSET2_DIR / "corpora.json"
    if not path.is_file():
        return []
    data = json.loads(path.read_text(encoding="utf-8"))
    return [dict(item) for item in data]


DEVSET2_NAMES: tuple[str, ...] = tuple(str(item["name"]) for item in _devset2_catalog())

GO_ROOT = Path("/usr/share/go-1.19/src")
GO_PACKAGE, GO_VERSION = "golang-1.19-src", "1.19.8-2"
RUST_ROOT = Path("/usr/src/rustc-1.63.0/library")
RUST_PACKAGE, RUST_VERSION = "rust-src", "1.63.0+dfsg1-2"
PYTHON_VERSION = "3.11.7"

Log = Callable[[str], None]


class CorpusUnavailable(Exception):
    """The corpus cannot be obtained on this machine; the message says why."""


@dataclass(frozen=True, slots=True)
class Corpus:
    name: str
    root: Path  # the corpus root: devset paths are relative to it
    queries: Path  # the devset query file
    # Files that must be in the index for it to be the corpus the devset describes.
    sentinels: tuple[str, ...]
    note: str = ""  # a version mismatch or similar caveat, shown in reports
    devset: int = 1  # which development set labels it (1: ../shared/devset, 2: devset2)
    language: str = ""  # the corpus's main language, as the dev set names it
    short_queries: Path | None = None  # dev set 2's search-box variants (NAME.short.json)


def _run(cmd: list[str], log: Log, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    log(f"$ {' '.join(cmd)}" + (f"   (in {cwd})" if cwd else ""))
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, check=False)


def _dpkg_version(package: str) -> str | None:
    if shutil.which("dpkg-query") is None:
        return None
    done = subprocess.run(
        ["dpkg-query", "-W", "-f=${Version}", package],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None


def _apt_install(package: str, version: str, log: Log) -> str | None:
    """Install package=version with apt-get; return an error message or None."""
    if shutil.which("apt-get") is None:
        return "apt-get is not available"
    if hasattr(os, "geteuid") and os.geteuid() != 0:
        return "installing needs root"
    spec = f"{package}={version}"
    env_cmd = ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", spec]
    done = _run(env_cmd, log)
    if done.returncode != 0:
        log("apt-get install failed; running apt-get update once and retrying")
        update = _run(["apt-get", "update"], log)
        if update.returncode != 0:
            return f"apt-get update failed: {update.stderr.strip()[-300:]}"
        done = _run(env_cmd, log)
    if done.returncode != 0:
        return f"apt-get install {spec} failed: {done.stderr.strip()[-300:]}"
    return None


def _apt_corpus(
    name: str, root: Path, package: str, version: str, sentinels: tuple[str, ...], log: Log
) -> Corpus:
    command = f"apt-get update && apt-get install -y {package}={version}"
    if not root.is_dir():
        log(f"{name}: {root} is missing; installing {package}={version}")
        error = _apt_install(package, version, log)
        if error is not None or not root.is_dir():
            raise CorpusUnavailable(
                f"{name}: {root} is missing and could not be installed "
                f"({error or 'the package did not create it'}); run as root: {command}"
            )
    installed = _dpkg_version(package)
    note = ""
    if installed is not None and installed != version:
        note = f"{package} {installed} installed, the devset pins {version}"
        log(f"{name}: warning: {note}")
    log(f"{name}: using {root} ({package} {installed or 'version unknown'})")
    return Corpus(
        name, root, DEVSET_DIR / f"{name}.json", sentinels, note, 1, _DEVSET1_LANGUAGES[name]
    )


def _python_corpus(log: Log) -> Corpus:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    dest = CORPORA_DIR / "python-stdlib"
    # The marker sits beside the tree (not in it) and is written only after a copy
    # finished, so its presence with the same interpreter means the copy is complete.
    # bench/index_speed.py writes the same marker.
    marker = CORPORA_DIR / "python-stdlib.prepared"
    stamp = f"{sys.version}\n{stdlib}\n"
    if dest.is_dir() and marker.is_file() and marker.read_text() == stamp:
        log(f"python-stdlib: reusing the complete copy {dest} of {stdlib}")
    else:
        log(f"python-stdlib: copying {stdlib} to {dest} (without site-packages, __pycache__)")
        if dest.exists():
            shutil.rmtree(dest)
        marker.unlink(missing_ok=True)
        dest.mkdir(parents=True)
        pack = subprocess.Popen(
            [
                *("tar", "--exclude=./site-packages", "--exclude=__pycache__"),
                *("-C", str(stdlib), "-cf", "-", "."),
            ],
            stdout=subprocess.PIPE,
        )
        unpack = subprocess.run(
            ["tar", "-C", str(dest), "-xf", "-"], stdin=pack.stdout, check=False
        )
        assert pack.stdout is not None
        pack.stdout.close()
        if pack.wait() != 0 or unpack.returncode != 0:
            raise CorpusUnavailable(f"python-stdlib: copying {stdlib} to {dest} failed")
        marker.write_text(stamp)
    note = ""
    if platform.python_version() != PYTHON_VERSION:
        note = f"Python {platform.python_version()}, the devset pins {PYTHON_VERSION}"
        log(f"python-stdlib: warning: {note}")
    return Corpus(
        "python-stdlib",
        dest,
        DEVSET_DIR / "python-stdlib.json",
        ("argparse.py", "test/test_argparse.py", "idlelib/editor.py"),
        note,
        1,
        "python",
    )


def _lock_digest(folder: Path) -> str:
    digest = hashlib.sha256()
    for name in ("package.json", "package-lock.json"):
        digest.update((folder / name).read_bytes())
    return digest.hexdigest()


def _npm_corpus(name: str, subroot: str, sentinels: tuple[str, ...], log: Log) -> Corpus:
    source = DEVSET_DIR / "npm" / name
    dest = CORPORA_DIR / name
    marker = CORPORA_DIR / f"{name}.prepared"
    root = dest / subroot
    if not (source / "package-lock.json").is_file():
        raise CorpusUnavailable(f"{name}: {source}/package-lock.json is missing")
    digest = _lock_digest(source)
    if root.is_dir() and marker.is_file() and marker.read_text().strip() == digest:
        log(f"{name}: reusing {dest} (npm ci of the same package-lock.json)")
    else:
        if shutil.which("npm") is None:
            raise CorpusUnavailable(
                f"{name}: npm is not installed; install Node.js + npm, then: "
                f"cp {source}/package*.json DIR && cd DIR && npm ci --ignore-scripts"
            )
        log(f"{name}: npm ci --ignore-scripts of {source}/package-lock.json into {dest}")
        marker.unlink(missing_ok=True)
        dest.mkdir(parents=True, exist_ok=True)
        for file in ("package.json", "package-lock.json"):
            shutil.copyfile(source / file, dest / file)
        done = _run(["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"], log, cwd=dest)
        for line in (done.stdout + done.stderr).strip().splitlines()[-5:]:
            log(f"    {line}")
        if done.returncode != 0 or not root.is_dir():
            raise CorpusUnavailable(f"{name}: npm ci failed in {dest} (exit {done.returncode})")
        marker.write_text(digest + "\n")
    return Corpus(
        name, root, DEVSET_DIR / f"{name}.json", sentinels, "", 1, _DEVSET1_LANGUAGES[name]
    )


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _tarball_corpus(name: str, log: Log) -> Corpus:
    """A dev set 2 repository: its tarball extracted under bench/.data/corpora/devset2."""
    entry = next((item for item in _devset2_catalog() if item["name"] == name), None)
    if entry is None:
        raise CorpusUnavailable(f"{name}: not in {DEVSET2_DIR}/corpora.json")
    tarball = DEVSET2_DIR / str(entry["tarball"])
    if not tarball.is_file():
        raise CorpusUnavailable(f"{name}: {tarball} is missing")
    base = CORPORA_DIR / "devset2"
    dest = base / name
    marker = base / f"{name}.prepared"
    digest = _file_digest(tarball)
    if dest.is_dir() and marker.is_file() and marker.read_text().strip() == digest:
        log(f"{name}: reusing {dest} (extracted from {tarball.name})")
    else:
        marker.unlink(missing_ok=True)
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        done = _run(["tar", "-xJf", str(tarball), "-C", str(dest)], log)
        if done.returncode != 0:
            raise CorpusUnavailable(f"{name}: tar -xJf {tarball} failed: {done.stderr[-300:]}")
        marker.write_text(digest + "\n")
    short = DEVSET2_DIR / f"{name}.short.json"
    return Corpus(
        name,
        dest,
        DEVSET2_DIR / f"{name}.json",
        (),
        "",
        2,
        str(entry.get("language", "")),
        short if short.is_file() else None,
    )


def prepare_corpus(name: str, log: Log) -> Corpus:
    """Obtain corpus `name` (or reuse what an earlier run obtained)."""
    CORPORA_DIR.mkdir(parents=True, exist_ok=True)
    if name == "python-stdlib":
        return _python_corpus(log)
    if name == "go-stdlib":
        return _apt_corpus(
            name,
            GO_ROOT,
            GO_PACKAGE,
            GO_VERSION,
            ("net/http/server.go", "cmd/go/main.go", "vendor/modules.txt"),
            log,
        )
    if name == "rust-std":
        return _apt_corpus(
            name,
            RUST_ROOT,
            RUST_PACKAGE,
            RUST_VERSION,
            ("core/src/iter/traits/iterator.rs", "alloc/src/sync.rs", "std/src/lib.rs"),
            log,
        )
    if name == "js-npm":
        return _npm_corpus(
            name,
            "node_modules",
            (
                "koa/lib/application.js",
                "ws/lib/receiver.js",
                "commander/lib/command.js",
                "koa-compose/index.js",
            ),
            log,
        )
    if name == "ts-rxjs":
        return _npm_corpus(
            name,
            "node_modules/rxjs/src",
            ("internal/Observable.ts", "internal/operators/catchError.ts"),
            log,
        )
    if name in DEVSET2_NAMES:
        return _tarball_corpus(name, log)
    choices = ", ".join((*CORPUS_NAMES, *DEVSET2_NAMES))
    raise CorpusUnavailable(f"unknown corpus {name!r}; choose from {choices}")
