#!/usr/bin/env python3
"""Extraction coverage on dev set 2 (../shared/devset2): what the grammar queries find.

Run by hand from the repository root (with the project's interpreter):

    PYTHONPATH=server python bench/extraction_coverage.py [--corpus NAME ...]
        [--language LANG ...] [--samples 3] [--save FILE.json] [--compare FILE.json]

Search can only return a definition that extraction produced as a node whose chunk
overlaps the target. For each corpus this tool

1. extracts `corpora/NAME.tar.xz` into bench/.data/devset2/NAME unless that folder
   exists (the layout of `mkdir -p DIR/NAME && tar -xJf corpora/NAME.tar.xz -C DIR/NAME`,
   shared with bench/quality.py; unpacked beside it first, then renamed, so a reader
   never sees half a tree);
2. indexes it with codesift's Indexer into a throwaway database (no embeddings);
3. checks every target of NAME.json and NAME.short.json:
   - a path target is covered when the file is indexed with at least one definition
     node (its chunks are then per definition, not only file-level lines);
   - a span target (symbol queries) is covered when a node named like the query's last
     component starts in the span's first lines (attribute, annotation or `@doc`
     lines may come first: anywhere up to the first line of the span that names the
     symbol outside an attribute) and a code chunk of the file overlaps the span;
4. counts nodes by kind per language, the language's source files with no node at all
   (a sign of a query gap), and the definition-like tree-sitter nodes (types such as
   `function_definition`, `class_declaration`, Elixir `def` calls, Zig `Decl`) that
   produced no node: per type, how many were seen and how many got a node, with a few
   sample locations of the misses.

`--save` writes the figures as JSON; `--compare` prints them beside an earlier save.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
SERVER_DIR = REPO_DIR / "server"
if str(SERVER_DIR) not in sys.path:
    sys.path.insert(0, str(SERVER_DIR))

import apsw  # noqa: E402
from tree_sitter import Node  # noqa: E402

from codesift.config import load_settings  # noqa: E402
from codesift.indexer import Indexer  # noqa: E402
from codesift.parsing.grammars import parser_for  # noqa: E402
from codesift.parsing.languages import LANGUAGES  # noqa: E402
from codesift.store.database import open_database  # noqa: E402

Json = dict[str, Any]

DEVSET2_DIR = Path(
    os.environ.get("CODESIFT_DEVSET2", REPO_DIR.parent / "shared" / "devset2")
).resolve()
EXTRACT_DIR = BENCH_DIR / ".data" / "devset2"
# Only what a VCS or codesift owns is left out, as bench/quality.py indexes a corpus.
WHOLE_TREE_EXCLUDED_DIRS = [".git", ".codesift"]
# How far above the definition's own first line a node may start (a doc comment or an
# attribute the extractor took in) and still count as starting at the header.
HEADER_SLACK = 2
# How many lines of attributes (annotations, `@doc` text) may open a definition's node.
ATTRIBUTE_LINES = 150

# Tree-sitter node types that are definitions, per language, beyond the generic rule
# (types ending in _definition/_declaration/_item/_specifier with a name).
_GENERIC_DEFINITION = re.compile(r"_(definition|declaration|item)$")
# Of the `_specifier` types only tagged types with a name and a body define something.
_BODY_REQUIRED = frozenset(
    {"struct_specifier", "union_specifier", "enum_specifier", "class_specifier"}
)
_NOT_DEFINITIONS = frozenset(
    {
        # parameters, fields, locals and imports are not nodes anywhere
        "parameter_declaration",
        "optional_parameter_declaration",
        "variadic_parameter_declaration",
        "type_parameter_declaration",
        "field_declaration",
        "import_declaration",
        "package_declaration",
        "namespace_use_declaration",
        "use_declaration",
        "using_declaration",
        "extern_crate_declaration",
        "local_variable_declaration",
        "variable_declaration",
        "lexical_declaration",
        "short_var_declaration",
        "var_declaration",
        "const_declaration",
        "let_declaration",
        "friend_declaration",
        "static_assert_declaration",
        "property_declaration",
        "protocol_property_declaration",
        "val_definition",
        "var_definition",
        "global_declaration",
        "constant_declaration",
        "field_definition",
        "public_field_definition",
        "attribute_item",
        "inner_attribute_item",
        "with_item",
        "case_item",
        "tuple_type_item",
        "accessor_declaration",
        "enum_member_declaration",
        "event_field_declaration",
        "multi_variable_declaration",
        "catch_declaration",
        "using_directive",
        # regions that qualify their members but are no node by design
        "impl_item",
        "namespace_definition",  # PHP `namespace A;` is the file's package; C++ checked below
        "file_scoped_namespace_declaration",
        "foreign_mod_item",
        "macro_invocation",
    }
)
# Extra definition types per language (names that the generic rule does not catch).
_EXTRA_DEFINITIONS: dict[str, frozenset[str]] = {
    "haskell": frozenset(
        {
            "data_type",
            "newtype",
            "type_synomym",
            "class",
            "type_family",
            "pattern_synonym",
        }
    ),
    "kotlin": frozenset({"companion_object", "secondary_constructor", "type_alias"}),
    "swift": frozenset({"init_declaration", "deinit_declaration", "subscript_declaration"}),
    "zig": frozenset({"Decl"}),
    "bash": frozenset({"function_definition"}),
    "ruby": frozenset({"method", "singleton_method", "class", "module"}),
    "python": frozenset({"function_definition", "class_definition"}),
    "cpp": frozenset({"namespace_definition"}),
}
_ELIXIR_DEFS = frozenset(
    {
        "def",
        "defp",
        "defmacro",
        "defmacrop",
        "defguard",
        "defguardp",
        "defdelegate",
        "defmodule",
        "defprotocol",
        "defimpl",
    }
)
_LAST_COMPONENT = re.compile(r"[^.:#\\/ ]+$")


# --- the dev set ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Target:
    """A target as bench/quality.py reads it: a path and an optional line span."""

    path: str
    start_line: int | None = None
    end_line: int | None = None

    def label(self) -> str:
        if self.start_line is None:
            return self.path
        return f"{self.path}:{self.start_line}-{self.end_line}"


@dataclass(frozen=True, slots=True)
class LabelledQuery:
    text: str
    category: str
    targets: tuple[Target, ...]


def _target(raw: Any) -> Target:
    if isinstance(raw, str):
        return Target(raw)
    return Target(str(raw["path"]), int(raw["start_line"]), int(raw["end_line"]))


def load_queries(path: Path) -> list[LabelledQuery]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [
        LabelledQuery(
            str(item["query"]),
            str(item["category"]),
            tuple(_target(t) for t in [*item["relevant"], *item.get("secondary", [])]),
        )
        for item in data
    ]


def corpus_names() -> list[str]:
    data = json.loads((DEVSET2_DIR / "corpora.json").read_text(encoding="utf-8"))
    return [str(item["name"]) for item in data]


def extract_corpus(name: str) -> Path:
    """bench/.data/devset2/NAME, unpacked from the tarball unless it exists."""
    root = EXTRACT_DIR / name
    if root.is_dir():
        return root
    EXTRACT_DIR.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=EXTRACT_DIR))
    try:
        tarball = DEVSET2_DIR / "corpora" / f"{name}.tar.xz"
        subprocess.run(["tar", "-xJf", str(tarball), "-C", str(partial)], check=True)
        try:
            partial.rename(root)
        except OSError:
            if not root.is_dir():  # not a concurrent extraction that won the race
                raise
    finally:
        if partial.exists():
            shutil.rmtree(partial, ignore_errors=True)
    return root


# --- the index ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class IndexedNode:
    kind: str
    name: str
    qualified_name: str
    start_line: int
    end_line: int


@dataclass(slots=True)
class IndexedFile:
    path: str
    language: str
    nodes: list[IndexedNode] = field(default_factory=list)  # without the module node
    code_chunks: list[tuple[int, int]] = field(default_factory=list)


def index_corpus(root: Path, db_path: Path) -> dict[str, IndexedFile]:
    settings = load_settings(
        root,
        {
            "index": {
                "db_path": str(db_path),
                "excluded_dirs": WHOLE_TREE_EXCLUDED_DIRS,
                "output_dirs": [],
            }
        },
    )
    conn = open_database(db_path)
    try:
        Indexer(root, settings, conn).run()
        return _read_index(conn)
    finally:
        conn.close()


def _read_index(conn: apsw.Connection) -> dict[str, IndexedFile]:
    files: dict[int, IndexedFile] = {}
    for file_id, path, language in conn.execute("SELECT id, path, language FROM files"):
        files[int(file_id)] = IndexedFile(str(path), str(language))
    for file_id, kind, name, qname, start, end in conn.execute(
        "SELECT file_id, kind, name, qualified_name, start_line, end_line FROM nodes"
        " WHERE parent_id IS NOT NULL ORDER BY file_id, start_line"
    ):
        files[int(file_id)].nodes.append(
            IndexedNode(str(kind), str(name), str(qname), int(start), int(end))
        )
    for file_id, start, end in conn.execute(
        "SELECT file_id, start_line, end_line FROM chunks WHERE layer = 'code'"
    ):
        files[int(file_id)].code_chunks.append((int(start), int(end)))
    return {f.path: f for f in files.values()}


# --- target coverage -----------------------------------------------------------------------


@dataclass(slots=True)
class TargetCheck:
    query: str
    category: str
    target: str
    language: str
    covered: bool
    detail: str


def _symbol_name(query: str) -> str:
    match = _LAST_COMPONENT.search(query.strip())
    return match.group(0) if match else query.strip()


_ATTRIBUTE_LINE = re.compile(r"^\s*(@|#\[|\[|//|/\*|\*|#|--|$)")


def _header_line(lines: list[str], target: Target, name: str) -> int:
    """The span's line that opens the definition: the first one naming the symbol
    that is not an attribute, annotation, `@doc`/`@spec` or comment line; heredoc
    text of an Elixir `@doc` is skipped as a whole."""
    assert target.start_line is not None and target.end_line is not None
    word = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")
    in_heredoc = False
    for number in range(target.start_line, min(target.end_line, len(lines)) + 1):
        text = lines[number - 1]
        quotes = text.count('"""') + text.count("'''")
        if in_heredoc:
            in_heredoc = quotes % 2 == 0
            continue
        if quotes % 2 == 1:
            in_heredoc = True
            continue
        if word.search(text) and not _ATTRIBUTE_LINE.match(text):
            return number
    return target.start_line


