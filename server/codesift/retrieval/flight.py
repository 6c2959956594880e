"""A search in flight: what each of its streams sees (`StreamInput`), the streams
themselves (`Stream`), the stores busy with them so that a cancel can interrupt
their SQL (`InFlight`), and the worker threads every Searcher shares."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from codesift.errors import SearchCancelled
from codesift.retrieval.query import QueryAnalysis
from codesift.retrieval.request import SearchRequest
from codesift.retrieval.streams import Ranked, StreamFilters
from codesift.store.search_store import SearchStore

__all__ = [
    "CANCEL_POLL_SECONDS",
    "InFlight",
    "Stream",
    "StreamFn",
    "StreamInput",
    "check_flight",
    "stream_filters",
    "stream_pool",
]

# How often a waiting search looks at its cancel event (seconds).
CANCEL_POLL_SECONDS = 0.005
STREAM_WORKERS = 6


@dataclass(frozen=True, slots=True)
class StreamInput:
    """What every stream of one search sees."""

    analysis: QueryAnalysis
    filters: StreamFilters
    cap: int
    query_vector: bytes | None = None  # int8 query embedding, for sqlite-vec
    query_embedding: npt.NDArray[np.float32] | None = None  # for resident vectors


StreamFn = Callable[[SearchStore, StreamInput], Ranked]


@dataclass(frozen=True, slots=True)
class Stream:
    name: str
    run: StreamFn
    needs_query_vector: bool = False
    # Whether the stream has anything to do for this search (None: always). A stream
    # that has not is reported with no candidates without a hand-off to a worker:
    # most queries are no pasted line, no file name and, in words, no symbol.
    wanted: Callable[[StreamInput], bool] | None = None
    # A stream of a few index lookups (the exact and path streams: ~0.2 ms): when the
    # streams run side by side, it runs on the searching thread while the workers run
    # the others, since a hand-off to a worker would cost more than the stream.
    inline: bool = False


class InFlight:
    """One search's streams while they run: its cancel event and the stores busy
    with them, so a cancel can interrupt their SQL."""

    def __init__(self, cancel: threading.Event | None) -> None:
        self.cancel = cancel
        self._lock = threading.Lock()
        self._busy: dict[int, SearchStore] = {}

    def cancelled(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()

    def enter(self, store: SearchStore) -> None:
        with self._lock:
            self._busy[id(store)] = store

    def leave(self, store: SearchStore) -> None:
        with self._lock:
            self._busy.pop(id(store), None)

    def interrupt(self) -> None:
        # Under the lock: a store leaves only after its statement finished, so this
        # never interrupts another search's statement on that store's connection.
        with self._lock:
            for store in self._busy.values():
                store.interrupt()


_pool_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None


def stream_pool() -> ThreadPoolExecutor:
    """The worker threads shared by every Searcher in the process."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(STREAM_WORKERS, thread_name_prefix="codesift-stream")
        return _pool


def stream_filters(request: SearchRequest) -> StreamFilters:
    return StreamFilters(request.layers, request.languages, request.paths, request.time_filter())


def check_flight(flight: InFlight, stage: str) -> None:
    if flight.cancelled():
        raise SearchCancelled(f"the search was cancelled ({stage})")
