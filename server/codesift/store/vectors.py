"""The SQL of the chunk vectors: the `chunk_vectors` vec0 table, the `embedded`
table (which text and which write each vector came from) and the model that made
them (`meta.vectors_model`).

embedding/vectors.py fills the table and retrieval/vector_index.py keeps an
in-memory copy of it; both go through these functions.

Which model made each vector: `embedded.model` (migration 7). A fill replaces the
vectors another model made (the static model's first-tier vectors, or those of a
model the settings no longer name), and coverage for a model counts only its own.
A row written before the column existed has '' there: its model is the one
`meta.vectors_model` names, else all-MiniLM-L6-v2 (`LEGACY_MODEL`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import apsw
import numpy as np
import numpy.typing as npt

from codesift.store.database import scalar
from codesift.store.vector_stamps import bump_vectors_removed, next_vectors_stamp

__all__ = [
    "LEGACY_MODEL",
    "VECTOR_LAYERS",
    "all_vectors",
    "chunk_text_hashes",
    "count_embeddable",
    "count_embedded",
    "count_pending",
    "delete_vectors",
    "embedded_hashes",
    "embedded_ids",
    "embedded_models",
    "insert_vectors",
    "pending_chunk_ids",
    "quantize",
    "rewrite_vector_table",
    "small_page_cache",
    "stale_vector_ids",
    "vector_models",
    "vector_slots",
    "vectors_since",
    "write_vectors",
]

MODEL_KEY = "vectors_model"
# What made the vectors of an index that records no model: codesift embedded with
# all-MiniLM-L6-v2 (int8 weights) before it recorded the model.
LEGACY_MODEL = "all-MiniLM-L6-v2-int8"
# Layers a vector may belong to (the bare `ast` layer never gets one).
VECTOR_LAYERS: tuple[str, ...] = ("code", "summary", "doc")


def quantize(vectors: npt.NDArray[np.float32]) -> npt.NDArray[np.int8]:
    """The int8 form the vector table keeps: each row scaled so its largest
    component is ±127, then rounded."""
    peaks = np.abs(vectors).max(axis=1, keepdims=True)
    peaks[peaks == 0] = 1.0
    scaled: npt.NDArray[np.int8] = np.round(vectors * (127.0 / peaks)).astype(np.int8)
    return scaled


def _in_layers(layers: Sequence[str]) -> str:
    """The layers as an SQL list (only known layer names reach the SQL text)."""
    return ",".join(f"'{layer}'" for layer in layers if layer in VECTOR_LAYERS) or "''"


# -- the model -----------------------------------------------------------------------


def _legacy_model(conn: apsw.Connection) -> str:
    """The model of rows whose `model` is '' (written before the column existed)."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (MODEL_KEY,)).fetchone()
    return str(row[0]) if row is not None and row[0] else LEGACY_MODEL


_ROW_MODEL = "coalesce(nullif(e.model, ''), ?)"


def vector_models(conn: apsw.Connection) -> dict[str, int]:
    """How many vectors each model made."""
    return {
        str(model): int(count)
        for model, count in conn.execute(
            f"SELECT {_ROW_MODEL} AS m, count(*) FROM embedded e GROUP BY m ORDER BY m",
            (_legacy_model(conn),),
        )
    }


# -- coverage ------------------------------------------------------------------------


def count_embeddable(conn: apsw.Connection, layers: Sequence[str]) -> int:
    return int(
        scalar(conn, f"SELECT count(*) FROM chunks WHERE layer IN ({_in_layers(layers)})") or 0
    )


def count_embedded(conn: apsw.Connection, layers: Sequence[str], model: str | None = None) -> int:
    """Chunks of `layers` whose vector was computed from their current text (by
    `model` when given)."""
    sql = (
        "SELECT count(*) FROM chunks c JOIN embedded e ON e.chunk_id = c.id"
        f" AND e.text_hash = c.text_hash WHERE c.layer IN ({_in_layers(layers)})"
    )
    if model is None:
        return int(scalar(conn, sql) or 0)
    return int(scalar(conn, f"{sql} AND {_ROW_MODEL} = ?", (_legacy_model(conn), model)) or 0)