def check_target(
    query: LabelledQuery, target: Target, files: dict[str, IndexedFile], root: Path
) -> TargetCheck:
    indexed = files.get(target.path)
    language = indexed.language if indexed is not None else "-"
    check = TargetCheck(query.text, query.category, target.label(), language, False, "")
    if indexed is None:
        check.detail = "file not indexed"
        return check
    if target.start_line is None or target.end_line is None:
        # Parsed by a grammar, so its chunks follow its definitions (a script without
        # any function is still covered by its file-level chunks).
        check.covered = indexed.language in LANGUAGES and bool(indexed.code_chunks)
        check.detail = f"{len(indexed.nodes)} nodes" if indexed.nodes else "no nodes in the file"
        if indexed.language not in LANGUAGES:
            check.detail = f"indexed as {indexed.language}, without a grammar"
        return check
    lines = (root / target.path).read_text(encoding="utf-8", errors="replace").split("\n")
    name = _symbol_name(query.text)
    header = _header_line(lines, target, name)
    start, end = target.start_line, target.end_line
    named = [
        n for n in indexed.nodes if n.name == name and start - HEADER_SLACK <= n.start_line <= end
    ]
    at_header = [n for n in named if n.start_line <= header]
    chunk = any(s <= end and e >= start for s, e in indexed.code_chunks)
    header_chunk = any(s <= header <= e for s, e in indexed.code_chunks)
    if at_header and chunk:
        node = at_header[0]
        check.covered = True
        check.detail = f"{node.kind} {node.qualified_name} {node.start_line}-{node.end_line}"
        if not header_chunk:
            check.detail += "; no code chunk holds the header line"
    elif named:
        node = named[0]
        check.detail = (
            f"{node.kind} {node.qualified_name} starts at {node.start_line}, after the"
            f" header line {header}"
        )
    else:
        near = [n for n in indexed.nodes if n.start_line <= header <= n.end_line]
        inner = (
            f"; innermost node around it: {near[-1].kind} {near[-1].qualified_name}" if near else ""
        )
        check.detail = f"no node named {name!r} at line {header}{inner}"
    return check


