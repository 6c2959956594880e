"""The chunk facts a long-running Searcher keeps (store/sqlite/chunk_facts.py): the
same answers as the index gives, and none kept past a change of the index."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import apsw
import pytest

from codesift.indexer import IndexSummary
from codesift.retrieval import Searcher, SearchRequest
from codesift.store.data_version import IndexVersion
from codesift.store.database import open_reader
from codesift.store.filters import SearchFilters
from codesift.store.sqlite.chunk_facts import ChunkFacts
from codesift.store.sqlite.search import SqliteSearchStore

pytestmark = pytest.mark.usefixtures("git_isolation")

MakeRepo = Callable[..., Path]
IndexWorkspace = Callable[..., tuple[apsw.Connection, IndexSummary]]

FILES = {
    "billing/invoice.py": "def total_due(lines):\n    return sum(l.amount for l in lines)\n",
    "billing/tax.py": "def vat_rate(country):\n    return 0.2 if country == 'FR' else 0.1\n",
}
ALL_LAYERS = SearchFilters(("code", "summary", "doc", "ast"))


def _chunk_ids(conn: apsw.Connection) -> list[int]:
    return [int(r[0]) for r in conn.execute("SELECT id FROM chunks ORDER BY id")]


def _db_path(conn: apsw.Connection) -> Path:
    return Path(str(conn.filename))


def test_places_and_current_vectors_follow_every_change_of_the_index(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    root = make_repo(FILES)
    conn, _ = index_workspace(root)
    reader = open_reader(_db_path(conn))
    facts = ChunkFacts(IndexVersion(_db_path(conn)))
    cached, plain = SqliteSearchStore(reader, facts), SqliteSearchStore(reader)
    try:
        before = _chunk_ids(conn)
        assert cached.chunk_places(before) == plain.chunk_places(before)
        assert {p.path for p in cached.chunk_places(before)} == set(FILES)

        # A file's chunks change place (a rename, as the indexer writes it); the ids
        # asked before are asked again, with the new ones.
        (root / "billing/tax.py").rename(root / "billing/rates.py")
        index_workspace(root)
        after = _chunk_ids(conn)
        asked = sorted(set(before) | set(after))
        assert cached.chunk_places(asked) == plain.chunk_places(asked)
        assert "billing/rates.py" in {p.path for p in cached.chunk_places(asked)}
        assert "billing/tax.py" not in {p.path for p in cached.chunk_places(asked)}

        # Vectors: the embedder's rows, written as it writes them (text hash of the
        # chunk it embedded). A vector made stale by an edit is no longer current.
        code = [
            int(r[0]) for r in conn.execute("SELECT id FROM chunks WHERE layer = 'code' LIMIT 2")
        ]
        with conn:
            for cid in code:
                conn.execute(
                    "INSERT OR REPLACE INTO embedded (chunk_id, text_hash)"
                    " SELECT id, text_hash FROM chunks WHERE id = ?",
                    (cid,),
                )
        assert cached.current_chunks(code, ALL_LAYERS) == set(code)
        with conn:
            conn.execute(
                "UPDATE embedded SET text_hash = text_hash + 1 WHERE chunk_id = ?", (code[0],)
            )
        assert cached.current_chunks(code, ALL_LAYERS) == {code[1]}
        assert plain.current_chunks(code, ALL_LAYERS) == {code[1]}
    finally:
        facts.close()
        reader.close()


def test_a_long_running_searcher_shows_a_renamed_file_at_its_new_path(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    root = make_repo(FILES)
    conn, _ = index_workspace(root)
    with Searcher(conn) as searcher:  # streams side by side, on reader connections
        assert searcher.parallel
        first = searcher.search(SearchRequest("vat_rate", top_k=1))
        assert first.results[0].path == "billing/tax.py"
        (root / "billing/tax.py").rename(root / "billing/rates.py")
        index_workspace(root)
        again = searcher.search(SearchRequest("vat_rate", top_k=1))
        assert again.results[0].path == "billing/rates.py"
