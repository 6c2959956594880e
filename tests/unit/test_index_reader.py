"""engine/api.py's IndexReader: the local index (Engine), a server's live folder
(LiveEngine) and the shared index (SharedSearch) read definitions and the graph
through the same methods, with the protocol's parameters (and more only when
they may be left out)."""

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
    wanted = parameters(IndexReader, name)
    for cls in readers():
        given = parameters(cls, name)
        # The protocol's parameters, in order; more only when they may be left out.
        assert given[: len(wanted)] == wanted, (cls, name)
        assert all(default is not inspect.Parameter.empty for _, default in given[len(wanted) :])
