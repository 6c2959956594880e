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
from codesift.store.database import scalar
from codesift.store.reader import chunk_rows
from codesift.store.vector_stamps import bump_vectors_removed, next_vectors_stamp

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
EMBEDDED_LAYERS: tuple[str, ...] = ("code", "summary", "doc")


@dataclass(frozen=True, slots=True)
class VectorCoverage:
    embedded: int
    embeddable: int

    @property
    def ratio(self) -> float:
        return 1.0 if self.embeddable == 0 else self.embedded / self.embeddable


def quantize(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.int8]:
    """Scale each row so its largest component is ±127, then round to int8."""
    peaks = np.abs(vectors).max(axis=1, keepdims=True)
    peaks[peaks == 0] = 1.0
    scaled: npt.NDArray[np.int8] = np.round(vectors * (127.0 / peaks)).astype(np.int8)
    return scaled


def _layer_sql(layers: Sequence[str]) -> str:
    return ",".join(f"'{layer}'" for layer in layers if layer in EMBEDDED_LAYERS)


def vector_coverage(
    conn: apsw.Connection, layers: Sequence[str] = EMBEDDED_LAYERS
) -> VectorCoverage:
    in_layers = _layer_sql(layers)
    embeddable = int(scalar(conn, f"SELECT count(*) FROM chunks WHERE layer IN ({in_layers})"))
    embedded = int(
        scalar(
            conn,
            f"SELECT count(*) FROM chunks c JOIN embedded e ON e.chunk_id = c.id"
            f" AND e.text_hash = c.text_hash WHERE c.layer IN ({in_layers})",
        )
    )
    return VectorCoverage(embedded, embeddable)


def remove_stale_vectors(conn: apsw.Connection) -> int:
    """Delete vectors of chunks that are gone or whose text changed."""
    stale = [
        int(r[0])
        for r in conn.execute(
            "SELECT e.chunk_id FROM embedded e LEFT JOIN chunks c ON c.id = e.chunk_id"
            " WHERE c.id IS NULL OR c.text_hash != e.text_hash"
        )
    ]
    if stale:
        with conn:
            conn.executemany("DELETE FROM chunk_vectors WHERE chunk_id = ?", [(i,) for i in stale])
            conn.executemany("DELETE FROM embedded WHERE chunk_id = ?", [(i,) for i in stale])
            bump_vectors_removed(conn)
    return len(stale)


# A vec0 table keeps the slot of every deleted vector, and its kNN scans the slots:
# after re-embedding half of the Python stdlib's summaries, 72,082 vectors sat in
# 108,544 slots and a kNN took twice as long as over a table written afresh.
COMPACT_WHEN_WASTED = 0.25
_VEC0_CHUNK = 1024  # slots per vec0 chunk (sqlite-vec's default chunk_size)


def vector_slots(conn: apsw.Connection) -> tuple[int, int]:
    """(vectors, slots) of the vec0 table: slots include those of deleted vectors."""
    rows = int(scalar(conn, "SELECT count(*) FROM chunk_vectors") or 0)
    slots = int(scalar(conn, "SELECT coalesce(sum(size), 0) FROM chunk_vectors_chunks") or 0)
    return rows, slots


def compact_vectors(conn: apsw.Connection, wasted: float = COMPACT_WHEN_WASTED) -> bool:
    """Rewrite the vec0 table without the slots of deleted vectors when more than
    `wasted` of its slots (and at least one chunk's worth) hold none. The same rows
    with the same ids and stamps, in one transaction; True when it was rewritten."""
    rows, slots = vector_slots(conn)
    if slots - rows < max(_VEC0_CHUNK, wasted * slots):
        return False
    started = time.perf_counter()
    with conn:
        schema = scalar(conn, "SELECT sql FROM sqlite_schema WHERE name = 'chunk_vectors'")
        conn.execute(
            "CREATE TEMP TABLE codesift_vectors AS"
            " SELECT chunk_id, layer, embedding FROM chunk_vectors ORDER BY chunk_id"
        )
        conn.execute("DROP TABLE chunk_vectors")
        conn.execute(str(schema))
        conn.execute(
            "INSERT INTO chunk_vectors (chunk_id, layer, embedding)"
            " SELECT chunk_id, layer, vec_int8(embedding) FROM temp.codesift_vectors"
        )
        conn.execute("DROP TABLE temp.codesift_vectors")
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


