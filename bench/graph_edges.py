"""Call-graph accuracy for the languages whose reference tool lists every call
site at once: TypeScript (the TypeScript language service's
getDefinitionAtPosition on each call, `graph_reference/ts_calls.cjs`) and Go
(go/types on each call, `graph_reference/go_calls.go`). Used by
bench/graph_accuracy.py (`--language typescript` / `--language go`).

The reference prints one JSON line per call site that lands on a definition of
the project: where the call is (path, line, column, the callee's name, its
shape) and where the definition's name is (path, line, name). Both ends are
taken to codesift's nodes: the call to the innermost node around its line (its
enclosing definition, or the file's module node), the definition to the
innermost node of that name around its line. The truth of a sampled
definition's callers is the set of enclosing nodes of the calls that land on
it; of its callees, the set of definitions its own calls land on (calls in a
nested definition that codesift has a node for are that node's). Recursive
calls are left out on both sides, as the graph walk leaves them out. C
(clang through libclang) is in graph_c.py.

Corpora (pinned, cached under bench/.data/graph, never committed):
- TypeScript from npm: rxjs 7.8.1, mobx 6.13.5, immer 10.1.1 (their `src/`),
  with typescript 5.6.3 as the reference; @tanstack/query-core 5.59.0 as a check
  the call rules were not worked out on (only when named with --library);
- Go from Debian's source packages (`apt-get install golang-go
  golang-github-spf13-cobra-dev golang-github-gorilla-mux-dev
  golang-github-go-chi-chi-dev`): cobra 1.6.1, gorilla/mux 1.8.0, chi 5.0.7,
  type-checked in GOPATH mode with Debian's Go (no module proxy needed).
Test files, testdata and `_`-folders (`_examples`) are left out of the copies (go/build
and so the reference do not see them).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
DATA_DIR = BENCH_DIR / ".data"
GRAPH_DIR = DATA_DIR / "graph"
REFERENCE_DIR = BENCH_DIR / "graph_reference"
sys.path.insert(0, str(BENCH_DIR.parent / "server"))

from codesift.engine import Engine, GraphQuery, Workspace  # noqa: E402
from graph_c import c_shape, prepare_c, reference_c  # noqa: E402

TS_PACKAGES = {
    "typescript": "5.6.3",
    "rxjs": "7.8.1",
    "mobx": "6.13.5",
    "immer": "10.1.1",
    "@tanstack/query-core": "5.59.0",
}
TS_LIBRARIES = ("rxjs", "mobx", "immer")
# A check against rules fitted to the three: measured only when named (`--library
# @tanstack/query-core`), its figures reported apart.
TS_CHECK_LIBRARIES = ("@tanstack/query-core",)
# library -> (import path, Debian package, its folder under /usr/share/gocode/src)
GO_LIBRARIES = {
    "cobra": ("github.com/spf13/cobra", "golang-github-spf13-cobra-dev", ""),
    "mux": ("github.com/gorilla/mux", "golang-github-gorilla-mux-dev", ""),
    "chi": ("github.com/go-chi/chi/v5", "golang-github-go-chi-chi-dev", "github.com/go-chi/chi"),
}
GOCODE = Path("/usr/share/gocode/src")
TS_SHAPES = (
    "f()",
    "f() imported",
    "f() aliased import",
    "this.f()",
    "super.f()",
    "obj.f()",
    "Klass.f()",
    "a.b.f()",
    "new X()",
    "ns.f()",
)
GO_SHAPES = ("f()", "pkg.F()", "recv.f()", "obj.f()", "a.b.f()")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


@dataclass(frozen=True, slots=True)
class Node:
    id: int
    path: str
    kind: str
    name: str
    qualified_name: str
    start: int
    end: int


@dataclass(slots=True)
class Tally:
    """Edges found by both, by the truth only and by codesift only."""

    both: int = 0
    truth_only: int = 0
    ours_only: int = 0

    def add(self, truth: set[int], ours: set[int]) -> None:
        self.both += len(truth & ours)
        self.truth_only += len(truth - ours)
        self.ours_only += len(ours - truth)

    def merge(self, other: Tally) -> None:
        self.both += other.both
        self.truth_only += other.truth_only
        self.ours_only += other.ours_only

    def scores(self) -> tuple[float, float, float]:
        found = self.both + self.ours_only
        real = self.both + self.truth_only
        p = self.both / found if found else 1.0
        r = self.both / real if real else 1.0
        f = 2 * p * r / (p + r) if p + r else 0.0
        return p, r, f


@dataclass(slots=True)
class Result:
    library: str
    language: str = "python"
    callers: Tally = field(default_factory=Tally)
    callees: Tally = field(default_factory=Tally)
    # shape -> [found, total] of the truth's edges; [right, total] of codesift's
    recall_by_shape: dict[str, list[int]] = field(default_factory=dict)
    precision_by_shape: dict[str, list[int]] = field(default_factory=dict)
    # confidence -> [right, total] of codesift's edges
    precision_by_confidence: dict[str, list[int]] = field(default_factory=dict)
    misses: list[dict[str, Any]] = field(default_factory=list)
    false_edges: list[dict[str, Any]] = field(default_factory=list)
    sampled: int = 0
    unmapped: int = 0  # reference edges with an end codesift has no node for
    seconds: float = 0.0


# -- corpora --------------------------------------------------------------------------


def _fresh(root: Path) -> Path:
    """Always a fresh index: the run measures the extraction of this code."""
    shutil.rmtree(root / ".codesift", ignore_errors=True)
    return root


def prepare_typescript(library: str) -> Path:
    tools = GRAPH_DIR / "ts"
    manifest = json.dumps({"private": True, "dependencies": TS_PACKAGES}, sort_keys=True)
    current = (tools / "package.json").read_text() if (tools / "package.json").exists() else ""
    if current != manifest or not (tools / "node_modules" / library).is_dir():
        tools.mkdir(parents=True, exist_ok=True)
        (tools / "package.json").write_text(manifest)
        log("npm install (pinned reference and corpora)")
        subprocess.run(
            ["npm", "install", "--silent", "--no-audit", "--no-fund"], cwd=tools, check=True
        )
    root = GRAPH_DIR / "ts-src" / library
    stamp = root / ".source"
    version = f"{library}@{TS_PACKAGES[library]}"
    if not stamp.exists() or stamp.read_text() != version:
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        shutil.copytree(tools / "node_modules" / library / "src", root / "src")
        for path in root.rglob("*.d.ts"):
            path.unlink()
        stamp.write_text(version)
    return _fresh(root)


def prepare_go(library: str) -> Path:
    import_path, package, folder = GO_LIBRARIES[library]
    source = GOCODE / (folder or import_path)
    if not source.is_dir() or shutil.which("go") is None:
        raise SystemExit(f"{library}: apt-get install golang-go {package}")
    root = GRAPH_DIR / "gopath" / "src" / import_path
    stamp = root / ".source"
    version = f"{source}:{max(p.stat().st_mtime_ns for p in source.rglob('*.go'))}"
    if not stamp.exists() or stamp.read_text() != version:
        shutil.rmtree(root, ignore_errors=True)
        shutil.copytree(source, root, ignore=shutil.ignore_patterns("*_test.go", "testdata", "_*"))
        stamp.write_text(version)
    return _fresh(root)


def reference_edges(language: str, library: str, root: Path) -> list[dict[str, Any]]:
    if language == "c":
        return reference_c(library, root)
    if language == "typescript":
        env = {**os.environ, "NODE_PATH": str(GRAPH_DIR / "ts" / "node_modules")}
        command = ["node", str(REFERENCE_DIR / "ts_calls.cjs"), str(root)]
    else:
        gopath = f"{GRAPH_DIR / 'gopath'}:{GOCODE.parent}"
        env = {**os.environ, "GO111MODULE": "off", "GOPATH": gopath, "GOFLAGS": ""}
        command = ["go", "run", str(REFERENCE_DIR / "go_calls.go"), ".", GO_LIBRARIES[library][0]]
    done = subprocess.run(command, cwd=root, env=env, capture_output=True, text=True, check=True)
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


# -- codesift's side ----------------------------------------------------------------


class Project:
    """One indexed corpus: its nodes by file, and codesift's graph."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._lines: dict[str, list[str]] = {}
        ws = Workspace.at(root, {"embedding": {"enabled": False}})
        self.engine = Engine(ws, vectors=False, quiet=True)
        rows = (
            self.engine.connection()
            .execute(
                "SELECT n.id, f.path, n.kind, n.name, n.qualified_name, n.start_line,"
                " n.end_line FROM nodes n JOIN files f ON f.id = n.file_id"
            )
            .fetchall()
        )
        self.nodes: dict[int, Node] = {}
        self.by_file: dict[str, list[Node]] = defaultdict(list)
        # TypeScript overloads are one function: its signatures and implementation
        # (nodes of one qualified name in one file) count as the last of them.
        self.canonical: dict[int, int] = {}
        last: dict[tuple[str, str], int] = {}
        for node_id, path, kind, name, qualified, start, end in rows:
            node = Node(int(node_id), str(path), str(kind), str(name), str(qualified), start, end)
            self.nodes[node.id] = node
            self.by_file[node.path].append(node)
            if kind in ("function", "method"):
                key = (node.path, node.qualified_name)
                last[key] = max(last.get(key, node.id), node.id)
        for node in self.nodes.values():
            self.canonical[node.id] = last.get((node.path, node.qualified_name), node.id)

    def line(self, path: str, number: int) -> str:
        if path not in self._lines:
            text = (self.root / path).read_text(encoding="utf-8", errors="replace")
            self._lines[path] = text.splitlines()
        lines = self._lines[path]
        return lines[number - 1] if 1 <= number <= len(lines) else ""

    def prototype(self, node: Node) -> bool:
        """A C header's prototype (a declaration, no body): the calls reach its
        definition, so it is not sampled."""
        if not node.path.endswith(".h"):
            return False
        text = " ".join(self.line(node.path, n) for n in range(node.start, node.end + 1))
        return "{" not in text

    def enclosing(self, path: str, line: int) -> Node | None:
        inside = [n for n in self.by_file.get(path, []) if n.start <= line <= n.end]
        return min(inside, key=lambda n: (n.end - n.start, -n.start)) if inside else None

    def definition(self, path: str, line: int, name: str) -> Node | None:
        """The node of the definition named `name` around `line` (a TypeScript
        constructor, `__constructor` to the language service: its class, which
        `new X()` calls)."""
        inside = [
            n
            for n in self.by_file.get(path, [])
            if n.start <= line <= n.end
            and (n.kind == "class" if name == "__constructor" else n.name == name)
        ]
        return min(inside, key=lambda n: (n.end - n.start, -n.start)) if inside else None

    def ours(self, node: Node, direction: str) -> dict[int, tuple[int, str]]:
        """codesift's callers or callees: other node id -> (edge line, confidence)."""
        query = GraphQuery(direction=direction, depth=1, max_nodes=2000)
        out: dict[int, tuple[int, str]] = {}
        group = [n for n, c in self.canonical.items() if c == node.id]
        edges = [e for n in group for e in self.engine.graph(n, query).edges]
        for edge in edges:
            if edge.kind != "calls" or edge.target is None or edge.source == edge.target:
                continue
            source, target = self.canonical[edge.source], self.canonical[edge.target]
            if source == target:
                continue
            confidence = str(getattr(edge, "confidence", None) or edge.resolution or "")
            if direction == "callers" and target == node.id:
                out.setdefault(source, (edge.line, confidence))
            elif direction == "callees" and source == node.id:
                out.setdefault(target, (edge.line, confidence))
        return out


