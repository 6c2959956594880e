#!/usr/bin/env python3
"""Call-graph accuracy against a reference tool: codesift's callers and callees
compared with jedi's, at the level of enclosing definitions.

Run from the repository root (with the project's interpreter and `jedi` installed,
`pip install '.[bench]'`):

    PYTHONPATH=server python bench/graph_accuracy.py [--library NAME ...] [--sample 60]
        [--seed 7] [--write] [--out bench/RESULTS.md]

Corpora: Python libraries nobody here wrote, as installed in this environment
(so that jedi also resolves calls into their dependencies): each is copied from
site-packages into bench/.data/graph/<name>/ and indexed there by codesift
(no vectors). Defaults: rich (terminal rendering), anyio (async I/O) and
jsonschema (validation), which the package's own dependencies bring; none is in
a development set.
`--library cattrs` (structuring data into classes) measures a fourth library that
the call rules were not worked out on, as a check against rules fitted to the
three (its figures are a table row of their own; it is no default).

For `--sample` functions and methods per library (a fixed seed), the truth is:

- callers: jedi's references to the definition's name (`get_references`, scope
  project) that are calls (`name(` follows) or decorations (`@name`), and every
  other call or decoration of that name in the library whose `goto` lands on the
  definition (jedi's references leave out calls on a value its goto types, such
  as an instance of the class a function's return annotation names: a callee
  edge the reference counts would otherwise be a false caller edge), each taken
  to the definition that encloses it (a decoration: the scope around the
  decorated definition, where the decorator runs); recursive calls left out, as
  on codesift's side;
- callees: each call inside the definition's own body (not in nested
  definitions), resolved with jedi's `goto` (follow_imports), kept when it lands
  on a definition of the library.

codesift's answer is what `codesift callers` / `callees` show: the engine's graph
walk (depth 1, `calls` edges) from the same node. Both sides are sets of
definitions (codesift node ids; a jedi definition is matched to the node whose
name is defined on its line). Precision, recall and F1 are micro-averaged over
the sampled definitions, per library and in all; recall is also given per call
shape of the truth's edges (`f()`, `self.f()`, `obj.f()`, `a.b.f()`,
`super().f()`, `@decorator`), precision per call shape of codesift's edges (the
shape at the edge's recorded line). Misses and false edges are listed in
bench/.data/graph_accuracy-last.json. A fresh jedi Script is made per query (a
reused one caches inference).

With --write, the section between `<!-- graph_accuracy:begin -->` and
`<!-- graph_accuracy:end -->` of --out is replaced (added at the end when missing);
`--language c` alone writes its own section, `graph_accuracy_c` (and
bench/results/graph_accuracy_c.json).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import sysconfig
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
DATA_DIR = BENCH_DIR / ".data"
GRAPH_DIR = DATA_DIR / "graph"
sys.path.insert(0, str(REPO_DIR / "server"))

import jedi  # noqa: E402

from codesift.engine import Engine, GraphQuery, Workspace  # noqa: E402
from graph_c import C_LIBRARIES, C_SHAPES  # noqa: E402
from graph_edges import (  # noqa: E402
    GO_LIBRARIES,
    GO_SHAPES,
    TS_CHECK_LIBRARIES,
    TS_LIBRARIES,
    TS_PACKAGES,
    TS_SHAPES,
    Result,
    Tally,
)
from graph_edges import measure as measure_edges  # noqa: E402
from runinfo import head_commit, markdown_tables, write_results, write_section  # noqa: E402

# Not in either development set, and not the ones the call-graph report measured.
DEFAULT_LIBRARIES = ("rich", "anyio", "jsonschema")
# A check against rules fitted to the defaults: measured only when named
# (`--library cattrs`), its figures reported apart.
CHECK_LIBRARIES = ("cattrs",)
SHAPES = ("f()", "self.f()", "obj.f()", "a.b.f()", "super().f()", "@decorator")
_DEF = re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+([A-Za-z_][A-Za-z0-9_]*)")


@dataclass(frozen=True, slots=True)
class Node:
    id: int
    path: str
    kind: str
    name: str
    qualified_name: str
    start: int
    end: int
    def_line: int  # the line `def name` / `class name` is on


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def loadavg() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def site_packages() -> Path:
    return Path(sysconfig.get_paths()["purelib"])


def prepare(library: str) -> Path:
    """The library's copy (bench/.data/graph/<name>/<name>), refreshed when the
    installed version changed; the folder indexed is its parent."""
    source = site_packages() / library
    if not source.is_dir():
        raise SystemExit(f"{library} is not installed here ({source} missing)")
    root = GRAPH_DIR / library
    stamp = root / ".source"
    version = f"{source}:{max(p.stat().st_mtime_ns for p in source.rglob('*.py'))}"
    if not stamp.exists() or stamp.read_text() != version:
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(source, root / library, ignore=shutil.ignore_patterns("__pycache__"))
        stamp.write_text(version)
    # Always a fresh index: the run measures the extraction of this code.
    shutil.rmtree(root / ".codesift", ignore_errors=True)
    return root


def def_line(lines: list[str], node_start: int, node_end: int, name: str) -> int:
    for number in range(node_start, min(node_end, len(lines)) + 1):
        match = _DEF.match(lines[number - 1])
        if match and match.group(1) == name:
            return number
    return node_start


class Library:
    """One indexed library: its nodes by file, and codesift's graph."""

    def __init__(self, name: str, root: Path) -> None:
        self.name = name
        self.root = root
        ws = Workspace.at(root, {"embedding": {"enabled": False}})
        self.engine = Engine(ws, vectors=False, quiet=True)
        conn = self.engine.connection()
        self.sources: dict[str, list[str]] = {}
        self.nodes: dict[int, Node] = {}
        self.by_file: dict[str, list[Node]] = defaultdict(list)
        self.by_def: dict[tuple[str, int], Node] = {}
        rows = conn.execute(
            "SELECT n.id, f.path, n.kind, n.name, n.qualified_name, n.start_line, n.end_line"
            " FROM nodes n JOIN files f ON f.id = n.file_id WHERE f.language = 'python'"
        ).fetchall()
        for node_id, path, kind, name_, qualified, start, end in rows:
            lines = self.lines(str(path))
            where = def_line(lines, int(start), int(end), str(name_))
            node = Node(
                int(node_id),
                str(path),
                str(kind),
                str(name_),
                str(qualified),
                int(start),
                int(end),
                where,
            )
            self.nodes[node.id] = node
            self.by_file[node.path].append(node)
            if kind != "module":
                self.by_def[(node.path, where)] = node
        self.project = jedi.Project(
            path=str(root), sys_path=[str(root), *sys.path], load_unsafe_extensions=False
        )

    def lines(self, path: str) -> list[str]:
        if path not in self.sources:
            text = (self.root / path).read_text(encoding="utf-8", errors="replace")
            self.sources[path] = text.splitlines()
        return self.sources[path]

    def enclosing(self, path: str, line: int, *, decorated: bool = False) -> Node | None:
        """The innermost node around `line` of `path` (a decoration: the scope
        around the definition it decorates)."""
        inside = [n for n in self.by_file.get(path, []) if n.start <= line <= n.end]
        if decorated:  # not the decorated definition itself (its span may hold the @)
            inside = [n for n in inside if not (n.kind != "module" and n.def_line > line)]
        if not inside:
            return None
        return min(inside, key=lambda n: (n.end - n.start, -n.start))

    def relative(self, module_path: Path | None) -> str | None:
        if module_path is None:
            return None
        try:
            return Path(module_path).resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return None