@contextmanager
def _small_page_cache(conn: apsw.Connection) -> Iterator[None]:
    """Run a block with the connection's page cache at FILL_CACHE_KIB (and the pages
    it held released), then give it back its size."""
    previous = int(scalar(conn, "PRAGMA cache_size"))
    conn.execute(f"PRAGMA cache_size=-{FILL_CACHE_KIB}")
    conn.execute("PRAGMA shrink_memory")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA cache_size={previous}")


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
) -> int:
    """Embed every chunk of `layers` that has no current vector; return how many.

    Pending chunks are read a page at a time (by id, after the last page's), and
    each page is embedded and written before the next is read: memory holds one
    page of texts and one batch of vectors, however large the index. Each batch is
    committed on its own, so an interrupted fill keeps its work.

    `batch_guard`, when given, is entered around each batch's write (not around
    its embedding), e.g. the index's write lock: other writers then wait only for
    the write. When entering it yields False (a stop was requested while waiting)
    the fill stops there, as if cancelled, and that batch is not written.
    """
    with _small_page_cache(conn):
        return _fill(conn, embedder, layers, batch_size, progress, cancel, max_chunks, batch_guard)


def _fill(
    conn: apsw.Connection,
    embedder: Embedder,
    layers: Sequence[str],
    batch_size: int,
    progress: ProgressFn | None,
    cancel: threading.Event | None,
    max_chunks: int | None,
    batch_guard: BatchGuard | None,
) -> int:
    guard = batch_guard or _unguarded
    # Every write of the fill is guarded: the stale-vector sweep, each batch and the
    # final compaction (a writer elsewhere waits for one of them at most).
    with guard() as entered:
        if entered is False:
            return 0
        remove_stale_vectors(conn)
    in_layers = _layer_sql(layers)
    pending_from = (
        "FROM chunks c LEFT JOIN embedded e ON e.chunk_id = c.id"
        f" WHERE c.layer IN ({in_layers}) AND e.chunk_id IS NULL"
    )
    total = int(scalar(conn, f"SELECT count(*) {pending_from}") or 0)
    if max_chunks is not None:
        total = min(total, max_chunks)
    done = read = 0
    started = time.perf_counter()
    page_size = batch_size * _SORT_WINDOW_BATCHES
    after = 0
    while read < total:
        ids = [
            int(r[0])
            for r in conn.execute(
                f"SELECT c.id {pending_from} AND c.id > ? ORDER BY c.id LIMIT ?",
                (after, min(page_size, total - read)),
            )
        ]
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
                return _finish(done, total, started)
            batch = texts[batch_start : batch_start + batch_size]
            vectors = quantize(embedder.embed([text for text, _, _ in batch]))
            chunks = [(cid, layer) for _, cid, layer in batch]
            with guard() as entered:
                if entered is False:
                    return _finish(done, total, started)
                _store_batch(conn, chunks, vectors)
            done += len(batch)
            if progress:
                progress(done, total)
    with guard() as entered:
        if entered is not False:
            compact_vectors(conn)
    return _finish(done, total, started)


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
    conn: apsw.Connection, chunks: Sequence[tuple[int, str]], vectors: npt.NDArray[np.int8]
) -> None:
    """Write one batch's vectors with the text hash they were computed from; a chunk
    deleted meanwhile gets none."""
    hashes: dict[int, int] = {
        int(cid): int(digest)
        for cid, digest in conn.execute(
            f"SELECT id, text_hash FROM chunks WHERE id IN ({','.join('?' * len(chunks))})",
            [cid for cid, _ in chunks],
        )
    }
    with conn:
        stamp = next_vectors_stamp(conn)
        for (cid, layer), vector in zip(chunks, vectors, strict=True):
            if cid not in hashes:
                continue
            conn.execute("DELETE FROM chunk_vectors WHERE chunk_id = ?", (cid,))
            conn.execute(
                "INSERT INTO chunk_vectors (chunk_id, layer, embedding) VALUES (?, ?, vec_int8(?))",
                (cid, layer, vector.tobytes()),
            )
            conn.execute(
                "INSERT OR REPLACE INTO embedded (chunk_id, text_hash, stamp) VALUES (?, ?, ?)",
                (cid, hashes[cid], stamp),
            )


def _finish(done: int, total: int, started: float) -> int:
    if total:
        log.info("embedded %d of %d chunks in %.1fs", done, total, time.perf_counter() - started)
    return done


def embedding_text(text: str, qualified_name: str, layer: str) -> str:
    """What the model sees: a code chunk is prefixed with its qualified name, so a
    body that never states what it belongs to still carries that context."""
    if layer == "code" and qualified_name and qualified_name not in text[:200]:
        return f"{qualified_name}\n{text}"
    return text
