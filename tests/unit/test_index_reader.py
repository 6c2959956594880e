"""engine/api.py's IndexReader: the local index (Engine), a server's live folder
(LiveEngine) and the shared index (SharedSearch) read definitions and the graph
through the same methods, with the same parameters."""

from __future__ import annotations

import inspect

import pytest

from codesift.engine.api import IndexReader
from codesift.engine.live_engine import LiveEngine
from codesift.engine.session import Engine

METHODS = ("times", "symbols", "start_nodes", "graph", "close")


def parameters(cls: type, name: str) -> list[tuple[str, object]]:
    signature = inspect.signature(getattr(cls, name))
    return [(p.name, p.default) for p in signature.parameters.values()]


def readers() -> list[type]:
    found: list[type] = [Engine, LiveEngine]
    try:
        from codesift.engine.postgres import SharedSearch
    except ImportError:  # the postgres extra is not installed
        return found
    return [*found, SharedSearch]


@pytest.mark.parametrize("name", METHODS)
def test_every_reader_has_the_protocols_method(name: str) -> None:
    assert [m for m in dir(IndexReader) if not m.startswith("_")] == sorted(METHODS)
    for cls in readers():
        assert parameters(cls, name) == parameters(IndexReader, name), (cls, name)