def shape_at(text: str, column: int, name: str) -> str:
    """The call shape of `name` written at `column` of a source line."""
    before = text[:column].rstrip()
    if text[:column].strip().startswith("@") and text.strip().startswith("@"):
        return "@decorator"
    if not before.endswith("."):
        return "f()"
    head = before[:-1]
    if head.endswith("super()"):
        return "super().f()"
    receiver = re.search(r"([A-Za-z_][A-Za-z0-9_]*(?:\(\))?(?:\.[A-Za-z_][A-Za-z0-9_]*)*)$", head)
    word = receiver.group(1) if receiver else ""
    if word in ("self", "cls"):
        return "self.f()"
    if "." in word:
        return "a.b.f()"
    return "obj.f()"


def truth_callers(lib: Library, node: Node) -> dict[int, str]:
    """Enclosing definitions of the calls and decorations of `node`, with the
    shape of each (first seen)."""
    lines = lib.lines(node.path)
    text = lines[node.def_line - 1]
    column = text.index(node.name, text.index("def" if node.kind != "class" else "class"))
    script = jedi.Script(path=str(lib.root / node.path), project=lib.project)
    out: dict[int, str] = {}
    for ref in script.get_references(node.def_line, column, include_builtins=False):
        if ref.is_definition():
            continue
        path = lib.relative(ref.module_path)
        if path is None or ref.line is None or ref.column is None:
            continue
        site = lib.lines(path)[ref.line - 1]
        after = site[ref.column + len(node.name) :].lstrip()
        # `@name` or `@name(...)` decorates with it; `@name.setter` does not call it.
        decorated = site.strip().startswith("@") and (not after or after.startswith("("))
        if not (after.startswith("(") or decorated):
            continue
        caller = lib.enclosing(path, ref.line, decorated=decorated)
        if caller is not None and caller.id != node.id:
            out.setdefault(caller.id, shape_at(site, ref.column, node.name))
    for path, line, column, decorated in call_sites(lib, node.name):
        caller = lib.enclosing(path, line, decorated=decorated)
        if caller is None or caller.id == node.id or caller.id in out:
            continue
        found = _goto(lib, path, line, column)
        if found is None:  # jedi gives up on some expressions: no truth there
            continue
        if any(lib.relative(d.module_path) == node.path and d.line == node.def_line for d in found):
            out[caller.id] = shape_at(lib.lines(path)[line - 1], column, node.name)
    return out


