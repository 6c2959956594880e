"""The rerank stage with a real ONNX cross-encoder loaded through fastembed's
TextCrossEncoder (the `local_cross_encoder` provider), built here: a one-layer graph
whose score is how often the token `zebra` occurs in the (query, document) pair,
with the MiniLM tokenizer files codesift ships. Also: a broken model file degrades
to no reranking with a warning that `codesift status` shows."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from importlib import resources
from pathlib import Path

import apsw
import numpy as np
import pytest

from codesift.cli import main
from codesift.config import RerankSettings
from codesift.indexer import IndexSummary
from codesift.retrieval import Searcher, SearchRequest
from codesift.retrieval.rerank import CrossEncoderReranker, load_reranker

onnx = pytest.importorskip("onnx")
tokenizers = pytest.importorskip("tokenizers")

pytestmark = pytest.mark.usefixtures("git_isolation")

MakeRepo = Callable[..., Path]
IndexWorkspace = Callable[..., tuple[apsw.Connection, IndexSummary]]

TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "config.json",
)

# Every function mentions "parse"; only one mentions zebras, and lexically it ranks
# low (one mention, a long body), so the cross-encoder has something to reorder.
FILES = {
    "zoo/parsers.py": "\n\n".join(
        [
            'def parse_config(text):\n    """Parse a config file: parse keys, parse values."""\n'
            "    return dict(line.split('=') for line in text.splitlines())",
            'def parse_header(line):\n    """Parse one header line; parse the name."""\n'
            "    return line.split(':', 1)",
            'def parse_stripes(animal):\n    """Parse the stripe pattern of a zebra."""\n'
            + "".join(f"    width_{i} = animal.measure({i})\n" for i in range(30))
            + "    return animal",
        ]
    )
    + "\n",
}


def _write_model(folder: Path, weights: dict[int, float]) -> Path:
    """A cross-encoder ONNX graph: logit = sum over tokens of weight[token] * mask."""
    from onnx import TensorProto, helper, numpy_helper

    folder.mkdir(parents=True, exist_ok=True)
    bundled = resources.files("codesift.embedding") / "minilm"
    for name in TOKENIZER_FILES:
        (folder / name).write_bytes((bundled / name).read_bytes())
    vocab = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json")).get_vocab_size()
    table = np.zeros((vocab, 1), dtype=np.float32)
    for token_id, weight in weights.items():
        table[token_id, 0] = weight
    nodes = [
        helper.make_node("Gather", ["weights", "input_ids"], ["per_token"]),  # [N, S, 1]
        helper.make_node("Squeeze", ["per_token", "axis2"], ["per_token_2d"]),  # [N, S]
        helper.make_node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["per_token_2d", "mask"], ["masked"]),
        helper.make_node("ReduceSum", ["masked", "axis1"], ["logits"], keepdims=1),  # [N, 1]
    ]
    graph = helper.make_graph(
        nodes,
        "token_weight_cross_encoder",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "seq"]),
        ],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])],
        initializer=[
            numpy_helper.from_array(table, "weights"),
            numpy_helper.from_array(np.array([2], dtype=np.int64), "axis2"),
            numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(folder / "model.onnx"))
    return folder


@pytest.fixture
def zebra_model(tmp_path: Path) -> Path:
    tokenizer = tokenizers.Tokenizer.from_file(
        str(resources.files("codesift.embedding") / "minilm" / "tokenizer.json")
    )
    zebra = tokenizer.token_to_id("zebra")
    assert zebra is not None
    return _write_model(tmp_path / "cross-encoder", {zebra: 1.0})


def test_the_model_loads_through_fastembed_and_scores_by_its_graph(
    zebra_model: Path, tmp_path: Path
) -> None:
    reranker = CrossEncoderReranker(str(zebra_model), tmp_path / "cache")
    scores = reranker.scores("parse", ["a zebra and a zebra", "a horse", "one zebra"])
    assert scores == pytest.approx([2.0, 0.0, 1.0])
    # The .onnx file itself may be named instead of its folder.
    direct = CrossEncoderReranker(str(zebra_model / "model.onnx"), tmp_path / "cache")
    assert direct.scores("zebra", ["zebra"]) == pytest.approx([2.0])


def test_rerank_reorders_search_results_by_the_cross_encoder(
    zebra_model: Path, tmp_path: Path, make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    conn, _ = index_workspace(make_repo(FILES))
    request = SearchRequest("parse a line", top_k=3)
    plain = Searcher(conn).search(request)
    assert plain.rerank == "off"
    assert plain.results[0].qualified_name != "parsers.parse_stripes"
    settings = RerankSettings(enabled=True, model_path=str(zebra_model), threshold=1)
    load = load_reranker(settings, tmp_path / "cache")
    assert load.reranker is not None and load.warning is None
    searcher = Searcher(conn, reranker=load.reranker, rerank_settings=settings)
    reranked = searcher.search(request)
    assert reranked.rerank == "applied"
    assert "rerank" in reranked.stages
    first = reranked.results[0]
    assert first.qualified_name == "parsers.parse_stripes"
    hits = {h.stream: h for h in first.provenance}
    assert hits["rerank"].rank == 1 and hits["rerank"].score >= 1.0
    # The rest keep their fused order behind it.
    rest = [r.chunk_id for r in reranked.results[1:]]
    assert rest == [r.chunk_id for r in plain.results if r.chunk_id != first.chunk_id][:2]


def test_rerank_is_skipped_below_the_threshold_and_for_an_exact_symbol(
    zebra_model: Path, tmp_path: Path, make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    conn, _ = index_workspace(make_repo(FILES))
    default = RerankSettings(enabled=True, model_path=str(zebra_model))
    reranker = load_reranker(default, tmp_path / "cache").reranker
    assert reranker is not None
    few = Searcher(conn, reranker=reranker, rerank_settings=default).search(
        SearchRequest("parse the stripes of an animal")
    )
    assert few.rerank.startswith("skipped:") and "threshold 50" in few.rerank
    eager = RerankSettings(enabled=True, model_path=str(zebra_model), threshold=1)
    exact = Searcher(conn, reranker=reranker, rerank_settings=eager).search(
        SearchRequest("parse_config")
    )
    assert exact.rerank == "skipped: an exact symbol match is already first"
    assert exact.results[0].qualified_name == "parsers.parse_config"


def test_a_broken_model_degrades_to_no_rerank_and_status_shows_it(
    zebra_model: Path,
    tmp_path: Path,
    make_repo: MakeRepo,
    capsys: pytest.CaptureFixture[str],
) -> None:
    broken = tmp_path / "broken-model"
    shutil.copytree(zebra_model, broken)
    (broken / "model.onnx").write_bytes(b"this is not an onnx graph")
    load = load_reranker(RerankSettings(enabled=True, model_path=str(broken)), tmp_path / "cache")
    assert load.reranker is None
    assert load.warning is not None and "could not be loaded" in load.warning

    root = make_repo(FILES)
    (root / ".codesift.toml").write_text(
        f'[rerank]\nenabled = true\nmodel_path = "{broken}"\n'
        f'[embedding]\nenabled = false\ncache_dir = "{tmp_path / "cache"}"\n'
    )
    assert main(["search", "parse", "--root", str(root), "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["rerank"] == "off"
    assert "could not be loaded" in captured.err
    assert main(["status", "--root", str(root), "--json"]) == 0
    status = json.loads(capsys.readouterr().out)["rerank"]
    assert status["enabled"] is True and status["active"] is False
    assert "could not be loaded" in status["warning"]
    assert main(["status", "--root", str(root)]) == 0
    assert "rerank      off: the local_cross_encoder reranker could not be loaded" in (
        capsys.readouterr().out
    )
