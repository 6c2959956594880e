"""Answers to repeated questions, kept while the indexes they read are unchanged.

    cache = AnswerCache(entries=256)
    state = cache.state(indexes, index_state)   # None: do not cache now
    body = cache.get(key, state)                # the bytes answered before, or None
    cache.put(key, state, body)

A key is the question (the endpoint, the caller's principal and the arguments,
canonical); an answer is kept with the state it was given in: every index read
(its file and SQLite's data_version, which any commit changes) and the index
record the answer carries (freshness, vectors, warnings). It is served again only
while that state is the same, so a hit is the answer the engine would give now,
byte for byte (its `took_ms` is the first answer's). The caller decides what may
be cached at all (codesift/web/api.py: nothing that reads the shared index or a
git-time window, nothing while changes wait to be indexed).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from codesift.store.data_version import IndexVersion

__all__ = ["DEFAULT_ENTRIES", "AnswerCache", "question_key"]

# How many answers are kept by default, and at most how many bytes in all.
DEFAULT_ENTRIES = 256
MAX_BYTES = 64 * 1024 * 1024


class LiveIndex(Protocol):
    """What the cache asks of a live index (engine/live_folder.py's FolderIndex)."""

    @property
    def db_path(self) -> Path: ...

    def ready_now(self) -> bool: ...


State = tuple[tuple[Any, ...], str]


def question_key(endpoint: str, principal: str | None, arguments: Mapping[str, Any]) -> str:
    """The question as one string: the same arguments in any order are one key."""
    return json.dumps(
        [endpoint, principal, arguments], sort_keys=True, ensure_ascii=False, default=str
    )


class AnswerCache:
    """See the module docstring. `entries` 0 keeps nothing. Thread-safe."""

    def __init__(self, entries: int = DEFAULT_ENTRIES, max_bytes: int = MAX_BYTES) -> None:
        self.entries = max(0, entries)
        self.max_bytes = max_bytes
        self._answers: OrderedDict[str, tuple[State, bytes]] = OrderedDict()
        self._bytes = 0
        self._versions: dict[Path, IndexVersion] = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def enabled(self) -> bool:
        return self.entries > 0

    def state(self, indexes: Sequence[LiveIndex], index_record: Any) -> State | None:
        """The state an answer read from `indexes` is given in now; None when it
        must not be cached (an index waits for changes, or cannot be read)."""
        if not self.enabled or not all(index.ready_now() for index in indexes):
            return None
        versions: list[Any] = []
        for index in indexes:
            with self._lock:
                version = self._versions.get(index.db_path)
                if version is None:
                    version = self._versions[index.db_path] = IndexVersion(index.db_path)
            now = version.current()
            if now is None:
                return None
            versions.append(now)
        return tuple(versions), json.dumps(index_record, sort_keys=True, default=str)

    def get(self, key: str, state: State) -> bytes | None:
        with self._lock:
            found = self._answers.get(key)
            if found is None or found[0] != state:
                self.misses += 1
                return None
            self._answers.move_to_end(key)
            self.hits += 1
            return found[1]

    def put(self, key: str, state: State, body: bytes) -> None:
        if not self.enabled or len(body) > self.max_bytes // 8:
            return
        with self._lock:
            old = self._answers.pop(key, None)
            if old is not None:
                self._bytes -= len(old[1])
            self._answers[key] = (state, body)
            self._bytes += len(body)
            while self._answers and (
                len(self._answers) > self.entries or self._bytes > self.max_bytes
            ):
                _, (_, dropped) = self._answers.popitem(last=False)
                self._bytes -= len(dropped)

    def close(self) -> None:
        with self._lock:
            versions, self._versions = list(self._versions.values()), {}
            self._answers.clear()
            self._bytes = 0
        for version in versions:
            version.close()
