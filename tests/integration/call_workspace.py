"""A small project written to disk and indexed without vectors, for the call-graph
tests of each language (their files are given as path -> text)."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from codesift.engine import Engine, GraphQuery, Workspace


def engine_over(
    tmp_path_factory: pytest.TempPathFactory, name: str, files: Mapping[str, str]
) -> Engine:
    """An engine over a fresh folder holding `files`."""
    root = tmp_path_factory.mktemp(name) / "ws"
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    ws = Workspace.at(root, {"embedding": {"enabled": False}})
    return Engine(ws, vectors=False, quiet=True)


def callee_names(engine: Engine, qualified_name: str) -> set[str]:
    """The qualified names `qualified_name` calls (one hop)."""
    walk = engine.graph(qualified_name, GraphQuery(direction="callees", depth=1))
    (root,) = walk.roots
    names = {s.node.id: s.node.qualified_name for s in walk.nodes}
    return {names[e.target] for e in walk.edges if e.source == root and e.target is not None}
