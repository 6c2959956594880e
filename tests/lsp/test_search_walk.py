"""The language server's `codesift/search` walks few modules from its handler to the
store, and never returns to a module it has left (docs/architecture.md, "The
walk of a search", defines the walk; this test measures it).

The request runs in-process: a real `CodesiftServer` keeps a real git folder live
(indexed by its own writer thread), and the handler of `codesift/search`
(lsp/search.py, `search`) answers a query while a profiler (`sys.setprofile`)
records, for every call into a `codesift.store` module, the
call path that led there. Work handed to another thread (the server's reader
threads, the search's stream workers) continues the path of the frame that handed
it over: `ThreadPoolExecutor.submit` is wrapped so that the worker knows it (and
profiles that work).
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from types import FrameType
from typing import Any

import pytest
from harness import DEADLINE, WORKSPACE, make_workspace

from codesift.lsp import search as lsp_search
from codesift.lsp.options import ServerOptions
from codesift.lsp.server import CodesiftServer

HANDLER = "codesift.lsp.search"
STORE = "codesift.store"
# Modules of plain data and checks that any layer may call on the way (the result
# records, settings, errors, time windows, tokens): not steps of the walk.
HELPERS = (
    "codesift.engine.results",
    "codesift.config",
    "codesift.errors",
    "codesift.timespec",
    "codesift.tokens",
)
MAX_MODULES = 8
INVENTORY = {
    "stock.py": (
        "def reserve_stock(sku, quantity):\n"
        '    """Hold items of a SKU for an order until it is paid."""\n'
        "    return quantity > 0\n"
    ),
}
_MARK = "_handed_over"

Walk = tuple[str, ...]


def _is_helper(module: str) -> bool:
    return any(module == h or module.startswith(h + ".") for h in HELPERS)


def module_path(frame: FrameType | None) -> list[str]:
    """The codesift modules of the call stack ending at `frame`, outermost first:
    helpers left out, consecutive frames of one module as one step, and from the
    frame of a hand-off to another thread on only (see `handed_over`)."""
    frames: list[FrameType] = []
    while frame is not None:
        if frame.f_code.co_name == _MARK:
            break
        frames.append(frame)
        frame = frame.f_back
    frames.reverse()
    path: list[str] = []
    for f in frames:
        module = str(f.f_globals.get("__name__", ""))
        if not module.startswith("codesift.") or _is_helper(module):
            continue
        if not path or path[-1] != module:
            path.append(module)
    return path


def joined(prefix: list[str], path: list[str]) -> list[str]:
    """`path` continuing `prefix` (one step where they meet in the same module)."""
    if prefix and path and prefix[-1] == path[0]:
        return [*prefix, *path[1:]]
    return [*prefix, *path]


class WalkRecorder:
    """Records the walk to each store call made while it is installed."""

    def __init__(self) -> None:
        self.walks: list[Walk] = []
        self._handed = threading.local()
        self._lock = threading.Lock()

    def prefix(self) -> list[str]:
        return list(getattr(self._handed, "prefix", ()))

    def profile(self, frame: FrameType, event: str, arg: object) -> None:
        if event != "call":
            return
        module = str(frame.f_globals.get("__name__", ""))
        if not module.startswith(STORE):
            return
        caller = frame.f_back
        if caller is not None and str(caller.f_globals.get("__name__", "")).startswith(STORE):
            return  # inside the store already: its own structure is not the walk
        walk = joined(self.prefix(), module_path(frame))
        if HANDLER not in walk:
            return  # the writer thread, the watcher: not this request's work
        with self._lock:
            self.walks.append(tuple(walk[walk.index(HANDLER) :]))

    def submit_wrapper(self, submit: Callable[..., Future[Any]]) -> Callable[..., Future[Any]]:
        recorder = self

        def wrapped(pool: ThreadPoolExecutor, fn: Callable[..., Any], /, *a: Any, **k: Any) -> Any:
            here = joined(recorder.prefix(), module_path(sys._getframe(1)))
            owner = getattr(fn, "__module__", None) or ""
            # The handed function continues the path where its own module was left
            # (the pool's and the server's hand-off machinery are not steps).
            if owner in here:
                here = here[: len(here) - here[::-1].index(owner)]

            def _handed_over(*args: Any, **kwargs: Any) -> Any:
                # The worker threads may predate the recording (the search's stream
                # pool is the process's): the profiler is set here, for this work.
                recorder._handed.prefix = tuple(here)
                sys.setprofile(recorder.profile)
                try:
                    return fn(*args, **kwargs)
                finally:
                    sys.setprofile(None)
                    recorder._handed.prefix = ()

            return submit(pool, _handed_over, *a, **k)

        return wrapped


def revisits(walk: Walk) -> list[str]:
    """The modules the walk enters again after leaving them."""
    return sorted({m for i, m in enumerate(walk) if m in walk[:i]})


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CodesiftServer]:
    base = tmp_path_factory.mktemp("walk")
    srv = CodesiftServer()
    srv.options = ServerOptions(embeddings=False, watch=False)
    # Two folders, so that a routed search reads the router's profiles too.
    for name, files in (("billing-ws", WORKSPACE), ("inventory-ws", INVENTORY)):
        folder = srv.add_folder(make_workspace(base / name, files).as_uri(), name)
        assert folder is not None
        deadline = time.monotonic() + DEADLINE
        while not folder.progress.first_index_done:
            assert time.monotonic() < deadline, f"{name} not indexed: {folder.progress.state}"
            folder.wait_settled(0.05)
    try:
        yield srv
    finally:
        srv.shutdown_folders()


def record_search(
    server: CodesiftServer, params: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> tuple[dict[str, Any], list[Walk]]:
    recorder = WalkRecorder()
    monkeypatch.setattr(
        ThreadPoolExecutor, "submit", recorder.submit_wrapper(ThreadPoolExecutor.submit)
    )
    sys.setprofile(recorder.profile)
    try:
        result = asyncio.run(lsp_search.search(server, params))
    finally:
        sys.setprofile(None)
    return result, sorted(set(recorder.walks))


@pytest.mark.parametrize(
    "params",
    [
        {"query": "retry a failed charge", "folders": ["billing-ws"]},
        {"query": "charge", "tests": "exclude", "folders": ["billing-ws"]},
        {"query": "RetryPolicy", "since": "1y", "folders": ["billing-ws"]},
        {"query": "retry a failed charge", "route": True},
    ],
    ids=["prose", "filtered", "timed", "routed"],
)
def test_search_walks_at_most_eight_modules_and_never_back(
    server: CodesiftServer, params: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    result, walks = record_search(server, params, monkeypatch)
    assert result["results"], "the search found nothing: no store read to measure"
    assert walks, "no call reached the store"
    shown = "\n".join(" > ".join(m.removeprefix("codesift.") for m in w) for w in walks)
    longest = max(walks, key=len)
    assert len(longest) <= MAX_MODULES, f"{len(longest)} modules:\n{shown}"
    back = {w: revisits(w) for w in walks if revisits(w)}
    assert not back, f"returns to modules already left: {back}\n{shown}"


def test_the_recorder_sees_a_return() -> None:
    """The measure can fail: a walk that goes back to a module is reported."""
    assert revisits(("a", "b", "a", "store")) == ["a"]
    assert revisits(("a", "b", "store")) == []
    assert joined(["a", "b"], ["b", "c"]) == ["a", "b", "c"]


def test_helpers_are_not_steps() -> None:
    assert _is_helper("codesift.engine.results")
    assert _is_helper("codesift.config.schema")
    assert not _is_helper("codesift.configuration")
    assert not _is_helper("codesift.engine.conductor")