# -- filling -------------------------------------------------------------------------


def stale_vector_ids(conn: apsw.Connection) -> list[int]:
    """Chunks with a vector whose chunk is gone or whose text changed."""
    return [
        int(r[0])
        for r in conn.execute(
            "SELECT e.chunk_id FROM embedded e LEFT JOIN chunks c ON c.id = e.chunk_id"
            " WHERE c.id IS NULL OR c.text_hash != e.text_hash"
        )
    ]


def delete_vectors(conn: apsw.Connection, ids: Sequence[int]) -> None:
    """Delete these chunks' vectors in one transaction, recording the removal."""
    with conn:
        conn.executemany("DELETE FROM chunk_vectors WHERE chunk_id = ?", [(i,) for i in ids])
        conn.executemany("DELETE FROM embedded WHERE chunk_id = ?", [(i,) for i in ids])
        bump_vectors_removed(conn)


def _pending_from(layers: Sequence[str], replace: bool) -> str:
    """Chunks of `layers` without a vector, and with `replace` also those whose
    vector another model made (two parameters: the legacy model, the model)."""
    missing = "e.chunk_id IS NULL"
    if replace:
        missing = f"({missing} OR {_ROW_MODEL} != ?)"
    return (
        "FROM chunks c LEFT JOIN embedded e ON e.chunk_id = c.id"
        f" WHERE c.layer IN ({_in_layers(layers)}) AND {missing}"
    )


def _pending_args(conn: apsw.Connection, model: str | None) -> tuple[str, ...]:
    return () if model is None else (_legacy_model(conn), model)


def count_pending(conn: apsw.Connection, layers: Sequence[str], model: str | None = None) -> int:
    """Chunks of `layers` without a vector; with `model`, also those whose vector
    another model made."""
    sql = f"SELECT count(*) {_pending_from(layers, model is not None)}"
    return int(scalar(conn, sql, _pending_args(conn, model)) or 0)


def pending_chunk_ids(
    conn: apsw.Connection, layers: Sequence[str], after: int, limit: int, model: str | None = None
) -> list[int]:
    """Up to `limit` chunks that `count_pending` counts, with ids above `after`, in
    id order."""
    return [
        int(r[0])
        for r in conn.execute(
            f"SELECT c.id {_pending_from(layers, model is not None)}"
            " AND c.id > ? ORDER BY c.id LIMIT ?",
            (*_pending_args(conn, model), after, limit),
        )
    ]


