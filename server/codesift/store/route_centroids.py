"""A repository's topics for routing: a few centroids of its chunk vectors.

The chunk vectors (summary and doc layers, static or MiniLM: both live in MiniLM's
space) are grouped by spherical k-means into at most CENTROIDS unit vectors; a
question's cosine to the nearest of them says how close it is to something the
repository is about, whatever words it uses. At most SAMPLE_VECTORS vectors (an
even stride over the chunk ids) are clustered: the centroids of a 72,000-chunk
index in ~0.2 s.

With a MiniLM query, a repository whose vectors are MiniLM's also gives the mean
cosine of the NEIGHBOURS chunk vectors nearest to the question
(`neighbour_similarity`): one sqlite-vec kNN, ~6 ms on a 90,000-vector index.

Computed on demand and kept in memory per index file, with its vector counters
(`vectors_stamp`, `vectors_removed`): a removal of vectors computes them again,
so they never describe vectors the index no longer holds; vectors written since
(a fill in progress, MiniLM replacing the static tier) do once they are more
than REFRESH_SHARE of the index's (a fill writes a batch every second or so, and
each computation of a large index's centroids takes ~0.2 s).
"""

from __future__ import annotations

import threading
from pathlib import Path

import apsw
import numpy as np
import numpy.typing as npt

from codesift.store.vector_stamps import vector_counters
from codesift.store.vectors import quantize, vector_models

__all__ = [
    "CENTROIDS",
    "NEIGHBOURS",
    "REFRESH_SHARE",
    "SAMPLE_VECTORS",
    "cached_centroids",
    "neighbour_similarity",
    "vector_centroids",
    "vectors_are_minilm",
]

# Set with bench/route_quality.py on half of the dev-set queries (32 against 8 and
# 128: 128 is no better and 4x the work per query).
CENTROIDS = 32
SAMPLE_VECTORS = 8192
_ITERATIONS = 10
_DIMENSIONS = 384

Centroids = npt.NDArray[np.float32]


