"""Static vectors computed by the index workers with the rows (embedding/row_vectors.py):
the very vectors the fill after the run would compute, which that fill then finds
current, and new ones with the rows when a file changes."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import apsw
import pytest
from vector_workspace import FILES, stored_vectors

from codesift.config import load_settings
from codesift.embedding import Embedder, fill_vectors, vector_coverage
from codesift.embedding.static_model import static_model_id
from codesift.indexer import Indexer
from codesift.store.database import open_database
from codesift.worker_pool import PARALLEL_MIN_FILES

pytestmark = pytest.mark.usefixtures("git_isolation")

MakeRepo = Callable[..., Path]
LAYERS = ("code", "summary", "doc")


def _workspace_files() -> dict[str, str]:
    """The vector workspace and enough modules for the index workers to run: classes,
    methods and calls (summaries name them), non-ASCII doc comments (which the
    tokenizer itself reads), module-level code, a file without a grammar (chunks
    without a node) and Markdown sections."""
    files = dict(FILES)
    for i in range(PARALLEL_MIN_FILES + 10):
        files[f"pkg/mod_{i:03d}.py"] = (
            f'"""Module {i}: résumé of the ledger café, façade number {i}."""\n\n'
            f"LIMIT_{i} = {i}\n\n"
            f"class Ledger{i}:\n"
            f'    """Keep the accounts of branch {i} in balance."""\n\n'
            f"    def post(self, amount: int) -> int:\n"
            f'        """Post an amount to the ledger and return the new balance."""\n'
            f"        return self.settle(amount) + LIMIT_{i}\n\n"
            f"    def settle(self, amount: int) -> int:\n"
            f"        return amount * {i}\n\n\n"
            f"def open_ledger_{i}() -> Ledger{i}:\n"
            f"    return Ledger{i}()\n"
        )
    # No grammar: line windows without a node, named by their file's path.
    files["config/ledger.ini"] = "[ledger]\nbranches = 110\nsettle_at = 23:00\ncurrency = EUR\n"
    files["docs/guide.md"] = (
        "# Guide\n\nHow the ledgers settle their accounts.\n\n"
        "## Posting\n\nAmounts are posted, then settled at the end of the day.\n"
    )
    return files


def _index(root: Path, db: Path, *, with_rows: bool) -> apsw.Connection:
    """Index `root` into `db`: with the workers' vectors, or then a static fill."""
    settings = load_settings(root, {"embedding": {"layers": list(LAYERS)}, "index": {"workers": 2}})
    conn = open_database(db)
    summary = Indexer(root, settings, conn, static_vectors=with_rows).run()
    assert summary.indexed >= PARALLEL_MIN_FILES  # so the worker processes ran
    if not with_rows:
        static = Embedder(model="static", max_tokens=settings.embedding.max_tokens)
        assert fill_vectors(conn, static, layers=LAYERS) > 0
    return conn


def test_the_workers_compute_the_vectors_a_fill_would(make_repo: MakeRepo, tmp_path: Path) -> None:
    root = make_repo(_workspace_files())
    filled = _index(root, tmp_path / "filled.db", with_rows=False)
    with_rows = _index(root, tmp_path / "rows.db", with_rows=True)
    try:
        expected = stored_vectors(filled)
        assert len(expected) > 3 * PARALLEL_MIN_FILES
        assert {layer for _, layer, _, _ in expected} == set(LAYERS)
        assert stored_vectors(with_rows) == expected
        # Every chunk has its vector already: the fill after the run has nothing to do.
        coverage = vector_coverage(with_rows, LAYERS, static_model_id())
        assert coverage.embedded == coverage.embeddable == len(expected)
        static = Embedder(model="static")
        assert fill_vectors(with_rows, static, layers=LAYERS) == 0

        # A changed file: its rows come with new vectors, the others' stay.
        changed = root / "pkg" / "mod_007.py"
        changed.write_text(
            changed.read_text(encoding="utf-8").replace(
                "Post an amount to the ledger", "Record a payment in the journal"
            ),
            encoding="utf-8",
        )
        before = stored_vectors(with_rows)
        settings = load_settings(root, {"embedding": {"layers": list(LAYERS)}})
        Indexer(root, settings, with_rows, static_vectors=True).run()
        Indexer(root, settings, filled).run()
        assert fill_vectors(filled, static, layers=LAYERS) > 0
        after = stored_vectors(with_rows)
        assert after == stored_vectors(filled)
        moved = {key for key in after if before.get(key) != after[key]}
        assert moved and {path for path, _, _, _ in moved} == {"pkg/mod_007.py"}
        assert fill_vectors(with_rows, static, layers=LAYERS) == 0
        rows = with_rows.execute("SELECT count(*) FROM chunk_vectors").fetchall()
        assert rows[0][0] == len(after)
    finally:
        filled.close()
        with_rows.close()


def test_a_changed_file_keeps_the_vectors_of_its_unchanged_chunks(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    """A vector of a chunk whose text did not change stays (MiniLM's, say): only the
    changed chunks get the static vectors of the rows."""
    root = make_repo(_workspace_files())
    conn = _index(root, tmp_path / "rows.db", with_rows=True)
    try:
        path = "pkg/mod_007.py"
        ids = [
            int(cid)
            for (cid,) in conn.execute(
                "SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = ?"
                " AND c.id IN (SELECT chunk_id FROM embedded)",
                (path,),
            )
        ]
        assert len(ids) >= 3
        with conn:  # as if MiniLM had replaced this file's static vectors
            conn.executemany(
                "UPDATE embedded SET model = 'minilm-test' WHERE chunk_id = ?", [(i,) for i in ids]
            )
        before = stored_vectors(conn)
        changed = root / path
        changed.write_text(
            changed.read_text(encoding="utf-8").replace(
                "Post an amount to the ledger", "Record a payment in the journal"
            ),
            encoding="utf-8",
        )
        settings = load_settings(root, {"embedding": {"layers": list(LAYERS)}})
        Indexer(root, settings, conn, static_vectors=True).run()
        after = stored_vectors(conn)
        mine = {key: value for key, value in after.items() if key[0] == path}
        moved = {key for key, value in mine.items() if before.get(key) != value}
        kept = {key for key, value in mine.items() if value[1] == "minilm-test"}
        assert moved and kept and moved.isdisjoint(kept)
        assert {after[key][1] for key in moved} == {static_model_id()}
        assert kept == {key for key in mine if key not in moved}
    finally:
        conn.close()