# --- definitions tree-sitter sees ----------------------------------------------------------


def _is_definition(node: Node, language: str) -> bool:
    kind = node.type
    if language == "elixir":
        if kind != "call":
            return False
        target = node.child_by_field_name("target")
        return (
            target is not None
            and target.type == "identifier"
            and (target.text or b"").decode() in _ELIXIR_DEFS
        )
    if kind in ("property_declaration", "val_definition"):
        # Kotlin top-level properties; Scala vals of a file or an object (a class's
        # properties and vals are fields).
        parent = node.parent
        owner = parent.parent if parent is not None else None
        return parent is not None and (
            parent.type in ("source_file", "compilation_unit")
            or (
                kind == "val_definition"
                and owner is not None
                and owner.type in ("object_definition", "package_object")
            )
        )
    if language == "zig" and kind == "Decl":
        # `const std = @import("std");` and other plain constants are not nodes.
        text = (node.text or b"").decode("utf-8", "replace")
        return bool(
            re.search(
                r"\bfn\b|=\s*(extern\s+|packed\s+)?(struct|enum|union|opaque|error)\b"
                r"|=\s*[A-Z]\w*\([^;]*\);\s*$",  # a type function's result: `Xev(.epoll)`
                text,
            )
        )
    if language == "swift" and kind == "class_declaration":
        # an `extension` is a scope, not a node
        return (
            not (node.text or b"").lstrip().startswith(b"extension")
            and b"extension " not in (node.text or b"").split(b"{", 1)[0]
        )
    if kind in _EXTRA_DEFINITIONS.get(language, ()):
        return node.child_by_field_name("name") is not None or language in (
            "haskell",
            "zig",
            "kotlin",
            "swift",
            "ruby",
        )
    if kind in _BODY_REQUIRED:
        return (
            node.child_by_field_name("body") is not None
            and node.child_by_field_name("name") is not None
        )
    return kind not in _NOT_DEFINITIONS and bool(_GENERIC_DEFINITION.search(kind))


