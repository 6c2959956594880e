"""Chunk batches on the fused int8 graph: close to the export's vectors, recorded
under their own model id (an index made by the export is embedded again), and a
graph that cannot be built leaves batches on the export, decided once for every
process by the build's record."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from codesift.embedding import Embedder, fill_vectors, vector_coverage
from codesift.embedding.model import FUSED_MODEL_ID, MODEL_ID, model_dir_path, model_id_of
from codesift.embedding.query_model import QUERY_MODEL_FILE
from codesift.store.vectors import vector_models
from conftest import IndexWorkspace, MakeRepo, run_released_together

TEXTS = [
    "def retry_payment(card, attempts): Retry a declined card payment with backoff.",
    "class SessionCache: Expired sessions are removed from the cache every minute.",
    "func (s *Server) Listen() error: Listen opens a TCP socket and accepts connections.",
    "## Configuration\nThe settings file is read once at start-up; unknown keys are errors.",
]

FILES = {
    "billing.py": (
        "def retry_payment(card, attempts):\n"
        '    """Retry a declined card payment with exponential backoff."""\n'
        "    return charge(card)\n\n\n"
        "def charge(card):\n"
        '    """Charge the card once."""\n'
        "    return card\n"
    ),
    "server.py": (
        "class Server:\n"
        '    """Accepts incoming network connections."""\n\n'
        "    def listen(self, port):\n"
        '        """Open a TCP socket on port."""\n'
        "        return port\n"
    ),
}


def test_batches_run_on_the_fused_graph_close_to_the_export(embedder: Embedder) -> None:
    fused = embedder.embed(TEXTS)
    assert embedder.batch_error is None and embedder.model_id == FUSED_MODEL_ID
    export = Embedder(embedder.cache_dir, max_tokens=embedder.max_tokens, fused_batches=False)
    assert export.model_id == MODEL_ID
    exported = export.embed(TEXTS)
    assert fused.shape == exported.shape == (len(TEXTS), 384)
    assert np.allclose(np.linalg.norm(fused, axis=1), 1.0, atol=1e-4)
    assert np.all(np.einsum("ij,ij->i", fused, exported) > 0.98)
    # One text alone or among others: the same vector (each runs alone).
    alone = embedder.embed([TEXTS[2]])[0]
    assert float(alone @ fused[2]) > 0.99999
    # And the query encoder's vector of the same text.
    assert float(embedder.embed_query(TEXTS[2]) @ fused[2]) > 0.99999
    # Token counts are those the graph reads.
    counts = embedder.token_counts(TEXTS)
    assert counts == export.token_counts(TEXTS)


def test_vectors_the_export_made_are_computed_again_by_the_fused_graph(
    make_repo: MakeRepo, index_workspace: IndexWorkspace, embedder: Embedder
) -> None:
    conn, _ = index_workspace(make_repo(FILES))
    layers = ("summary", "doc")
    export = Embedder(embedder.cache_dir, max_tokens=embedder.max_tokens, fused_batches=False)
    total = fill_vectors(conn, export, layers=layers)
    assert total > 0 and vector_models(conn) == {MODEL_ID: total}
    coverage = vector_coverage(conn, layers, embedder.model_id)
    assert (coverage.embedded, coverage.usable) == (0, total)
    assert fill_vectors(conn, embedder, layers=layers) == total
    assert vector_models(conn) == {FUSED_MODEL_ID: total}
    assert fill_vectors(conn, embedder, layers=layers) == 0


# Runs in a process of its own: embeds with the model folder under argv[1] and says
# which graph made the vectors.
BATCH_SCRIPT = """
import json, logging, sys
from pathlib import Path

logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s: %(message)s")
from codesift.embedding import Embedder

sys.stdin.read()  # both processes start their work when the test says so
embedder = Embedder(Path(sys.argv[1]), max_tokens=64)
predicted = embedder.model_id
embedder.resolve()
vector = embedder.embed(["retry a declined card payment"])[0]
print(json.dumps({"predicted": predicted, "model": embedder.model_id,
                  "error": embedder.batch_error, "norm": float((vector ** 2).sum())}))
"""


def _run_at_once(cache: Path, count: int) -> list[tuple[dict[str, object], str]]:
    return [
        (json.loads(out.strip().splitlines()[-1]), err)
        for out, err in run_released_together(BATCH_SCRIPT, [str(cache)], count)
    ]


def test_a_graph_that_cannot_be_built_is_tried_once_by_two_processes(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    folder = model_dir_path(cache, 64)
    Embedder(cache, max_tokens=64).model_dir()  # assembled; nothing built yet
    target = folder / QUERY_MODEL_FILE
    target.mkdir()  # the build cannot put its file there

    results = _run_at_once(cache, 2)
    logs = "".join(err for _, err in results)
    # One process built (and failed, and recorded why); the other waited for the
    # folder's lock and took the record: no second build, no fight over the file.
    assert logs.count("building the int8 query model") == 1, logs
    for result, err in results:
        assert result["model"] == MODEL_ID, err
        assert result["error"] and "query model" in str(result["error"])
        assert abs(float(str(result["norm"])) - 1.0) < 1e-4
    marker = target.with_name(target.name + ".failed")
    recorded = json.loads(marker.read_text())
    assert recorded["inputs"]["recipe"] == QUERY_MODEL_FILE
    assert [p.name for p in folder.iterdir() if p.name.startswith(".query-model-")] == []
    # Every process now knows which vectors the export makes, before loading anything.
    assert model_id_of("minilm", cache, 64) == MODEL_ID

    # The cause is gone, but the failure is recent: still the export, no build.
    target.rmdir()
    [(again, err)] = _run_at_once(cache, 1)
    assert again["predicted"] == again["model"] == MODEL_ID, err
    assert "building the int8 query model" not in err
    # A day later the next process builds it, and its vectors are the fused graph's.
    marker.write_text(json.dumps({**recorded, "at": recorded["at"] - 2 * 86400}))
    [(later, err)] = _run_at_once(cache, 1)
    assert later["model"] == FUSED_MODEL_ID and later["error"] is None, err
    assert target.is_file() and not marker.exists()
    assert model_id_of("minilm", cache, 64) == FUSED_MODEL_ID
