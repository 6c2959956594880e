#!/usr/bin/env python3
"""Extraction golden: dump what parsing makes of a source tree, and compare it later.

Run by hand from the repository root (with the project's interpreter):

    PYTHONPATH=server python bench/extraction_golden.py --write /tmp/extract-golden.json
    PYTHONPATH=server python bench/extraction_golden.py --check /tmp/extract-golden.json
        [--root DIR] [PATH ...]

Every file under the given paths (default: server, tests and bench of --root, which
defaults to the repository root) that has a tree-sitter grammar is parsed as the
indexer parses it (`parse_source` with the default settings), and every node (kind,
name, qualified name, parent, span, signature, docstring), edge (kind, src, dst, name,
hint, line) and chunk (layer, node, span, text) is written to one JSON file. `--check`
parses again and reports the first files that differ; it exits 1 when any does.

A refactoring of the extractor must leave the dump unchanged. The files of a working
checkout change under other edits: copy the tree somewhere first and point --root at
the copy for both runs. tests/unit/test_extractor_golden.py runs the same comparison
on tests/fixtures in CI.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from pathlib import Path
from typing import Any

from codesift.config import IndexSettings
from codesift.parsing import parse_source
from codesift.parsing.languages import detect_language, spec_for

REPO = Path(__file__).resolve().parent.parent
DEFAULT_PATHS = ("server", "tests", "bench")
_SKIP_DIRS = frozenset({".git", "__pycache__", ".data", ".codesift", "node_modules"})


def source_files(root: Path, paths: list[str]) -> list[str]:
    """Paths relative to `root`, sorted, of the files under `paths` with a grammar."""
    found: set[str] = set()
    for rel in paths:
        start = root / rel
        if start.is_file():
            candidates = [start]
        else:
            candidates = []
            for dirpath, dirnames, filenames in os.walk(start):
                dirnames[:] = [d for d in dirnames if d not in _SKIP_DIRS]
                candidates.extend(Path(dirpath) / name for name in filenames)
        for path in candidates:
            rel_path = path.relative_to(root).as_posix()
            language = detect_language(rel_path)
            if language != "markdown" and spec_for(language) is not None:
                found.add(rel_path)
    return sorted(found)


def dump_file(root: Path, rel_path: str) -> dict[str, Any]:
    """Nodes, edges and chunks of one file as plain JSON data."""
    text = (root / rel_path).read_text(encoding="utf-8")
    parsed = parse_source(text, rel_path, detect_language(rel_path), IndexSettings())
    return {
        "language": parsed.language,
        "errors": parsed.errors,
        "nodes": [dataclasses.asdict(n) for n in parsed.nodes],
        "edges": [dataclasses.asdict(e) for e in parsed.edges],
        "chunks": [dataclasses.asdict(c) for c in parsed.chunks],
    }


def dump(root: Path, rel_paths: list[str]) -> dict[str, dict[str, Any]]:
    return {rel_path: dump_file(root, rel_path) for rel_path in rel_paths}


def differences(expected: dict[str, Any], actual: dict[str, Any], limit: int = 20) -> list[str]:
    """Human-readable lines naming the files (and first records) that differ."""
    out: list[str] = []
    for rel_path in sorted(set(expected) | set(actual)):
        if rel_path not in actual:
            out.append(f"{rel_path}: missing now")
        elif rel_path not in expected:
            out.append(f"{rel_path}: new file")
        elif expected[rel_path] != actual[rel_path]:
            old, new = expected[rel_path], actual[rel_path]
            for field in ("language", "errors", "nodes", "edges", "chunks"):
                if old[field] == new[field]:
                    continue
                if not isinstance(old[field], list):
                    out.append(f"{rel_path}: {field} {old[field]!r} -> {new[field]!r}")
                    continue
                pairs = zip(old[field], new[field], strict=False)
                at = next((i for i, (a, b) in enumerate(pairs) if a != b), None)
                if at is None:
                    out.append(f"{rel_path}: {field}: {len(old[field])} -> {len(new[field])}")
                else:
                    out.append(
                        f"{rel_path}: {field}[{at}]: {old[field][at]!r} -> {new[field][at]!r}"
                    )
        if len(out) >= limit:
            break
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", metavar="JSON", type=Path, help="write the dump here")
    mode.add_argument("--check", metavar="JSON", type=Path, help="compare with this dump")
    parser.add_argument("--root", type=Path, default=REPO, help="tree to parse")
    parser.add_argument("paths", nargs="*", default=list(DEFAULT_PATHS))
    args = parser.parse_args(argv)
    root = args.root.resolve()
    rel_paths = source_files(root, args.paths)
    data = dump(root, rel_paths)
    nodes = sum(len(f["nodes"]) for f in data.values())
    edges = sum(len(f["edges"]) for f in data.values())
    chunks = sum(len(f["chunks"]) for f in data.values())
    languages = sorted({f["language"] for f in data.values()})
    summary = (
        f"{len(data)} files ({len(languages)} languages), "
        f"{nodes} nodes, {edges} edges, {chunks} chunks"
    )
    if args.write is not None:
        args.write.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", "utf-8")
        print(f"wrote {args.write}: {summary}")
        return 0
    expected = json.loads(args.check.read_text("utf-8"))
    diff = differences(expected, data)
    if diff:
        print(f"DIFFERENT from {args.check}:", *diff, sep="\n  ")
        return 1
    print(f"identical to {args.check}: {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