def _sampled_vectors(conn: apsw.Connection, limit: int) -> npt.NDArray[np.float32]:
    try:
        row = conn.execute("SELECT count(*) FROM embedded").fetchone()
        total = int(row[0]) if row else 0
        if total == 0:
            return np.zeros((0, _DIMENSIONS), np.float32)
        stride = max(1, -(-total // limit))
        rows = conn.execute(
            "SELECT v.embedding FROM chunk_vectors v WHERE v.chunk_id IN"
            " (SELECT chunk_id FROM (SELECT chunk_id, row_number() OVER (ORDER BY chunk_id)"
            " AS n FROM embedded) WHERE n % ? = 0)",
            (stride,),
        ).fetchall()
    except apsw.SQLError:  # no vector tables (an index without sqlite-vec loaded)
        return np.zeros((0, _DIMENSIONS), np.float32)
    blobs = [r[0] for r in rows if isinstance(r[0], bytes) and len(r[0]) == _DIMENSIONS]
    if not blobs:
        return np.zeros((0, _DIMENSIONS), np.float32)
    vectors = np.frombuffer(b"".join(blobs), dtype=np.int8).reshape(-1, _DIMENSIONS)
    out = vectors.astype(np.float32)
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    out /= norms
    return out


def vector_centroids(
    conn: apsw.Connection, k: int = CENTROIDS, sample: int = SAMPLE_VECTORS
) -> Centroids | None:
    """At most `k` unit centroids of the index's chunk vectors (spherical k-means
    of at most `sample` of them, seeded: the same vectors give the same
    centroids); None when the index holds no vector."""
    vectors = _sampled_vectors(conn, sample)
    if len(vectors) == 0:
        return None
    k = min(k, len(vectors))
    # Seeds spread evenly over the (chunk-id ordered) sample: deterministic.
    centroids = vectors[np.linspace(0, len(vectors) - 1, k).astype(np.intp)].copy()
    for _ in range(_ITERATIONS):
        nearest = np.argmax(vectors @ centroids.T, axis=1)
        for j in range(k):
            members = vectors[nearest == j]
            if len(members):
                total = members.sum(axis=0)
                norm = float(np.linalg.norm(total))
                if norm > 0:
                    centroids[j] = total / norm
    return centroids


# The share of an index's vectors written since its centroids (or its MiniLM share)
# were computed above which they are computed again.
REFRESH_SHARE = 0.05

_lock = threading.Lock()
_cache: dict[Path, tuple[tuple[int, int, int], Centroids | None]] = {}


def _vector_key(conn: apsw.Connection) -> tuple[int, int, int]:
    stamp, removed = vector_counters(conn)
    try:
        row = conn.execute("SELECT count(*) FROM embedded").fetchone()
    except apsw.SQLError:
        return stamp, removed, 0
    return stamp, removed, int(row[0]) if row else 0


def _still_current(
    conn: apsw.Connection, computed: tuple[int, int, int], now: tuple[int, int, int]
) -> bool:
    """Whether what was computed at vector counters `computed` still describes the
    index at `now`: no vector removed since, and at most REFRESH_SHARE of them
    written since (new ones and ones that replaced another model's)."""
    if computed == now:
        return True
    stamp, removed, _count = computed
    if now[1] != removed:
        return False
    try:
        row = conn.execute("SELECT count(*) FROM embedded WHERE stamp > ?", (stamp,)).fetchone()
    except apsw.SQLError:
        return False
    written = int(row[0]) if row else 0
    return written <= REFRESH_SHARE * max(now[2], 1)


def cached_centroids(db_path: Path, conn: apsw.Connection) -> Centroids | None:
    """`vector_centroids` of the index at `db_path` (read through `conn`), kept
    until a vector is removed or more than REFRESH_SHARE of them are written."""
    key = _vector_key(conn)
    with _lock:
        hit = _cache.get(db_path)
    if hit is not None and _still_current(conn, hit[0], key):
        return hit[1]
    centroids = vector_centroids(conn)
    with _lock:
        _cache[db_path] = (key, centroids)
    return centroids


# The nearest chunk vectors whose mean cosine is a repository's neighbour score, and
# the share of its vectors MiniLM must have made for a MiniLM query to be measured
# against them (static vectors answer a MiniLM query worse than static centroids
# do: bench/RESULTS.md, routing notes).
NEIGHBOURS = 3
MINILM_SHARE = 0.9
_MINILM_PREFIX = "all-MiniLM"

_shares: dict[Path, tuple[tuple[int, int, int], float]] = {}


def _minilm_share(db_path: Path, conn: apsw.Connection) -> float:
    """The share of the index's vectors a MiniLM model made, kept as the centroids
    are (`_still_current`)."""
    key = _vector_key(conn)
    with _lock:
        hit = _shares.get(db_path)
    if hit is not None and _still_current(conn, hit[0], key):
        return hit[1]
    try:
        models = vector_models(conn)
    except apsw.SQLError:  # no vector tables
        models = {}
    total = sum(models.values())
    minilm = sum(n for model, n in models.items() if model.startswith(_MINILM_PREFIX))
    share = minilm / total if total else 0.0
    with _lock:
        _shares[db_path] = (key, share)
    return share


def vectors_are_minilm(db_path: Path, conn: apsw.Connection) -> bool:
    """Whether at least MINILM_SHARE of the index's vectors are MiniLM's."""
    return _minilm_share(db_path, conn) >= MINILM_SHARE


def neighbour_similarity(
    db_path: Path, conn: apsw.Connection, query_vector: npt.NDArray[np.float32]
) -> float | None:
    """The mean cosine of the NEIGHBOURS chunk vectors nearest to `query_vector`, a
    MiniLM query of unit length (a sqlite-vec kNN); None unless the index's vectors
    are MiniLM's (`vectors_are_minilm`)."""
    if not vectors_are_minilm(db_path, conn):
        return None
    quantized = quantize(query_vector[None, :])[0]
    try:
        distances = [
            float(d)
            for (d,) in conn.execute(
                "SELECT distance FROM chunk_vectors WHERE embedding MATCH vec_int8(?) AND k = ?",
                (quantized.tobytes(), NEIGHBOURS),
            )
            if isinstance(d, int | float)
        ]
    except apsw.SQLError:
        return None
    if not distances:
        return None
    return float(np.mean([1.0 - d for d in distances]))