def _inside_function_body(node: Node) -> bool:
    """A definition local to a function (a nested helper is fine; a local type or
    variable is not something the index promises)."""
    walker = node.parent
    while walker is not None:
        if walker.type in ("compound_statement", "function_body", "statements", "Block"):
            return walker.parent is not None and "function" in walker.parent.type
        walker = walker.parent
    return False


def definition_nodes(text: str, language: str) -> Iterator[Node]:
    tree = parser_for(language).parse(text.encode("utf-8"))
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if _is_definition(node, language) and not _inside_function_body(node):
            yield node
        stack.extend(reversed(node.children))


def _has_node(start: int, end: int, nodes: list[IndexedNode]) -> bool:
    """A node starts on the definition's first line, or ends on its last line having
    started above it (attributes, an Elixir `@doc` heredoc, a wrapper) or inside its
    first lines."""
    for n in nodes:
        if n.start_line == start:
            return True
        if n.end_line == end and start - ATTRIBUTE_LINES <= n.start_line <= start + 3:
            return True
    return False


# --- per corpus ------------------------------------------------------------------------------


@dataclass(slots=True)
class LanguageFigures:
    files: int = 0
    files_without_nodes: list[str] = field(default_factory=list)
    kinds: Counter[str] = field(default_factory=Counter)
    definitions_seen: Counter[str] = field(default_factory=Counter)
    definitions_noded: Counter[str] = field(default_factory=Counter)
    missed_samples: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

    def as_json(self) -> Json:
        seen = sum(self.definitions_seen.values())
        noded = sum(self.definitions_noded.values())
        return {
            "files": self.files,
            "files_without_nodes": len(self.files_without_nodes),
            "files_without_nodes_paths": sorted(self.files_without_nodes),
            "nodes": sum(self.kinds.values()),
            "kinds": dict(self.kinds.most_common()),
            "definitions_seen": seen,
            "definitions_noded": noded,
            "by_type": {
                t: [self.definitions_seen[t], self.definitions_noded[t]]
                for t, _ in self.definitions_seen.most_common()
            },
        }