def text_shape(text: str, name: str) -> str:
    """The shape of a call of `name` as written on a line (for codesift's edges
    the reference does not have)."""
    at = text.find(f"{name}(")
    if at < 0:
        at = text.find(name)
    before = text[: max(at, 0)].rstrip()
    if before.endswith("new"):
        return "new X()"
    if not before.endswith("."):
        return "f()"
    head = before[:-1]
    if head.endswith(("this", "self")):
        return "this.f()"
    if head.endswith("super"):
        return "super.f()"
    word = head.split()[-1] if head.split() else ""
    return "a.b.f()" if "." in word.lstrip("(!") else "obj.f()"


def _count(table: dict[str, list[int]], key: str, hit: bool) -> None:
    counts = table.setdefault(key, [0, 0])
    counts[1] += 1
    counts[0] += int(hit)


def measure(language: str, library: str, sample: int, seed: int) -> Result:
    started = time.perf_counter()
    prepare = {"typescript": prepare_typescript, "go": prepare_go, "c": prepare_c}[language]
    root = prepare(library)
    log(f"[{library}] reference ({language})")
    reference = reference_edges(language, library, root)
    log(f"[{library}] indexing {root}")
    project = Project(root)
    result = Result(library, language)
    # truth: (caller node, callee node) -> shape of the first call
    truth: dict[tuple[int, int], str] = {}
    for site in reference:
        caller = project.enclosing(site["path"], site["line"])
        callee = project.definition(site["target"], site["target_line"], site["target_name"])
        if caller is None or callee is None:
            result.unmapped += 1
            continue
        caller_id, callee_id = project.canonical[caller.id], project.canonical[callee.id]
        if caller_id != callee_id:
            truth.setdefault((caller_id, callee_id), site["shape"])
    callers_of: dict[int, dict[int, str]] = defaultdict(dict)
    callees_of: dict[int, dict[int, str]] = defaultdict(dict)
    for (caller_id, callee_id), shape in truth.items():
        callers_of[callee_id][caller_id] = shape
        callees_of[caller_id][callee_id] = shape
    kinds = ("function", "method", "constructor")
    # By place, not by id (ids depend on the order files were written): two
    # versions of codesift sample the same definitions.
    candidates = sorted(
        (
            n
            for n in project.nodes.values()
            if n.kind in kinds and project.canonical[n.id] == n.id and not project.prototype(n)
        ),
        key=lambda n: (n.path, n.start, n.qualified_name),
    )
    chosen = random.Random(seed).sample(candidates, min(sample, len(candidates)))
    result.sampled = len(chosen)
    for node in chosen:
        for direction in ("callers", "callees"):
            expected = (callers_of if direction == "callers" else callees_of).get(node.id, {})
            found = project.ours(node, direction)
            tally = result.callers if direction == "callers" else result.callees
            tally.add(set(expected), set(found))
            for other, shape in expected.items():
                _count(result.recall_by_shape, f"{direction} {shape}", other in found)
                if other not in found:
                    result.misses.append(_edge_json(project, direction, node, other, shape))
            for other, (line, confidence) in found.items():
                where = node.path if direction == "callees" else project.nodes[other].path
                name = project.nodes[other].name if direction == "callees" else node.name
                written = project.line(where, line)
                shape = expected.get(other) or (
                    c_shape(written, name) if language == "c" else text_shape(written, name)
                )
                right = other in expected
                _count(result.precision_by_shape, f"{direction} {shape}", right)
                _count(result.precision_by_confidence, f"{direction} {confidence}", right)
                if not right:
                    result.false_edges.append(
                        _edge_json(project, direction, node, other, confidence, line)
                    )
    project.engine.close()
    result.seconds = time.perf_counter() - started
    return result


def _edge_json(
    project: Project, direction: str, node: Node, other: int, note: str, line: int | None = None
) -> dict[str, Any]:
    peer = project.nodes[other]
    return {
        "direction": direction,
        "definition": f"{node.qualified_name} ({node.path}:{node.start})",
        "other": f"{peer.qualified_name} ({peer.path}:{peer.start})",
        "shape_or_confidence": note,
        "line": line,
    }
