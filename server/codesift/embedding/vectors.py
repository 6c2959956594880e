"""Filling and querying the chunk vector table.

Vectors are computed after the lexical index is written, in batches, so the
index answers lexical and symbol queries at once and vectors join as they are
computed. A chunk is embedded again only when its text changed (its text hash
differs from the one recorded in `embedded`).

Vectors are stored int8-quantised (each vector scaled by its largest component,
which cosine distance ignores): a quarter of float32's size.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass

import apsw
import numpy as np
import numpy.typing as npt

from codesift.embedding.model import Embedder
from codesift.embedding.texts import embedding_text
from codesift.store.reader import chunk_rows
from codesift.store.vectors import (
    VECTOR_LAYERS,
    chunk_text_hashes,
    count_embeddable,
    count_embedded,
    count_pending,
    delete_vectors,
    pending_chunk_ids,
    quantize,
    rewrite_vector_table,
    small_page_cache,
    stale_vector_ids,
    vector_slots,
    write_vectors,
)

__all__ = [
    "EMBEDDED_LAYERS",
    "VectorCoverage",
    "fill_vectors",
    "quantize",
    "remove_stale_vectors",
    "vector_coverage",
]

log = logging.getLogger(__name__)

# Layers that get vectors: code bodies, summaries and doc sections. The bare `ast`
# layer is a signature: its words are in the summary.
EMBEDDED_LAYERS: tuple[str, ...] = VECTOR_LAYERS


@dataclass(frozen=True, slots=True)
class VectorCoverage:
    """Chunks with a vector of their current text (`embedded`: by the model asked
    about, when one was; `usable`: by any model) of those that should have one."""

    embedded: int
    embeddable: int
    usable: int = -1

    def __post_init__(self) -> None:
        if self.usable < 0:
            object.__setattr__(self, "usable", self.embedded)

    @property
    def ratio(self) -> float:
        return 1.0 if self.embeddable == 0 else self.embedded / self.embeddable


def vector_coverage(
    conn: apsw.Connection, layers: Sequence[str] = EMBEDDED_LAYERS, model: str | None = None
) -> VectorCoverage:
    """How many chunks of `layers` have a vector of their current text; with
    `model`, `embedded` counts only the vectors that model made (another model's
    are replaced by the next fill) and `usable` every vector."""
    embeddable = count_embeddable(conn, layers)
    if model is None:
        return VectorCoverage(count_embedded(conn, layers), embeddable)
    return VectorCoverage(
        count_embedded(conn, layers, model), embeddable, count_embedded(conn, layers)
    )


def remove_stale_vectors(conn: apsw.Connection) -> int:
    """Delete vectors of chunks that are gone or whose text changed."""
    stale = stale_vector_ids(conn)
    if stale:
        delete_vectors(conn, stale)
    return len(stale)


# A vec0 table keeps the slot of every deleted vector, and its kNN scans the slots:
# after re-embedding half of the Python stdlib's summaries, 72,082 vectors sat in
# 108,544 slots and a kNN took twice as long as over a table written afresh.
COMPACT_WHEN_WASTED = 0.25
_VEC0_CHUNK = 1024  # slots per vec0 chunk (sqlite-vec's default chunk_size)


def compact_vectors(conn: apsw.Connection, wasted: float = COMPACT_WHEN_WASTED) -> bool:
    """Rewrite the vec0 table without the slots of deleted vectors when more than
    `wasted` of its slots (and at least one chunk's worth) hold none. The same rows
    with the same ids and stamps, in one transaction; True when it was rewritten."""
    rows, slots = vector_slots(conn)
    if slots - rows < max(_VEC0_CHUNK, wasted * slots):
        return False
    started = time.perf_counter()
    rewrite_vector_table(conn)
    log.info(
        "rewrote the vector table: %d vectors had %d slots (%.1fs)",
        rows,
        slots,
        time.perf_counter() - started,
    )
    return True


ProgressFn = Callable[[int, int], None]
BatchGuard = Callable[[], AbstractContextManager[object]]

# The page cache of the connection while it fills vectors (KiB). The fill reads
# chunks in id order and appends vectors, so a small cache loses little; the
# index's usual 32 MB, filled as the fill reads through the whole table, was ~28 MB
# of the fill's peak RSS (325 -> 297 MiB over 4,000 Go summaries).
FILL_CACHE_KIB = 4096


# Pending chunks are read this many batches at a time (keyset pages by id) and
# sorted by text length within the page.
_SORT_WINDOW_BATCHES = 16


def fill_vectors(
    conn: apsw.Connection,
    embedder: Embedder,
    *,
    layers: Sequence[str] = EMBEDDED_LAYERS,
    batch_size: int = 64,
    progress: ProgressFn | None = None,
    cancel: threading.Event | None = None,
    max_chunks: int | None = None,
    batch_guard: BatchGuard | None = None,
    replace: bool = True,
    first_tier_done: Callable[[], None] | None = None,
    first_tier_progress: ProgressFn | None = None,
) -> int:
    """Embed every chunk of `layers` that has no current vector, and (`replace`)
    every chunk whose vector another model made; return how many `embedder`
    embedded.

    With a first tier (`embedder.first_tier`, the static model) and `replace`, the
    chunks without a vector get the first tier's vectors at once (thousands a
    second; `first_tier_progress` follows them), then `embedder` replaces them: the
    vector stream covers every chunk within seconds, and `progress` follows the
    second pass; `first_tier_done` is called between the two.

    Pending chunks are read a page at a time (by id, after the last page's), and
    each page is embedded and written before the next is read: memory holds one
    page of texts and one batch of vectors, however large the index. Each batch is
    committed on its own, so an interrupted fill keeps its work.

    `batch_guard`, when given, is entered around each batch's write (not around
    its embedding), e.g. the index's write lock: other writers then wait only for
    the write. When entering it yields False (a stop was requested while waiting)
    the fill stops there, as if cancelled, and that batch is not written.
    """
    guard = batch_guard or _unguarded
    with small_page_cache(conn, FILL_CACHE_KIB):
        # Every write of the fill is guarded: the stale-vector sweep, each batch and
        # the final compaction (a writer elsewhere waits for one of them at most).
        with guard() as entered:
            if entered is False:
                return 0
            remove_stale_vectors(conn)
        first = embedder.first_tier if replace else None
        if first is not None:
            _, stopped = _fill_pass(
                conn,
                first,
                layers,
                batch_size,
                first_tier_progress,
                cancel,
                max_chunks,
                guard,
                None,
            )
            if stopped:
                return 0
            if first_tier_done is not None:
                first_tier_done()
        if replace and count_pending(conn, layers, embedder.model_id):
            # Loaded first: the graph it runs on (the fused one, or the export when
            # that cannot be built) decides which vectors count as its own.
            embedder.resolve()
        model = embedder.model_id if replace else None
        done, stopped = _fill_pass(
            conn, embedder, layers, batch_size, progress, cancel, max_chunks, guard, model
        )
        if not stopped:
            with guard() as entered:
                if entered is not False:
                    compact_vectors(conn)
        return done


def _fill_pass(
    conn: apsw.Connection,
    embedder: Embedder,
    layers: Sequence[str],
    batch_size: int,
    progress: ProgressFn | None,
    cancel: threading.Event | None,
    max_chunks: int | None,
    guard: BatchGuard,
    replace_model: str | None,
) -> tuple[int, bool]:
    """Embed the pending chunks (without a vector; with `replace_model`, also those
    whose vector another model made) with `embedder`: (how many, whether the pass
    was stopped before its end)."""
    batch_size = embedder.write_batch(batch_size)
    total = count_pending(conn, layers, replace_model)
    if not total and embedder.fast and progress is not None:
        # The static vectors came with the index's rows (embedding/row_vectors.py):
        # the phase is complete, and says so with its count.
        ready = count_embedded(conn, layers, embedder.model_id)
        if ready:
            progress(ready, ready)
    if max_chunks is not None:
        total = min(total, max_chunks)
    done = read = 0
    started = time.perf_counter()
    page_size = batch_size * _SORT_WINDOW_BATCHES
    after = 0
    while read < total:
        ids = pending_chunk_ids(conn, layers, after, min(page_size, total - read), replace_model)
        if not ids:
            break  # chunks deleted meanwhile: fewer to do than counted
        read += len(ids)
        after = ids[-1]
        texts = _page_texts(conn, ids)
        # The model pads every text of a batch to the batch's longest, so texts are
        # embedded in order of length within each page of pending chunks (1.4x the
        # throughput of id order on summaries); each batch still commits on its own.
        for batch_start in range(0, len(texts), batch_size):
            if cancel is not None and cancel.is_set():
                return _finish(done, total, started, embedder), True
            batch = texts[batch_start : batch_start + batch_size]
            vectors = quantize(embedder.embed([text for text, _, _ in batch]))
            chunks = [(cid, layer) for _, cid, layer in batch]
            with guard() as entered:
                if entered is False:
                    return _finish(done, total, started, embedder), True
                _store_batch(conn, chunks, vectors, embedder.model_id)
            done += len(batch)
            if progress:
                progress(done, total)
    return _finish(done, total, started, embedder), False


@contextmanager
def _unguarded() -> Iterator[bool]:
    yield True


def _page_texts(conn: apsw.Connection, ids: Sequence[int]) -> list[tuple[str, int, str]]:
    """(embedding text, chunk id, layer) of the chunks `ids` that still exist,
    shortest text first."""
    rows = chunk_rows(conn, ids)
    return sorted(
        (
            (embedding_text(r.text, r.qualified_name, r.layer), r.id, r.layer)
            for i in ids
            if (r := rows.get(i)) is not None  # a chunk may vanish meanwhile
        ),
        key=lambda item: (len(item[0]), item[1]),
    )


def _store_batch(
    conn: apsw.Connection,
    chunks: Sequence[tuple[int, str]],
    vectors: npt.NDArray[np.int8],
    model: str,
) -> None:
    """Write one batch's vectors with the text hash they were computed from; a chunk
    deleted meanwhile gets none."""
    hashes = chunk_text_hashes(conn, [cid for cid, _ in chunks])
    rows = [
        (cid, layer, vector.tobytes(), hashes[cid])
        for (cid, layer), vector in zip(chunks, vectors, strict=True)
        if cid in hashes
    ]
    write_vectors(conn, rows, model)


def _finish(done: int, total: int, started: float, embedder: Embedder) -> int:
    if total:
        log.info(
            "embedded %d of %d chunks in %.1fs (%s)",
            done,
            total,
            time.perf_counter() - started,
            embedder.model,
        )
    return done
