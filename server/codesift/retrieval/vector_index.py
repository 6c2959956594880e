"""Resident vectors: the chunk vectors held in memory for fast nearest-neighbour search.

The `chunk_vectors` vec0 table stays the store of record. sqlite-vec scans it by
brute force at about 1.4 us per vector and its cost grows with k (over 72k vectors:
~100 ms at k=350), which makes it the slowest stream by far. A long-running process
(the language server, a benchmark) instead keeps a copy in memory, ~440 bytes per
vector (the int8 vector, its sign bits, norm, id and layer), and searches it in two
steps:

1. Hamming distance between the query's sign bits and every vector's sign bits
   (48 bytes each, numpy popcount) picks the `max(4k, 1000)` most promising vectors.
2. Those are rescored by exact cosine similarity (float32 query against the int8
   vectors) and the best k are kept.

Over the Python standard library's 72k summary vectors this takes ~2.6 ms (p50)
with recall@10 0.99 against the exact kNN (bench/RESULTS.md, "Resident vectors").

Staying in step with the table: every write of vectors stamps its `embedded` rows
with a new `vectors_stamp` (kept in `meta`), and every removal bumps
`vectors_removed`. Before a search the index reads both counters (one indexed
query); new stamps are fetched and appended, and after removals the ids still
present are re-read so the removed vectors drop out. A vector found here is still
checked against `chunks` and `embedded` by the caller (stale or filtered chunks are
removed there), so a search that races a write returns what a search just before
it would have.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import apsw
import numpy as np
import numpy.typing as npt

from codesift.embedding.model import DIMENSIONS
from codesift.store.database import open_reader
from codesift.store.route_centroids import NEIGHBOURS, vectors_are_minilm
from codesift.store.vector_stamps import vector_counters
from codesift.store.vectors import all_vectors, embedded_ids, vectors_since

__all__ = ["PREFILTER_FACTOR", "PREFILTER_MIN", "VectorIndex", "resident_neighbours"]

log = logging.getLogger(__name__)

# Candidates kept by the sign-bit prefilter: max(PREFILTER_FACTOR * k, PREFILTER_MIN).
PREFILTER_FACTOR = 4
PREFILTER_MIN = 1000
_WORDS = DIMENSIONS // 64  # uint64 words of sign bits per vector
_LAYER_CODES = {"code": 0, "summary": 1, "doc": 2, "ast": 3}
_FAR = np.uint16(65535)  # distance given to vectors a filter excludes (real ones <= 384)


def _sign_bits(vectors: npt.NDArray[np.int8] | npt.NDArray[np.float32]) -> npt.NDArray[np.uint64]:
    positive: npt.NDArray[np.bool_] = np.greater(vectors, 0)
    packed = np.packbits(positive, axis=-1)
    return np.ascontiguousarray(packed).view(np.uint64)


def _hamming(
    bits: npt.NDArray[np.uint64], query: npt.NDArray[np.float32]
) -> npt.NDArray[np.uint16]:
    """Hamming distance from the query's sign bits to each column of `bits`.

    One xor, one popcount and one sum over all the words at once: ~35% faster than
    a pass per word (fewer temporaries, three numpy calls instead of eighteen)."""
    words = _sign_bits(query)
    counts = np.bitwise_count(np.bitwise_xor(bits, words[:, None]))
    distance: npt.NDArray[np.uint16] = counts.sum(axis=0, dtype=np.uint16)
    return distance


def _closest(distance: npt.NDArray[np.uint16], keep: int) -> npt.NDArray[np.intp]:
    """Positions of the `keep` smallest distances (at most DIMENSIONS, or _FAR for
    an excluded vector; fewer than `keep` when fewer are not excluded), ties at the
    cut taken in position order.

    Distances are small integers, so a histogram finds the cut: ~2x faster than
    np.argpartition over 72k vectors, and deterministic among ties."""
    counts = np.bincount(np.minimum(distance, DIMENSIONS + 1), minlength=DIMENSIONS + 2)
    cut = int(np.searchsorted(np.cumsum(counts[: DIMENSIONS + 1]), keep))
    if cut > DIMENSIONS:  # fewer than `keep` vectors are not excluded
        return np.flatnonzero(distance <= DIMENSIONS)
    below = np.flatnonzero(distance < cut)
    at_cut = np.flatnonzero(distance == cut)[: keep - len(below)]
    return np.concatenate([below, at_cut])


@dataclass(slots=True)
class _Arrays:
    ids: npt.NDArray[np.int64]
    layers: npt.NDArray[np.uint8]
    vectors: npt.NDArray[np.int8]  # (n, DIMENSIONS)
    bits: npt.NDArray[np.uint64]  # (_WORDS, n): one row per word, so a pass is 6 row ops
    inverse_norms: npt.NDArray[np.float32]
    alive: npt.NDArray[np.bool_]

    @staticmethod
    def empty() -> _Arrays:
        return _Arrays(
            np.zeros(0, np.int64),
            np.zeros(0, np.uint8),
            np.zeros((0, DIMENSIONS), np.int8),
            np.zeros((_WORDS, 0), np.uint64),
            np.zeros(0, np.float32),
            np.zeros(0, np.bool_),
        )

    @staticmethod
    def from_rows(rows: Sequence[Any]) -> _Arrays:
        """From (chunk id, layer, int8 vector bytes) rows."""
        n = len(rows)
        ids = np.fromiter((int(r[0]) for r in rows), np.int64, count=n)
        layers = np.fromiter((_LAYER_CODES.get(str(r[1]), 255) for r in rows), np.uint8, count=n)
        vectors = np.frombuffer(b"".join(r[2] for r in rows), np.int8).reshape(n, DIMENSIONS)
        norms = np.sqrt(np.einsum("ij,ij->i", vectors, vectors, dtype=np.float32))
        norms[norms == 0] = 1.0
        bits = np.ascontiguousarray(_sign_bits(vectors).T)
        return _Arrays(ids, layers, vectors, bits, 1.0 / norms, np.ones(n, np.bool_))

    def __len__(self) -> int:
        return len(self.ids)


class VectorIndex:
    """The vectors of one index file, in memory. Thread-safe; `search` loads them on
    first use and keeps them in step with the table afterwards."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._arrays: _Arrays | None = None
        self._slot: dict[int, int] = {}  # chunk id -> row in the arrays
        self._stamp = 0
        self._removed = 0
        # Layer masks of the current arrays; cleared whenever they change.
        self._masks: dict[tuple[str, ...], npt.NDArray[np.bool_]] = {}

    @property
    def loaded(self) -> bool:
        return self._arrays is not None

    @property
    def nbytes(self) -> int:
        a = self._arrays
        if a is None:
            return 0
        return sum(x.nbytes for x in (a.ids, a.layers, a.vectors, a.bits, a.inverse_norms))

    def __len__(self) -> int:
        a = self._arrays
        return 0 if a is None else int(a.alive.sum())

    # -- keeping in step ------------------------------------------------------------

    def load(self, conn: apsw.Connection) -> None:
        """(Re)read every vector."""
        with self._lock:
            self._load(conn)

    def _load(self, conn: apsw.Connection) -> None:
        # Counters first: a write that lands during the scan is fetched again later.
        with conn:  # one read transaction: counters and rows agree
            stamp, removed = vector_counters(conn)
            rows = all_vectors(conn)
        self._masks.clear()
        self._arrays = _Arrays.from_rows(rows) if rows else _Arrays.empty()
        self._slot = {int(cid): i for i, cid in enumerate(self._arrays.ids.tolist())}
        self._stamp, self._removed = stamp, removed
        log.info("loaded %d vectors into memory", len(rows))

    def sync_file(self, db_path: str | Path) -> None:
        """`sync` over a connection of its own to the index file at `db_path`."""
        conn = open_reader(db_path)
        try:
            self.sync(conn)
        finally:
            conn.close()

    def sync(self, conn: apsw.Connection) -> None:
        """Load, or catch up with writes since the last look."""
        with self._lock:
            if self._arrays is None:
                self._load(conn)
                return
            with conn:
                stamp, removed = vector_counters(conn)
                if stamp < self._stamp or removed < self._removed:
                    # Counters went back: another index file took this one's place.
                    self._load(conn)
                    return
                if stamp != self._stamp:
                    self._append(conn, stamp)
                if removed != self._removed:
                    self._drop_removed(conn, removed)

    def _append(self, conn: apsw.Connection, stamp: int) -> None:
        assert self._arrays is not None
        rows = vectors_since(conn, self._stamp)
        self._stamp = stamp
        if not rows:
            return
        self._masks.clear()
        old = self._arrays
        for cid, _, _ in rows:  # a re-embedded chunk: its old vector is dead
            slot = self._slot.get(int(cid))
            if slot is not None:
                old.alive[slot] = False
        new = _Arrays.from_rows(rows)
        base = len(old)
        self._arrays = _Arrays(
            np.concatenate([old.ids, new.ids]),
            np.concatenate([old.layers, new.layers]),
            np.concatenate([old.vectors, new.vectors]),
            np.concatenate([old.bits, new.bits], axis=1),
            np.concatenate([old.inverse_norms, new.inverse_norms]),
            np.concatenate([old.alive, new.alive]),
        )
        for i, cid in enumerate(new.ids.tolist()):
            self._slot[int(cid)] = base + i

    def _drop_removed(self, conn: apsw.Connection, removed: int) -> None:
        assert self._arrays is not None
        present = np.asarray(embedded_ids(conn), np.int64)
        self._masks.clear()
        a = self._arrays
        a.alive &= np.isin(a.ids, present)
        self._removed = removed
        dead = len(a) - int(a.alive.sum())
        if dead > len(a) // 4:  # compact once a quarter is dead
            keep = a.alive
            self._arrays = _Arrays(
                a.ids[keep],
                a.layers[keep],
                a.vectors[keep],
                a.bits[:, keep],
                a.inverse_norms[keep],
                a.alive[keep],
            )
            self._slot = {int(cid): i for i, cid in enumerate(self._arrays.ids.tolist())}

    # -- searching ------------------------------------------------------------------

    def search(
        self,
        conn: apsw.Connection,
        query: npt.NDArray[np.float32],
        k: int,
        layers: Sequence[str],
        allowed_ids: npt.NDArray[np.int64] | None = None,
    ) -> list[tuple[int, float]]:
        """The k vectors most similar to `query` (cosine), among `layers` and, when
        given, `allowed_ids`; (chunk id, similarity), best first, ties by id."""
        self.sync(conn)
        with self._lock:
            a = self._arrays
            assert a is not None
            if not len(a) or k <= 0:
                return []
            mask = self._layer_mask(a, layers)
            if allowed_ids is not None:
                mask = mask & np.isin(a.ids, allowed_ids)
            eligible = int(np.count_nonzero(mask))
            if not eligible:
                return []
            q = np.asarray(query, np.float32)
            keep = max(PREFILTER_FACTOR * k, PREFILTER_MIN)
            if eligible <= keep:
                candidates = np.flatnonzero(mask)
            elif 2 * eligible < len(a):  # a narrow filter: measure only what passes it
                rows = np.flatnonzero(mask)
                candidates = rows[_closest(_hamming(a.bits[:, rows], q), keep)]
            else:
                distance = _hamming(a.bits, q)
                distance[~mask] = _FAR
                candidates = _closest(distance, keep)
            # No BLAS here (no `@`, no linalg): OpenBLAS runs a matrix this size on
            # several threads that then spin for a long while, taking the cores the
            # other streams of the search need (~27 ms of CPU per search on 2 cores).
            # einsum over the int8 rows, summing in float32, stays on this thread.
            norm = float(np.sqrt(np.square(q).sum())) or 1.0
            dots = np.einsum(
                "ij,j->i", a.vectors[candidates], q, dtype=np.float32, casting="unsafe"
            )
            sims = dots * (a.inverse_norms[candidates] / norm)
            ids = a.ids[candidates]
        order = np.lexsort((ids, -sims))[:k]
        return list(zip(ids[order].tolist(), sims[order].tolist(), strict=True))

    def _layer_mask(self, a: _Arrays, layers: Sequence[str]) -> npt.NDArray[np.bool_]:
        """Live vectors of `layers` (cached until the arrays change)."""
        key = tuple(sorted(layers))
        mask = self._masks.get(key)
        if mask is None:
            mask = a.alive & np.isin(a.layers, [_LAYER_CODES[x] for x in layers])
            self._masks[key] = mask
        return mask


def resident_neighbours(
    db_path: Path,
    conn: apsw.Connection,
    resident: VectorIndex,
    layers: Sequence[str],
    query_vector: npt.NDArray[np.float32],
) -> float | None:
    """The routing's neighbour score (store/route_centroids.neighbour_similarity)
    over the index's vectors held in memory (`resident`, among `layers`): the mean
    cosine of the NEIGHBOURS nearest; None unless the vectors are MiniLM's."""
    if not vectors_are_minilm(db_path, conn):
        return None
    nearest = resident.search(conn, query_vector, NEIGHBOURS, layers)
    return sum(s for _, s in nearest) / len(nearest) if nearest else None
