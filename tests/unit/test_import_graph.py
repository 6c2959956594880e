"""The package's import graph, computed from server/codesift with grimp (the graph
builder import-linter runs on): no import circle at any depth and no arrow that
runs back up the layers of docs/architecture.md.

- circles: between modules, and between the children of every package (a
  package counts as everything below it), type-only and function-level imports
  included;
- back-arrows: every top-level module and subpackage of `codesift` has a layer
  (LAYERS, highest first), and it imports only from layers below its own; two
  pieces of one layer are independent of each other. A new top-level module
  fails the test until it is given a layer.

A failure names every circle and every arrow, with the import's file and line.
The checks are tried on a graph with a circle and a back-arrow too, so that
they can fail.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import pytest

grimp = pytest.importorskip("grimp", reason="grimp comes with import-linter (the test extra)")

PACKAGE = "codesift"

# The layers of docs/architecture.md, highest first (names below `codesift`).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("cli",),
    ("web",),
    ("lsp", "mcp"),
    # What the front ends share: the network servers' guard, the CLI socket's
    # server side (the handler is the CLI's, passed down), the request defaults.
    ("serving", "local_socket_server", "front_defaults"),
    ("engine",),
    # The call pass a large index run leaves (it builds its jobs as the indexer does).
    ("call_pass",),
    ("retrieval", "indexer", "watcher"),
    # The index workers' pool, for the indexer and the call pass alike.
    ("worker_pool",),
    # Preparing a file: parsing, rows and (embedding/row_vectors.py) their vectors.
    ("preparation",),
    ("history", "embedding", "index_workers"),
    ("store",),
    ("workspace",),
    ("parsing",),
    # Plain data and the standard library only.
    ("config", "timespec", "tokens", "local_socket", "console_progress", "lazy_names", ""),
    ("errors",),
)

Graph = Mapping[str, set[str]]


def import_graph() -> tuple[Graph, object]:
    graph = grimp.build_graph(PACKAGE, cache_dir=None)
    edges = {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    return edges, graph


def strongly_connected(nodes: Iterable[str], edges: Graph) -> list[list[str]]:
    """The circles of a graph: its strongly connected components of two nodes or
    more (Tarjan's algorithm, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(edges.get(target, ())))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def child_of(package: str, module: str) -> str | None:
    """The child of `package` that `module` is or is below (None: not below it)."""
    if not module.startswith(package + "."):
        return None
    return package + "." + module[len(package) + 1 :].split(".", 1)[0]


def circles(edges: Graph) -> list[list[str]]:
    """Every circle: between modules, and between the children of each package."""
    found = strongly_connected(edges, edges)
    packages = {m.rsplit(".", 1)[0] for m in edges if "." in m}
    for package in sorted(packages):
        siblings: dict[str, set[str]] = {}
        for source, targets in edges.items():
            mine = child_of(package, source)
            if mine is None:
                continue
            for target in targets:
                theirs = child_of(package, target)
                if theirs is not None and theirs != mine:
                    siblings.setdefault(mine, set()).add(theirs)
        for component in strongly_connected(siblings, siblings):
            if component not in found:
                found.append(component)
    return found


def layer_of(module: str, layers: Sequence[Sequence[str]]) -> int | None:
    top = module.split(".")[1] if "." in module else ""
    for rank, names in enumerate(layers):
        if top in names:
            return rank
    return None


def back_arrows(edges: Graph, layers: Sequence[Sequence[str]]) -> list[tuple[str, str]]:
    """Every import from a top-level piece to one of its own layer or above."""
    found: list[tuple[str, str]] = []
    for source, targets in sorted(edges.items()):
        mine = layer_of(source, layers)
        for target in sorted(targets):
            theirs = layer_of(target, layers)
            same_piece = source.split(".")[:2] == target.split(".")[:2]
            if mine is None or theirs is None or same_piece:
                continue
            if theirs <= mine:
                found.append((source, target))
    return found


def unplaced(edges: Graph, layers: Sequence[Sequence[str]]) -> set[str]:
    return {m.split(".")[1] if "." in m else "" for m in edges if layer_of(m, layers) is None}


def where(graph: object, source: str, target: str) -> str:
    details = graph.get_import_details(importer=source, imported=target)  # type: ignore[attr-defined]
    lines = ", ".join(f"line {d['line_number']}" for d in details)
    return f"{source} -> {target} ({lines})"


def test_the_package_has_no_import_circle() -> None:
    edges, _ = import_graph()
    assert len(edges) > 200  # the whole package was read
    found = circles(edges)
    assert not found, "\n".join(" <-> ".join(c) for c in found)


def test_no_arrow_runs_back_up_the_layers() -> None:
    edges, graph = import_graph()
    assert not unplaced(edges, LAYERS), f"give these a layer in LAYERS: {unplaced(edges, LAYERS)}"
    found = back_arrows(edges, LAYERS)
    assert not found, "\n".join(where(graph, s, t) for s, t in found)


def test_the_checks_find_a_circle_and_a_back_arrow() -> None:
    """The checks on a made-up package: a circle of modules, a circle of two
    subpackages with none of modules, an arrow back up, an arrow within a layer."""
    edges: dict[str, set[str]] = {
        "codesift.engine.a": {"codesift.engine.b", "codesift.cli.run"},
        "codesift.engine.b": {"codesift.engine.a"},
        "codesift.store.x": {"codesift.history.y"},
        "codesift.history.y": set(),
        "codesift.history.z": {"codesift.store.w"},
        "codesift.store.w": set(),
        "codesift.lsp.s": {"codesift.mcp.t"},
        "codesift.mcp.t": set(),
        "codesift.cli.run": {"codesift.engine.a"},
        "codesift.newpiece": set(),
    }
    found = circles(edges)
    assert ["codesift.engine.a", "codesift.engine.b"] in found
    assert ["codesift.history", "codesift.store"] in found
    assert ["codesift.cli", "codesift.engine"] in found
    arrows = back_arrows(edges, LAYERS)
    assert ("codesift.engine.a", "codesift.cli.run") in arrows
    assert ("codesift.store.x", "codesift.history.y") in arrows
    assert ("codesift.lsp.s", "codesift.mcp.t") in arrows
    assert ("codesift.cli.run", "codesift.engine.a") not in arrows
    assert ("codesift.history.z", "codesift.store.w") not in arrows
    assert unplaced(edges, LAYERS) == {"newpiece"}
