"""Facts about chunks that every search reads again, kept while the index is unchanged.

After fusion a search looks up where each of its ~200 candidates is (node, layer,
file path, language, name: `SearchStore.chunk_places`), and its vector streams ask
which of their ~350 hits still have the text their vector was made from
(`current_chunks`). Queries share many of these chunks (over 192 different
questions on the Python standard library, a third of the places and half of the
vector hits had been looked up by an earlier question), so a long-running process
keeps the answers: each is a function of the index alone.

They are kept for one state of the index: `IndexVersion` (the file's identity and
SQLite's `data_version`, which any commit by another connection changes) is read
before each use, and a changed index starts an empty generation. A search that
races a commit may answer from the state just before it, as its statements on
separate connections already may.

    facts = ChunkFacts(IndexVersion(db_path))
    store = SqliteSearchStore(reader, facts=facts)   # reads through the cache
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from codesift.store.data_version import IndexVersion, Version
from codesift.store.search_store import ChunkPlace

__all__ = ["MAX_ENTRIES", "ChunkFacts", "FactsGeneration"]

# Past this many entries in either map a generation starts again empty (~40 MB of
# places at most; the Python stdlib index has 227k chunks).
MAX_ENTRIES = 200_000


@dataclass(slots=True)
class FactsGeneration:
    """What is known of one state of the index. A search keeps the generation it
    started with; a change of the index replaces it, never edits it under a reader."""

    version: Version | None
    places: dict[int, ChunkPlace] = field(default_factory=dict)
    # Chunk id -> whether the chunk exists and its vector is of its current text.
    current: dict[int, bool] = field(default_factory=dict)


class ChunkFacts:
    """See the module docstring. Thread-safe; `close()` closes the version's
    connection."""

    def __init__(self, version: IndexVersion) -> None:
        self._version = version
        self._lock = threading.Lock()
        self._generation = FactsGeneration(None)

    def generation(self) -> FactsGeneration | None:
        """The facts of the index as it is now; None when its state cannot be read
        (the caller then reads the index itself)."""
        now = self._version.current()
        if now is None:
            return None
        with self._lock:
            generation = self._generation
            if (
                generation.version != now
                or len(generation.places) > MAX_ENTRIES
                or len(generation.current) > MAX_ENTRIES
            ):
                generation = self._generation = FactsGeneration(now)
            return generation

    def close(self) -> None:
        self._version.close()
