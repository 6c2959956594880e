"""A small project written to disk and indexed without vectors, for the call-graph
tests of each language (their files are given as path -> text)."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from codesift.engine import Engine, Workspace


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