def measure_corpus(name: str, samples: int, languages: set[str]) -> Json:
    root = extract_corpus(name)
    with tempfile.TemporaryDirectory(prefix="codesift-coverage-") as tmp:
        files = index_corpus(root, Path(tmp) / "index.db")
    checks: list[TargetCheck] = []
    seen_targets: set[tuple[str, str]] = set()
    for suffix in (".json", ".short.json"):
        path = DEVSET2_DIR / f"{name}{suffix}"
        if not path.is_file():
            continue
        for query in load_queries(path):
            for target in query.targets:
                key = (query.text if target.start_line is not None else "", target.label())
                if key in seen_targets:
                    continue
                seen_targets.add(key)
                checks.append(check_target(query, target, files, root))
    figures: dict[str, LanguageFigures] = defaultdict(LanguageFigures)
    for indexed in files.values():
        if indexed.language not in LANGUAGES or (languages and indexed.language not in languages):
            continue
        lang = figures[indexed.language]
        lang.files += 1
        lang.kinds.update(n.kind for n in indexed.nodes)
        if not indexed.nodes:
            lang.files_without_nodes.append(indexed.path)
        text = (root / indexed.path).read_text(encoding="utf-8", errors="replace")
        for definition in definition_nodes(text, indexed.language):
            start = definition.start_point[0] + 1
            end = definition.end_point[0] + 1
            if definition.end_point[1] == 0 and end > start:
                end -= 1
            lang.definitions_seen[definition.type] += 1
            if _has_node(start, end, indexed.nodes):
                lang.definitions_noded[definition.type] += 1
            elif len(lang.missed_samples[definition.type]) < samples:
                first = text.split("\n")[start - 1].strip()[:90]
                lang.missed_samples[definition.type].append(f"{indexed.path}:{start}  {first}")
    return {
        "corpus": name,
        "targets": [
            {
                "query": c.query,
                "category": c.category,
                "target": c.target,
                "language": c.language,
                "covered": c.covered,
                "detail": c.detail,
            }
            for c in checks
        ],
        "languages": {lang: f.as_json() for lang, f in sorted(figures.items())},
        "_figures": figures,
    }


# --- output ------------------------------------------------------------------------------------


def _ratio(a: int, b: int) -> str:
    return f"{a}/{b}" if b else "-"


def print_corpus(result: Json, samples: int) -> None:
    name = result["corpus"]
    targets = result["targets"]
    spans = [t for t in targets if ":" in t["target"]]
    paths = [t for t in targets if ":" not in t["target"]]
    print(f"\n## {name}")
    print(
        f"targets: paths {_ratio(sum(t['covered'] for t in paths), len(paths))} covered,"
        f" spans {_ratio(sum(t['covered'] for t in spans), len(spans))} covered"
    )
    for t in targets:
        if not t["covered"] or ":" in t["target"]:
            mark = "ok  " if t["covered"] else "MISS"
            print(f"  {mark} {t['target']}  [{t['language']}] {t['detail']}")
    figures: dict[str, LanguageFigures] = result["_figures"]
    for lang, f in sorted(figures.items()):
        data = f.as_json()
        print(
            f"{lang}: {f.files} files ({len(f.files_without_nodes)} without nodes),"
            f" {data['nodes']} nodes; definitions with a node"
            f" {_ratio(data['definitions_noded'], data['definitions_seen'])}"
        )
        print("  kinds: " + ", ".join(f"{k} {n}" for k, n in f.kinds.most_common()))
        for path in f.files_without_nodes[:samples]:
            print(f"  no nodes: {path}")
        for kind, count in f.definitions_seen.most_common():
            noded = f.definitions_noded[kind]
            if noded < count:
                print(f"  {kind}: {noded}/{count} with a node")
                for sample in f.missed_samples.get(kind, [])[:samples]:
                    print(f"      {sample}")


