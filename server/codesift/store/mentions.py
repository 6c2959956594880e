"""The `mentions` table of a collection's index: which code names each resource
chunk mentions (codesift.retrieval.mentions), rebuilt when the index changed."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

import apsw

from codesift.store.meta import read_meta, write_meta
from codesift.store.rows import unpack_text

__all__ = [
    "mentioning_chunks",
    "mentions_stale",
    "replace_mentions",
    "resource_texts",
    "resource_titles",
]

_BUILT_KEY = "mentions_built_for"
_UPDATE_KEY = "last_update"


def mentions_stale(conn: apsw.Connection) -> bool:
    """True when the index changed since the mentions were last built."""
    return read_meta(conn, _BUILT_KEY) != (read_meta(conn, _UPDATE_KEY) or "")


def resource_texts(conn: apsw.Connection) -> Iterator[tuple[int, str]]:
    """(chunk id, text) of every doc-layer chunk and every text-file window."""
    for chunk_id, text in conn.execute(
        "SELECT c.id, c.text FROM chunks c JOIN files f ON f.id = c.file_id"
        " WHERE c.layer = 'doc' OR (c.layer = 'code' AND f.language = 'text')"
    ):
        yield int(chunk_id), unpack_text(text)


def resource_titles(conn: apsw.Connection) -> list[str]:
    """The heading paths of the doc-layer chunks (`Refunds > Partial refunds`), in
    file and line order, each once."""
    titles = conn.execute(
        "SELECT c.title FROM chunks c JOIN files f ON f.id = c.file_id"
        " WHERE c.layer = 'doc' AND c.title != '' ORDER BY f.path, c.start_line"
    )
    return list(dict.fromkeys(str(t) for (t,) in titles))


def replace_mentions(conn: apsw.Connection, pairs: Iterable[tuple[str, int]]) -> None:
    """Replace every mention with `pairs` of (term, chunk id), in one transaction,
    and record for which update they were built."""
    with conn:
        conn.execute("DELETE FROM mentions")
        conn.executemany("INSERT OR IGNORE INTO mentions (term, chunk_id) VALUES (?, ?)", pairs)
        write_meta(conn, _BUILT_KEY, read_meta(conn, _UPDATE_KEY) or "")


def mentioning_chunks(conn: apsw.Connection, terms: Sequence[str]) -> dict[str, list[int]]:
    """For each of `terms` that some chunk mentions, those chunks' ids."""
    found: dict[str, list[int]] = {}
    unique = list(dict.fromkeys(terms))
    for start in range(0, len(unique), 500):
        batch = unique[start : start + 500]
        marks = ",".join("?" * len(batch))
        for term, chunk_id in conn.execute(
            f"SELECT term, chunk_id FROM mentions WHERE term IN ({marks}) ORDER BY chunk_id",
            batch,
        ):
            found.setdefault(str(term), []).append(int(chunk_id))
    return found
