"""The C corpora of bench/graph_accuracy.py (`--language c`) and their
reference, clang (libclang from PyPI, `graph_reference/c_calls.py`).

Three C libraries nobody here wrote and no development set holds, taken from the
source distributions of PyPI packages that vendor them (pinned; downloaded once
with `pip download --no-binary :all:` and cached under bench/.data/graph/c-sdist):

- brotli 1.2.1 (`brotli` sdist): the compression library's `c/common`, `c/dec`,
  `c/enc` and its public headers `c/include`;
- cmark-gfm (`cmarkgfm` 2025.10.22 sdist): `third_party/cmark/src` and
  `extensions`, with the sdist's generated unix headers (config.h, export.h);
- lz4 (`lz4` 4.4.5 sdist): `lz4libs` (lz4, lz4hc, lz4frame, xxhash).

Each is copied to bench/.data/graph/c-src/<name>/ (command-line tools, tests and
language bindings left out) and both codesift and clang read that copy.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
GRAPH_DIR = BENCH_DIR / ".data" / "graph"
REFERENCE = BENCH_DIR / "graph_reference" / "c_calls.py"

# library -> (PyPI sdist, version, {folder in the sdist: folder in the copy}, clang flags)
C_LIBRARIES: dict[str, tuple[str, str, dict[str, str], tuple[str, ...]]] = {
    "brotli": (
        "brotli",
        "1.2.1",
        {"c/common": "common", "c/dec": "dec", "c/enc": "enc", "c/include": "include"},
        ("-Iinclude",),
    ),
    "cmark-gfm": (
        "cmarkgfm",
        "2025.10.22",
        {
            "third_party/cmark/src": "src",
            "third_party/cmark/extensions": "extensions",
            "generated/unix": "generated",
        },
        ("-Isrc", "-Iextensions", "-Igenerated"),
    ),
    "lz4": ("lz4", "4.4.5", {"lz4libs": "lib"}, ("-Ilib",)),
}
C_SHAPES = ("f()", "f() in a macro", "macro()", "fp()", "s->f()")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _sdist(package: str, version: str) -> Path:
    folder = GRAPH_DIR / "c-sdist"
    folder.mkdir(parents=True, exist_ok=True)
    found = [p for p in folder.glob("*.tar.gz") if p.name.lower().startswith(package.lower())]
    found = [p for p in found if f"-{version}.tar.gz" in p.name]
    if not found:
        log(f"pip download {package}=={version} (source distribution)")
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
             "--no-binary", ":all:", "-d", str(folder), f"{package}=={version}"],
            check=True,
        )  # fmt: skip
        found = [p for p in folder.glob(f"*-{version}.tar.gz")]
        found = [p for p in found if p.name.lower().startswith(package.lower())]
    if not found:
        raise SystemExit(f"no source distribution of {package} {version} in {folder}")
    return found[0]


def prepare_c(library: str) -> Path:
    package, version, folders, _ = C_LIBRARIES[library]
    root = GRAPH_DIR / "c-src" / library
    stamp = root / ".source"
    wanted = f"{package}=={version}"
    if not stamp.exists() or stamp.read_text() != wanted:
        archive = _sdist(package, version)
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        with tarfile.open(archive) as tar:
            top = tar.getnames()[0].split("/", 1)[0]
            for member in tar.getmembers():
                relative = member.name[len(top) + 1 :]
                for inside, copy in folders.items():
                    if not relative.startswith(inside + "/") or not member.isfile():
                        continue
                    if not relative.endswith((".c", ".h", ".inc")) or "/main.c" in relative:
                        continue  # the command-line tool is no part of the library
                    target = root / copy / relative[len(inside) + 1 :]
                    target.parent.mkdir(parents=True, exist_ok=True)
                    extracted = tar.extractfile(member)
                    if extracted is not None:
                        target.write_bytes(extracted.read())
        stamp.write_text(wanted)
    shutil.rmtree(root / ".codesift", ignore_errors=True)
    return root


def reference_c(library: str, root: Path) -> list[dict[str, Any]]:
    flags = C_LIBRARIES[library][3]
    done = subprocess.run(
        [sys.executable, str(REFERENCE), str(root), *flags],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    )
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def c_shape(text: str, name: str) -> str:
    """The shape of a call of `name` on a line, for codesift's edges clang does
    not have: through a struct's field (`s->f()`, `s.f()`), a pointer
    (`(*fp)()`), a macro (an all-caps name) or by name."""
    at = text.find(f"{name}(")
    if at < 0:
        at = text.find(name)
    before = text[: max(at, 0)].rstrip()
    if before.endswith(("->", ".")):
        return "s->f()"
    if before.endswith("(*") or before.endswith("*"):
        return "fp()"
    if name.isupper():
        return "macro()"
    return "f()"