def summary_rows(results: list[Json]) -> dict[str, Json]:
    """Per language over all corpora: span and path targets covered, definitions noded,
    files without nodes."""
    rows: dict[str, Json] = {}

    def row(lang: str) -> Json:
        return rows.setdefault(
            lang,
            {
                "spans": [0, 0],
                "paths": [0, 0],
                "definitions": [0, 0],
                "files": [0, 0],
                "nodes": 0,
            },
        )

    for result in results:
        for t in result["targets"]:
            r = row(t["language"])
            key = "spans" if ":" in t["target"] else "paths"
            r[key][0] += int(t["covered"])
            r[key][1] += 1
        for lang, data in result["languages"].items():
            r = row(lang)
            r["definitions"][0] += data["definitions_noded"]
            r["definitions"][1] += data["definitions_seen"]
            r["files"][0] += data["files_without_nodes"]
            r["files"][1] += data["files"]
            r["nodes"] += data["nodes"]
    return dict(sorted(rows.items()))


def print_summary(rows: dict[str, Json], before: dict[str, Json] | None) -> None:
    print("\n## per language")
    print(
        "| language | span targets | path targets | definitions with a node"
        " | files without nodes | nodes |"
    )
    print("|---|---|---|---|---|---|")
    for lang, r in rows.items():
        cells = []
        for key in ("spans", "paths", "definitions", "files"):
            now = _ratio(*r[key])
            old = before.get(lang, {}).get(key) if before else None
            cells.append(f"{_ratio(*old)} → {now}" if old and list(old) != list(r[key]) else now)
        nodes = str(r["nodes"])
        if before and lang in before and before[lang]["nodes"] != r["nodes"]:
            nodes = f"{before[lang]['nodes']} → {nodes}"
        print(f"| {lang} | " + " | ".join(cells) + f" | {nodes} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--corpus", action="append", default=[], help="default: all 20")
    parser.add_argument(
        "--language", action="append", default=[], help="report only these languages"
    )
    parser.add_argument("--samples", type=int, default=3, help="missed definitions shown per type")
    parser.add_argument("--save", type=Path, help="write the figures as JSON")
    parser.add_argument("--compare", type=Path, help="a JSON written by --save, shown as before")
    parser.add_argument("--quiet", action="store_true", help="only the per-language summary")
    args = parser.parse_args(argv)
    names = args.corpus or corpus_names()
    unknown = sorted(set(names) - set(corpus_names()))
    if unknown:
        parser.error(f"unknown corpus: {', '.join(unknown)}")
    results = []
    for name in names:
        result = measure_corpus(name, args.samples, set(args.language))
        if not args.quiet:
            print_corpus(result, args.samples)
        results.append(result)
    rows = summary_rows(results)
    before = None
    if args.compare:
        saved_before = json.loads(args.compare.read_text(encoding="utf-8"))
        # The same corpora as this run, so a partial run compares like with like.
        before = summary_rows([r for r in saved_before["corpora"] if r["corpus"] in names])
    print_summary(rows, before)
    if args.save:
        args.save.parent.mkdir(parents=True, exist_ok=True)
        saved = {
            "corpora": [{k: v for k, v in r.items() if not k.startswith("_")} for r in results],
            "summary": rows,
        }
        args.save.write_text(json.dumps(saved, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