def _goto(lib: Library, path: str, line: int, column: int) -> list[Any] | None:
    """jedi's goto (imports followed) at a place of the library; None when jedi
    gives up on the expression."""
    script = jedi.Script(path=str(lib.root / path), project=lib.project)
    try:
        found: list[Any] = script.goto(line, column, follow_imports=True)
    except Exception:  # jedi raises plain exceptions on what it cannot follow
        return None
    return found


def call_sites(lib: Library, name: str) -> list[tuple[str, int, int, bool]]:
    """Every place in the library's files where `name` is called (`name(` on one
    line) or decorates (`@name`, `@a.name`): (path, line, column, decorated)."""
    called = re.compile(rf"(?<![\w]){re.escape(name)}\s*\(")
    decorator = re.compile(rf"^\s*@(?:[\w.]*\.)?({re.escape(name)})\b(?!\.)")
    defined = re.compile(rf"^\s*(?:async\s+)?(?:def|class)\s+{re.escape(name)}\b")
    out: list[tuple[str, int, int, bool]] = []
    for path in sorted(lib.by_file):
        for number, text in enumerate(lib.lines(path), start=1):
            if name not in text or defined.match(text):
                continue
            marked = decorator.match(text)
            if marked:
                out.append((path, number, marked.start(1), True))
                continue
            out.extend((path, number, m.start(), False) for m in called.finditer(text))
    return out


def _calls_in(tree: ast.AST, node: Node) -> list[ast.Call]:
    """The calls in the body of the definition on `node.def_line`, nested
    definitions left out."""
    target: ast.AST | None = None
    for item in ast.walk(tree):
        kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        if isinstance(item, kinds) and item.lineno == node.def_line:
            target = item
            break
    if target is None:
        return []
    calls: list[ast.Call] = []
    stack: list[ast.AST] = list(ast.iter_child_nodes(target))
    decorators = set(map(id, getattr(target, "decorator_list", [])))
    while stack:
        item = stack.pop()
        if id(item) in decorators:
            continue  # a decorator runs in the enclosing scope
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue  # a nested definition's calls are its own (a lambda's are not)
        if isinstance(item, ast.Call):
            calls.append(item)
        stack.extend(ast.iter_child_nodes(item))
    return calls