def embedded_hashes(conn: apsw.Connection, ids: Sequence[int]) -> dict[int, int]:
    """The text hash each chunk of `ids` that has a vector had when it was embedded."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    return {
        int(cid): int(digest)
        for cid, digest in conn.execute(
            f"SELECT chunk_id, text_hash FROM embedded WHERE chunk_id IN ({marks})", list(ids)
        )
    }


def embedded_models(conn: apsw.Connection, ids: Sequence[int]) -> dict[int, str]:
    """The model that made the vector of each chunk of `ids` that has one."""
    out: dict[int, str] = {}
    legacy = _legacy_model(conn)
    for start in range(0, len(ids), 500):
        batch = list(ids[start : start + 500])
        marks = ",".join("?" * len(batch))
        for cid, model in conn.execute(
            f"SELECT e.chunk_id, {_ROW_MODEL} FROM embedded e WHERE e.chunk_id IN ({marks})",
            (legacy, *batch),
        ):
            out[int(cid)] = str(model)
    return out


def chunk_text_hashes(conn: apsw.Connection, ids: Sequence[int]) -> dict[int, int]:
    """Text hash of each chunk of `ids` that exists."""
    if not ids:
        return {}
    return {
        int(cid): int(digest)
        for cid, digest in conn.execute(
            f"SELECT id, text_hash FROM chunks WHERE id IN ({','.join('?' * len(ids))})",
            list(ids),
        )
    }


def write_vectors(
    conn: apsw.Connection,
    rows: Sequence[tuple[int, str, bytes, int]],
    model: str,
) -> None:
    """Write (chunk id, layer, int8 vector bytes, text hash) rows that `model` made,
    in one transaction under a new stamp."""
    with conn:
        insert_vectors(conn, rows, model)


def insert_vectors(
    conn: apsw.Connection,
    rows: Sequence[tuple[int, str, bytes, int]],
    model: str,
    *,
    replace: bool = True,
) -> None:
    """`write_vectors` inside the caller's transaction. `replace` False: the chunks
    are new and have no vector yet (nothing to delete first)."""
    stamp = next_vectors_stamp(conn)
    if replace:
        conn.executemany(
            "DELETE FROM chunk_vectors WHERE chunk_id = ?", [(cid,) for cid, _, _, _ in rows]
        )
    conn.executemany(
        "INSERT INTO chunk_vectors (chunk_id, layer, embedding) VALUES (?, ?, vec_int8(?))",
        [(cid, layer, blob) for cid, layer, blob, _ in rows],
    )
    # An upsert, not INSERT OR REPLACE: the same row, and in an index run with the
    # static vectors ~10x less CPU (REPLACE deletes the old row and its index entry
    # first, even where there is none: 1.2 of the writer's ~7 CPU-s on the stdlib
    # copy, against 0.1).
    conn.executemany(
        "INSERT INTO embedded (chunk_id, text_hash, stamp, model) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (chunk_id) DO UPDATE SET text_hash = excluded.text_hash,"
        " stamp = excluded.stamp, model = excluded.model",
        [(cid, digest, stamp, model) for cid, _, _, digest in rows],
    )


# -- the vec0 table's slots ------------------------------------------------------------


def vector_slots(conn: apsw.Connection) -> tuple[int, int]:
    """(vectors, slots) of the vec0 table: slots include those of deleted vectors."""
    rows = int(scalar(conn, "SELECT count(*) FROM chunk_vectors") or 0)
    slots = int(scalar(conn, "SELECT coalesce(sum(size), 0) FROM chunk_vectors_chunks") or 0)
    return rows, slots


def rewrite_vector_table(conn: apsw.Connection) -> None:
    """The vec0 table written anew with the same rows (ids and stamps kept), in one
    transaction: no slot of a deleted vector stays."""
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


@contextlib.contextmanager
def small_page_cache(conn: apsw.Connection, kib: int) -> Iterator[None]:
    """Run a block with the connection's page cache at `kib` KiB (and the pages it
    held released), then give it back its size."""
    previous = int(scalar(conn, "PRAGMA cache_size"))
    conn.execute(f"PRAGMA cache_size=-{int(kib)}")
    conn.execute("PRAGMA shrink_memory")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA cache_size={previous}")


# -- reading for the in-memory copy ------------------------------------------------------


def all_vectors(conn: apsw.Connection) -> list[Any]:
    """(chunk id, layer, int8 vector bytes) of every vector."""
    rows: list[Any] = conn.execute(
        "SELECT chunk_id, layer, embedding FROM chunk_vectors"
    ).fetchall()
    return rows


def vectors_since(conn: apsw.Connection, stamp: int) -> list[Any]:
    """(chunk id, layer, int8 vector bytes) of the vectors written after `stamp`."""
    rows: list[Any] = conn.execute(
        "SELECT v.chunk_id, v.layer, v.embedding FROM embedded e"
        " JOIN chunk_vectors v ON v.chunk_id = e.chunk_id WHERE e.stamp > ?",
        (stamp,),
    ).fetchall()
    return rows


def embedded_ids(conn: apsw.Connection) -> list[int]:
    """Ids of the chunks that have a vector."""
    return [int(r[0]) for r in conn.execute("SELECT chunk_id FROM embedded")]
