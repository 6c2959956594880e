"""The SQL of the chunk vectors: the `chunk_vectors` vec0 table, the `embedded`
table (which text and which write each vector came from) and the model that made
them (`meta.vectors_model`).

embedding/vectors.py fills the table and retrieval/vector_index.py keeps an
in-memory copy of it; both go through these functions.

Which model made the vectors: one model per index. `vectors_model` is recorded by
the fill that writes vectors; a fill with another model first removes every
vector (`clear_vectors`), and coverage counts vectors of another model as missing.
An index written before the record existed holds all-MiniLM-L6-v2 vectors
(`LEGACY_MODEL`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import apsw

from codesift.store.database import scalar
from codesift.store.vector_stamps import bump_vectors_removed, next_vectors_stamp

__all__ = [
    "LEGACY_MODEL",
    "VECTOR_LAYERS",
    "all_vectors",
    "chunk_text_hashes",
    "clear_vectors",
    "count_embeddable",
    "count_embedded",
    "count_pending",
    "delete_vectors",
    "embedded_ids",
    "pending_chunk_ids",
    "record_vectors_model",
    "rewrite_vector_table",
    "small_page_cache",
    "stale_vector_ids",
    "vector_slots",
    "vectors_model",
    "vectors_since",
    "write_vectors",
]

MODEL_KEY = "vectors_model"
# What made the vectors of an index that records no model: codesift embedded with
# all-MiniLM-L6-v2 (int8 weights) before it recorded the model.
LEGACY_MODEL = "all-MiniLM-L6-v2-int8"
# Layers a vector may belong to (the bare `ast` layer never gets one).
VECTOR_LAYERS: tuple[str, ...] = ("code", "summary", "doc")


def _in_layers(layers: Sequence[str]) -> str:
    """The layers as an SQL list (only known layer names reach the SQL text)."""
    return ",".join(f"'{layer}'" for layer in layers if layer in VECTOR_LAYERS) or "''"


# -- the model -----------------------------------------------------------------------


def vectors_model(conn: apsw.Connection) -> str | None:
    """The model that made the index's vectors; None when it has none."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (MODEL_KEY,)).fetchone()
    if row is not None and row[0]:
        return str(row[0])
    has_any = conn.execute("SELECT 1 FROM embedded LIMIT 1").fetchone() is not None
    return LEGACY_MODEL if has_any else None


def record_vectors_model(conn: apsw.Connection, model: str) -> None:
    """Record the model of the vectors about to be written (inside a transaction)."""
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (MODEL_KEY, model))


def clear_vectors(conn: apsw.Connection, model: str) -> int:
    """Remove every vector (another model made them) and record `model`; the vec0
    table is created anew, so no slot of the old vectors stays. How many there were."""
    with conn:
        count = int(scalar(conn, "SELECT count(*) FROM embedded") or 0)
        schema = scalar(conn, "SELECT sql FROM sqlite_schema WHERE name = 'chunk_vectors'")
        conn.execute("DROP TABLE chunk_vectors")
        conn.execute(str(schema))
        conn.execute("DELETE FROM embedded")
        bump_vectors_removed(conn)
        record_vectors_model(conn, model)
    return count


# -- coverage ------------------------------------------------------------------------


def count_embeddable(conn: apsw.Connection, layers: Sequence[str]) -> int:
    return int(
        scalar(conn, f"SELECT count(*) FROM chunks WHERE layer IN ({_in_layers(layers)})") or 0
    )


def count_embedded(conn: apsw.Connection, layers: Sequence[str]) -> int:
    """Chunks of `layers` whose vector was computed from their current text."""
    return int(
        scalar(
            conn,
            "SELECT count(*) FROM chunks c JOIN embedded e ON e.chunk_id = c.id"
            f" AND e.text_hash = c.text_hash WHERE c.layer IN ({_in_layers(layers)})",
        )
        or 0
    )


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


def _pending_from(layers: Sequence[str]) -> str:
    return (
        "FROM chunks c LEFT JOIN embedded e ON e.chunk_id = c.id"
        f" WHERE c.layer IN ({_in_layers(layers)}) AND e.chunk_id IS NULL"
    )


def count_pending(conn: apsw.Connection, layers: Sequence[str]) -> int:
    """Chunks of `layers` without a vector."""
    return int(scalar(conn, f"SELECT count(*) {_pending_from(layers)}") or 0)


def pending_chunk_ids(
    conn: apsw.Connection, layers: Sequence[str], after: int, limit: int
) -> list[int]:
    """Up to `limit` chunks of `layers` without a vector, with ids above `after`,
    in id order."""
    return [
        int(r[0])
        for r in conn.execute(
            f"SELECT c.id {_pending_from(layers)} AND c.id > ? ORDER BY c.id LIMIT ?",
            (after, limit),
        )
    ]


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
    """Write (chunk id, layer, int8 vector bytes, text hash) rows in one transaction
    under a new stamp, and record `model` as the vectors' model."""
    with conn:
        stamp = next_vectors_stamp(conn)
        record_vectors_model(conn, model)
        ids = [(cid,) for cid, _, _, _ in rows]
        conn.executemany("DELETE FROM chunk_vectors WHERE chunk_id = ?", ids)
        conn.executemany(
            "INSERT INTO chunk_vectors (chunk_id, layer, embedding) VALUES (?, ?, vec_int8(?))",
            [(cid, layer, blob) for cid, layer, blob, _ in rows],
        )
        conn.executemany(
            "INSERT OR REPLACE INTO embedded (chunk_id, text_hash, stamp) VALUES (?, ?, ?)",
            [(cid, digest, stamp) for cid, _, _, digest in rows],
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