def truth_callees(lib: Library, node: Node, trees: dict[str, ast.AST]) -> dict[int, str]:
    path = node.path
    if path not in trees:
        trees[path] = ast.parse("\n".join(lib.lines(path)))
    lines = lib.lines(path)
    out: dict[int, str] = {}
    for call in _calls_in(trees[path], node):
        func = call.func
        if isinstance(func, ast.Name):
            line, column, name = func.lineno, func.col_offset, func.id
        elif isinstance(func, ast.Attribute) and func.end_lineno and func.end_col_offset:
            line, name = func.end_lineno, func.attr
            column = func.end_col_offset - len(func.attr)
        else:
            continue
        found = _goto(lib, path, line, column)
        if found is None:  # jedi gives up on some expressions: no truth there
            continue
        for definition in found:
            target_path = lib.relative(definition.module_path)
            if target_path is None or definition.line is None:
                continue
            target = lib.by_def.get((target_path, definition.line))
            if target is not None and target.id != node.id:
                out.setdefault(target.id, shape_at(lines[line - 1], column, name))
    return out


def ours(lib: Library, node: Node, direction: str) -> dict[int, tuple[int, str]]:
    """codesift's callers or callees of `node`: other node id -> (the edge's
    line, its confidence)."""
    walk = lib.engine.graph(node.id, GraphQuery(direction=direction, depth=1, max_nodes=1000))
    out: dict[int, tuple[int, str]] = {}
    for edge in walk.edges:
        if edge.kind != "calls" or edge.target is None:
            continue
        confidence = str(getattr(edge, "confidence", None) or edge.resolution or "")
        if direction == "callers" and edge.target == node.id and edge.source != node.id:
            out.setdefault(edge.source, (edge.line, confidence))
        elif direction == "callees" and edge.source == node.id and edge.target != node.id:
            out.setdefault(edge.target, (edge.line, confidence))
    return out


def edge_shape(lib: Library, path: str, line: int, name: str) -> str:
    lines = lib.lines(path)
    if not 1 <= line <= len(lines):
        return "f()"
    text = lines[line - 1]
    match = re.search(rf"\b{re.escape(name)}\b", text)
    return shape_at(text, match.start(), name) if match else "f()"


def measure(library: str, sample: int, seed: int) -> Result:
    started = time.perf_counter()
    root = prepare(library)
    log(f"[{library}] indexing {root}")
    lib = Library(library, root)
    candidates = sorted(
        (n for n in lib.nodes.values() if n.kind in ("function", "method")),
        key=lambda n: (n.path, n.start, n.qualified_name),  # by place: ids vary by version
    )
    chosen = random.Random(seed).sample(candidates, min(sample, len(candidates)))
    result = Result(library, sampled=len(chosen))
    trees: dict[str, ast.AST] = {}
    for number, node in enumerate(chosen, start=1):
        if number % 10 == 0:
            log(f"[{library}] {number}/{len(chosen)}")
        for direction in ("callers", "callees"):
            truth = (
                truth_callers(lib, node)
                if direction == "callers"
                else truth_callees(lib, node, trees)
            )
            found = ours(lib, node, direction)
            tally = result.callers if direction == "callers" else result.callees
            tally.add(set(truth), set(found))
            for other, shape in truth.items():
                counts = result.recall_by_shape.setdefault(f"{direction} {shape}", [0, 0])
                counts[1] += 1
                if other in found:
                    counts[0] += 1
                else:
                    result.misses.append(_edge_json(lib, direction, node, other, shape))
            for other, (line, confidence) in found.items():
                where = node.path if direction == "callees" else lib.nodes[other].path
                name = lib.nodes[other].name if direction == "callees" else node.name
                shape = truth.get(other) or edge_shape(lib, where, line, name)
                counts = result.precision_by_shape.setdefault(f"{direction} {shape}", [0, 0])
                counts[1] += 1
                known = result.precision_by_confidence.setdefault(
                    f"{direction} {confidence}", [0, 0]
                )
                known[1] += 1
                if other in truth:
                    counts[0] += 1
                    known[0] += 1
                else:
                    result.false_edges.append(_edge_json(lib, direction, node, other, shape, line))
    lib.engine.close()
    result.seconds = time.perf_counter() - started
    return result


