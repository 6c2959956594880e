"""The static embedding model as shipped: its table against the recipe's record,
its vectors, and the index's first search answered by them."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import apsw
import numpy as np
import pytest
from vector_workspace import FILES

import codesift
from codesift.embedding import Embedder, fill_vectors, vector_coverage
from codesift.embedding.model import FUSED_MODEL_ID, MODEL_ID
from codesift.embedding.static_model import (
    REFERENCE_TEXTS,
    STATIC_DIR,
    load_table,
    static_manifest,
    static_model_id,
    table_checksum,
)
from codesift.engine import Workspace
from codesift.engine.status import read_status
from codesift.indexer import IndexSummary
from codesift.retrieval import Searcher, SearchRequest
from codesift.store.database import scalar
from codesift.store.vectors import vector_models

pytestmark = pytest.mark.usefixtures("git_isolation")

MakeRepo = Callable[..., Path]
IndexWorkspace = Callable[..., tuple[apsw.Connection, IndexSummary]]
SERVER_DIR = Path(codesift.__file__).resolve().parent.parent


def test_the_shipped_table_is_the_one_the_recipe_recorded() -> None:
    manifest = static_manifest()
    path = STATIC_DIR / manifest["file"]
    assert path.stat().st_size <= 32 * 1024 * 1024
    assert hashlib.sha256(path.read_bytes()).hexdigest() == manifest["file_sha256"]
    table = load_table()
    assert table_checksum(table.rows, table.scales) == manifest["table_sha256"]
    assert table.rows.shape == (manifest["vocabulary"], manifest["dimensions"]) == (30522, 384)
    assert table.tokenizer.get_vocab_size() == table.rows.shape[0]
    # The recipe's reference vectors (first components), within float32 rounding.
    vectors = table.embed(list(REFERENCE_TEXTS))
    expected = np.array(manifest["reference_vectors"], np.float32)
    assert np.abs(vectors[:, : expected.shape[1]] - expected).max() < 1e-5
    assert manifest["recipe_version"] >= 1 and manifest["held_out_cosine"] > 0.7


def test_static_vectors_are_unit_length_and_keep_meaning() -> None:
    embedder = Embedder(model="static")
    vectors = embedder.embed(
        [
            "retry a declined card payment",
            "try a failed credit card charge again",
            "parse an XML file into a tree",
            "",
        ]
    )
    assert vectors.shape == (4, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert float(vectors[0] @ vectors[1]) > float(vectors[0] @ vectors[2]) + 0.1
    query = embedder.embed_query("retry a declined card payment")
    assert np.allclose(query, vectors[0], atol=1e-6)
    assert embedder.query_encoder() is None and embedder.query_path == "static"
    assert embedder.model_id == static_model_id()


def test_static_vectors_live_in_minilms_space(embedder: Embedder) -> None:
    """The table is fitted to MiniLM's sentence vectors: the static vector of a text
    is closer to MiniLM's vector of that text than to MiniLM's vector of another
    (0.86 cosine on average over held-out chunk texts; lower on prose sentences)."""
    texts = [
        "Read the configuration file and return its settings as a dictionary.",
        "def retry_failed_charge(charge, attempts=3): Try a declined payment again.",
        "Listen opens a TCP socket and accepts incoming network connections.",
    ]
    static = Embedder(model="static").embed(texts)
    minilm = embedder.embed(texts)
    agreement = static @ minilm.T
    assert np.all(np.diag(agreement) > 0.3), agreement
    assert np.all(np.argmax(agreement, axis=1) == np.arange(len(texts)))


def test_a_fill_with_another_model_replaces_every_vector(
    make_repo: MakeRepo, index_workspace: IndexWorkspace, embedder: Embedder
) -> None:
    conn, _ = index_workspace(make_repo(FILES))
    layers = ("summary", "doc")
    static = Embedder(model="static")
    assert vector_models(conn) == {}
    total = fill_vectors(conn, static, layers=layers)
    assert total == vector_coverage(conn, layers).embeddable
    assert vector_models(conn) == {static_model_id(): total}
    assert vector_coverage(conn, layers, static_model_id()).ratio == 1.0
    # For MiniLM the static vectors count as missing (though usable), and its fill
    # replaces them all.
    coverage = vector_coverage(conn, layers, FUSED_MODEL_ID)
    assert coverage.embedded == 0 and coverage.usable == total
    assert fill_vectors(conn, embedder, layers=layers) == total
    assert vector_models(conn) == {FUSED_MODEL_ID: total}
    assert scalar(conn, "SELECT count(*) FROM chunk_vectors") == total
    assert vector_coverage(conn, layers, static_model_id()).embedded == 0
    # Nothing left for MiniLM; a fill that only fills gaps (replace=False) leaves
    # another model's vectors alone; the static model's own fill takes them back.
    assert fill_vectors(conn, embedder, layers=layers) == 0
    assert fill_vectors(conn, static, layers=layers, replace=False) == 0
    assert fill_vectors(conn, static, layers=layers) == total
    assert vector_models(conn) == {static_model_id(): total}


def test_static_vectors_come_first_and_minilm_replaces_them(
    make_repo: MakeRepo, index_workspace: IndexWorkspace, embedder: Embedder
) -> None:
    """A MiniLM embedder with the static first tier: a fill gives every chunk a
    static vector at once, then replaces them; stopped after its first MiniLM batch,
    every chunk still has a vector the vector stream can use."""
    conn, _ = index_workspace(make_repo(FILES))
    layers = ("code", "summary", "doc")
    tiered = Embedder(embedder.cache_dir, max_tokens=embedder.max_tokens, static_first=True)
    assert tiered.first_tier is not None and tiered.first_tier.model == "static"
    total = vector_coverage(conn, layers).embeddable
    stop = threading.Event()
    progress: list[tuple[int, int]] = []

    def report(done: int, pending: int) -> None:
        progress.append((done, pending))
        stop.set()

    refined = fill_vectors(conn, tiered, layers=layers, batch_size=2, progress=report, cancel=stop)
    assert refined == 2 and progress == [(2, total)]
    assert vector_models(conn) == {static_model_id(): total - 2, FUSED_MODEL_ID: 2}
    coverage = vector_coverage(conn, layers, FUSED_MODEL_ID)
    assert (coverage.embedded, coverage.usable, coverage.embeddable) == (2, total, total)
    response = Searcher(conn, embedder=tiered).search(
        SearchRequest("accept incoming network connections", top_k=3)
    )
    hits = [h.stream for r in response.results for h in r.provenance]
    assert "vector" in hits, response.results
    # The next fill finishes the replacement; the static tier has nothing to do.
    assert fill_vectors(conn, tiered, layers=layers) == total - 2
    assert vector_models(conn) == {FUSED_MODEL_ID: total}


def test_vectors_written_before_the_model_column_are_the_recorded_models(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    conn, _ = index_workspace(make_repo(FILES))
    static = Embedder(model="static")
    filled = fill_vectors(conn, static, layers=("summary",))
    with conn:
        conn.execute("UPDATE embedded SET model = ''")
    assert vector_models(conn) == {MODEL_ID: filled}  # nothing recorded: MiniLM
    # So the static model computes them again.
    assert vector_coverage(conn, ("summary",), static_model_id()).embedded == 0
    assert fill_vectors(conn, static, layers=("summary",)) == filled
    with conn:
        conn.execute("UPDATE embedded SET model = ''")
        conn.execute(
            "INSERT INTO meta (key, value) VALUES ('vectors_model', ?)", (static_model_id(),)
        )
    assert vector_models(conn) == {static_model_id(): filled}


def _codesift(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(SERVER_DIR), "HF_HUB_OFFLINE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "codesift.cli", *args, "--root", str(root)],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
        timeout=120,
        check=False,
    )


def test_a_cold_index_answers_a_prose_query_with_the_vector_stream(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    """`codesift index` on a fresh workspace computes every vector before it returns
    (the static model, no background process), and the next search's vector stream
    finds a definition that shares no word with the question."""
    root = make_repo(FILES)
    # A model cache that does not exist: the static model needs none.
    (root / ".codesift.toml").write_text(
        f'[embedding]\nmodel = "static"\ncache_dir = "{tmp_path / "no-cache"}"\n',
        encoding="utf-8",
    )
    indexed = _codesift(root, "index", "--quiet")
    assert indexed.returncode == 0, indexed.stderr
    status = json.loads(_codesift(root, "status", "--json").stdout)
    assert status["vectors"]["embedded"] == status["vectors"]["embeddable"] > 0
    assert status["vectors"]["queries"] == "static"
    assert not (root / ".codesift" / "embed.log").exists()  # nothing ran in the background

    found = _codesift(root, "search", "give a rejected credit card payment another go", "--json")
    assert found.returncode == 0, found.stderr
    results = json.loads(found.stdout)["results"]
    charges = next(r for r in results if r["path"] == "billing/charges.py")
    assert any(h["stream"] == "vector" and h["rank"] <= 2 for h in charges["provenance"])
    assert not (tmp_path / "no-cache").exists()


def test_a_one_shot_search_on_a_fresh_workspace_uses_vectors(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    """In-process: the searcher's vector stream right after the lexical index and
    one static fill, no waiting."""
    conn, _ = index_workspace(make_repo(FILES))
    static = Embedder(model="static")
    fill_vectors(conn, static, layers=("summary", "doc"))
    response = Searcher(conn, embedder=static).search(
        SearchRequest("accept incoming network connections", top_k=3)
    )
    listen = next(r for r in response.results if r.path == "net/server.go")
    assert any(h.stream == "vector" for h in listen.provenance)


def test_status_shows_the_first_tiers_coverage_beside_minilms(
    make_repo: MakeRepo, index_workspace: IndexWorkspace, embedder: Embedder
) -> None:
    """An index with the static tier's vectors only: MiniLM's coverage is 0, and
    status says every chunk has a vector the vector stream can use, and whose."""
    root = make_repo(FILES)
    conn, _ = index_workspace(root)
    ws = Workspace.at(root, {"embedding": {"cache_dir": str(embedder.cache_dir)}})
    layers = ws.settings.embedding.layers
    total = fill_vectors(conn, Embedder(model="static"), layers=layers)
    vectors = read_status(ws, conn, rerank=False).vectors
    assert vectors is not None
    assert (vectors.embedded, vectors.usable, vectors.embeddable) == (0, total, total)
    assert vectors.models == {static_model_id(): total}
    fill_vectors(conn, embedder, layers=layers)
    vectors = read_status(ws, conn, rerank=False).vectors
    assert vectors is not None
    assert (vectors.embedded, vectors.usable) == (total, total)
    assert vectors.models == {FUSED_MODEL_ID: total}