def _edge_json(
    lib: Library, direction: str, node: Node, other: int, shape: str, line: int | None = None
) -> dict[str, Any]:
    peer = lib.nodes[other]
    return {
        "direction": direction,
        "definition": f"{node.qualified_name} ({node.path}:{node.def_line})",
        "other": f"{peer.qualified_name} ({peer.path}:{peer.def_line})",
        "shape": shape,
        "line": line,
    }


def machine() -> str:
    cpu = ""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    python = platform.python_version()
    go = subprocess.run(["go", "version"], capture_output=True, text=True, check=False).stdout
    try:
        from importlib.metadata import version

        clang = f"libclang {version('libclang')}"
    except Exception:  # not installed: no C figures in this run
        clang = "no libclang"
    return (
        f"nproc {os.cpu_count()}, {cpu}; CPython {python}; jedi {jedi.__version__};"
        f" typescript {TS_PACKAGES['typescript']}; {go.strip() or 'no go'}; {clang}"
    )


def _fmt(p: float, r: float, f: float) -> str:
    return f"{p:.2f} / {r:.2f} / {f:.2f}"


def _ratio(hit: int, total: int) -> str:
    return f"{hit / total:.2f} ({total})" if total else "-"


REFERENCES = {
    "python": "jedi's references and goto at every call of the name (callers), goto (callees)",
    "typescript": "the TypeScript language service's getDefinitionAtPosition on every call",
    "go": "go/types on every call (GOPATH mode)",
    "c": "clang (libclang) on every call and function-like macro invocation, by USR",
}
# The heading of each language's tables (bench/headline.py reads them by it).
HEADINGS = {
    "python": "Python: jedi",
    "typescript": "TypeScript: the TypeScript language service",
    "go": "Go: go/types",
    "c": "C: clang",
}
SHAPES_OF = {"python": SHAPES, "typescript": TS_SHAPES, "go": GO_SHAPES, "c": C_SHAPES}
LANGUAGES = ("python", "typescript", "go", "c")


def render_language(language: str, results: list[Result]) -> list[str]:
    total_callers, total_callees = Tally(), Tally()
    recall: Counter[str] = Counter()
    recall_total: Counter[str] = Counter()
    precision: Counter[str] = Counter()
    precision_total: Counter[str] = Counter()
    confidence: Counter[str] = Counter()
    confidence_total: Counter[str] = Counter()
    rows = []
    for r in results:
        total_callers.merge(r.callers)
        total_callees.merge(r.callees)
        for table, hits, totals in (
            (r.recall_by_shape, recall, recall_total),
            (r.precision_by_shape, precision, precision_total),
            (r.precision_by_confidence, confidence, confidence_total),
        ):
            for key, (hit, all_) in table.items():
                hits[key] += hit
                totals[key] += all_
        rows.append(
            f"| {r.library} | {r.sampled} | {_fmt(*r.callers.scores())} |"
            f" {_fmt(*r.callees.scores())} | {r.unmapped} | {r.seconds:.0f} |"
        )
    rows.append(
        f"| **all** | {sum(r.sampled for r in results)} | {_fmt(*total_callers.scores())} |"
        f" {_fmt(*total_callees.scores())} | | |"
    )
    shape_rows = []
    shapes = list(SHAPES_OF[language])
    shapes += sorted({k.split(" ", 1)[1] for k in precision_total} - set(shapes))
    for direction in ("callers", "callees"):
        for shape in shapes:
            key = f"{direction} {shape}"
            if recall_total[key] or precision_total[key]:
                rec = _ratio(recall[key], recall_total[key])
                prec = _ratio(precision[key], precision_total[key])
                shape_rows.append(f"| {direction} | `{shape}` | {rec} | {prec} |")
    confidence_rows = [
        f"| {key.split(' ', 1)[0]} | {key.split(' ', 1)[1] or '-'} |"
        f" {_ratio(confidence[key], confidence_total[key])} |"
        for key in sorted(confidence_total)
    ]
    return [
        f"### {HEADINGS[language]}",
        "",
        f"Reference: {REFERENCES[language]}.",
        "",
        "| library | sampled | callers P / R / F1 | callees P / R / F1 | unmapped | s |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
        "Recall by the shape of the reference's call, precision by the shape at codesift's"
        " edge (count in brackets):",
        "",
        "| side | shape | recall | precision |",
        "|---|---|---|---|",
        *shape_rows,
        "",
        "Precision by the confidence codesift gives its edge:",
        "",
        "| side | confidence | precision |",
        "|---|---|---|",
        *confidence_rows,
        "",
    ]


def render(
    results: list[Result], commit: str, seed: int, load: tuple[str, str], title: str = ""
) -> str:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    sample = max((r.sampled for r in results), default=0)
    body = [
        title or "## Call-graph accuracy (`bench/graph_accuracy.py`)",
        "",
        f"Run {now} at commit `{commit}`; machine: {machine()}; load average {load[0]} at"
        f" start, {load[1]} at end. Callers and callees compared at the level of enclosing"
        f" definitions; {sample} functions and methods sampled per library (seed {seed});"
        " each library copied and indexed without vectors. Unmapped: reference edges with"
        " an end codesift has no node for (left out of both sides).",
        "",
    ]
    for language in LANGUAGES:
        mine = [r for r in results if r.language == language]
        if mine:
            body += render_language(language, mine)
    body.append("Misses and false edges: bench/.data/graph_accuracy-last.json.")
    return "\n".join(body)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--language",
        action="append",
        choices=LANGUAGES,
        help="languages to measure (repeatable; default all)",
    )
    parser.add_argument("--library", action="append", help="one library (repeatable)")
    parser.add_argument("--sample", type=int, default=60)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--out", type=Path, default=BENCH_DIR / "RESULTS.md")
    args = parser.parse_args()
    GRAPH_DIR.mkdir(parents=True, exist_ok=True)
    start_load = loadavg()
    wanted = {
        "python": list(DEFAULT_LIBRARIES)
        + [n for n in CHECK_LIBRARIES if n in (args.library or ())],
        "typescript": list(TS_LIBRARIES)
        + [n for n in TS_CHECK_LIBRARIES if n in (args.library or ())],
        "go": list(GO_LIBRARIES),
        "c": list(C_LIBRARIES),
    }
    results: list[Result] = []
    for language in args.language or LANGUAGES:
        for name in wanted[language]:
            if args.library and name not in args.library:
                continue
            if language == "python":
                results.append(measure(name, args.sample, args.seed))
            else:
                results.append(measure_edges(language, name, args.sample, args.seed))
    raw = {
        r.library: {
            "language": r.language,
            "callers": r.callers.scores(),
            "callees": r.callees.scores(),
            # (both, reference only, codesift only): the micro-averages' counts
            "counts": {
                side: [tally.both, tally.truth_only, tally.ours_only]
                for side, tally in (("callers", r.callers), ("callees", r.callees))
            },
            "recall_by_shape": r.recall_by_shape,
            "precision_by_shape": r.precision_by_shape,
            "precision_by_confidence": r.precision_by_confidence,
            "misses": r.misses,
            "false_edges": r.false_edges,
        }
        for r in results
    }
    (DATA_DIR / "graph_accuracy-last.json").write_text(json.dumps(raw, indent=1))
    # C alone has a section and a results file of its own (graph_accuracy_c), so that
    # a run of the fourth language leaves the other three's figures as they are.
    c_only = args.language == ["c"]
    title = "## Call-graph accuracy, C (`bench/graph_accuracy.py --language c`)" if c_only else ""
    body = render(results, head_commit(), args.seed, (start_load, loadavg()), title)
    print(body)
    if args.write:
        name = "graph_accuracy_c" if c_only else "graph_accuracy"
        write_section(args.out, body, f"<!-- {name}:begin -->", f"<!-- {name}:end -->")
        figures = {"libraries": raw, "tables": markdown_tables(body)}
        write_results(name, figures, drop=("misses", "false_edges"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
