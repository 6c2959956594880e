"""The query encoder: embeds one short query at a time, fast, on one thread.

The shipped all-MiniLM-L6-v2 stores its weights as int8 but computes in float32:
onnxruntime turns every weight back into float32 when it loads the model. That
suits the batches of chunk texts the index embeds (embedding/model.py, two
threads). A search embeds a single query of ~16 tokens while its other streams
run on the same cores, and there its ~6 ms are the longest step of the search.

The query encoder runs a copy of the same model whose matrix products are int8
(weights per output channel, activations quantised as they come, onnxruntime's
dynamic quantisation), except the feed-forward output projections of the first
two layers. Their inputs (after GELU) have the outliers int8 handles worst, and
an error made early runs through every later layer. Keeping those two in float32
recovers more than half of what keeping all six would, for about a third of the
time. The copy is also rebuilt with onnxruntime's fused transformer operators
(bert_graph.py: Attention in one node instead of ~40), which cuts a query's time
by another ~15%. Over the benchmark queries, on one thread: ~3 ms a query
against ~6-7 ms for the batch model; cosine to the batch model's vector 0.996 on
average; NDCG@10 on the dev set within the noise of the batch model's
(bench/RESULTS.md, "Query embedding").

The quantised copy is built once per model folder (one process at a time: the
folder's lock; the folder's manifest records what it was built from, and a copy
built from other weights or by another recipe is built again), in a child process: the build
reads the float32 graph (~90 MB) and peaks at ~700 MB, which a long-running
language server should not keep. It needs the `onnx` package
(onnxruntime.quantization is written on it). Run as a module it is that build:

    python -m codesift.embedding.query_model SOURCE.onnx TARGET.onnx
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from codesift.embedding.model_cache import (
    file_digest,
    file_matches,
    file_record,
    folder_lock,
    read_manifest,
    sync_file,
    write_bytes_atomically,
    write_manifest,
)
from codesift.embedding.sessions import sleeping_session_options
from codesift.errors import EmbeddingError

if TYPE_CHECKING:
    import onnxruntime as ort
    from tokenizers import Tokenizer

__all__ = [
    "QUERY_MODEL_FILE",
    "QueryEncoder",
    "build_query_model",
    "discard_query_model",
    "ensure_query_model",
    "keep_query_model",
    "load_query_tokenizer",
    "query_model_inputs",
    "recent_build_failure",
]

log = logging.getLogger(__name__)

# Named after its recipe: a change to how it is built (which products stay float32,
# the quantisation options) takes a new name, so folders built before rebuild it.
QUERY_MODEL_FILE = "query-int8-v3.onnx"
BUILD_TIMEOUT_SECONDS = 600
# After a failed build, processes use the batch model for queries this long before
# one tries to build again.
RETRY_AFTER_SECONDS = 24 * 3600
# Feed-forward output projections kept in float32: those of the first layers.
FLOAT32_DOWN_PROJECTIONS = 2


def _down_projections(model_path: Path) -> list[str]:
    """Names of the MatMul nodes whose weight narrows its input (rows > columns):
    the feed-forward output projections, 1536 -> 384 in MiniLM, in graph order
    (a graph's nodes are stored in topological order: first layer first)."""
    import onnx

    model = onnx.load(str(model_path))
    shapes = {init.name: list(init.dims) for init in model.graph.initializer}
    names = []
    for node in model.graph.node:
        if node.op_type != "MatMul" or len(node.input) < 2:
            continue
        dims = shapes.get(node.input[1], [])
        if len(dims) == 2 and dims[0] > dims[1]:
            names.append(node.name)
    return names


class _OnlyErrors(logging.Filter):
    """onnxruntime.quantization logs advice on the root logger ("consider running
    pre-processing"); the build keeps only its errors."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.ERROR


# The fused graph is used only when its float32 output matches the export's this
# closely (measured: 2e-6; int8 quantisation then moves it by ~1e-1).
FUSED_TOLERANCE = 1e-3


def _fused_graph(folded: Path, config: Path, work: Path) -> tuple[Path, list[str]] | None:
    """The fused BERT graph of `folded` (bert_graph.py) and its feed-forward output
    projections, or None (logged) when the model is not one it rebuilds or the
    rebuilt graph does not compute the same thing."""
    from codesift.embedding.bert_graph import UnsupportedGraph, fuse_bert, max_difference

    fused = work / "fused.onnx"
    try:
        down = fuse_bert(folded, config, fused)
        difference = max_difference(folded, fused)
    except UnsupportedGraph as exc:
        log.info("query model: the graph is not rebuilt with fused operators: %s", exc)
        return None
    except Exception as exc:  # e.g. an onnxruntime without these operators
        log.warning("query model: the fused graph does not run here (%s); not used", exc)
        return None
    if not difference <= FUSED_TOLERANCE:
        log.warning(
            "query model: the fused graph differs from the export by %.2g; not used", difference
        )
        return None
    return fused, down


def build_query_model(source: Path, target: Path) -> None:
    """Write the int8 query model for `source` to `target` (atomically).

    The export's constants are folded first (its int8 weights become the float32
    initializers quantize_dynamic reads). A BERT export is then rebuilt with
    onnxruntime's fused transformer operators (bert_graph.py: 46 nodes instead of
    315, ~15% faster per query) when config.json, next to `source`, describes one
    and the rebuilt graph gives the same output; otherwise the folded export itself
    is quantised."""
    import onnx
    import onnxruntime as ort
    from onnxruntime.quantization import QuantType, quantize_dynamic

    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".query-model-", dir=target.parent) as tmp:
        folded = Path(tmp) / "float32.onnx"
        # Basic optimisations only (constant folding); nothing hardware-specific.
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(folded)
        ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
        fused = _fused_graph(folded, source.parent / "config.json", Path(tmp))
        if fused is not None:
            graph, down = fused
        else:
            graph, down = folded, _down_projections(folded)
        quantized = Path(tmp) / "int8.onnx"
        root = logging.getLogger()
        quiet = _OnlyErrors()
        root.addFilter(quiet)
        try:
            quantize_dynamic(
                str(graph),
                str(quantized),
                weight_type=QuantType.QInt8,
                per_channel=True,
                nodes_to_exclude=down[:FLOAT32_DOWN_PROJECTIONS],
                # Shape inference cannot type the outputs of the contrib operators.
                extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
            )
        finally:
            root.removeFilter(quiet)
        sync_file(quantized)  # on disk before it takes the name readers look for
        os.replace(quantized, target)


def _failure_marker(target: Path) -> Path:
    return target.with_name(target.name + ".failed")


_RUNTIME_DISTRIBUTIONS = ("onnxruntime", "onnxruntime-gpu", "onnxruntime-openvino")


@functools.cache
def _runtime_versions() -> dict[str, str]:
    """The installed onnxruntime and onnx versions, read from their metadata
    (importing onnxruntime would cost a status call ~0.1 s)."""
    from importlib import metadata  # ~30 ms of imports (email, zipfile, csv): not per search

    versions = {"onnxruntime": "", "onnx": ""}
    for name in _RUNTIME_DISTRIBUTIONS:
        with contextlib.suppress(metadata.PackageNotFoundError):
            versions["onnxruntime"] = metadata.version(name)
            break
    with contextlib.suppress(metadata.PackageNotFoundError):
        versions["onnx"] = metadata.version("onnx")
    return versions


def query_model_inputs(model_dir: Path) -> dict[str, Any] | None:
    """What a build of the query model in `model_dir` is made from: the SHA-256 and
    size of model.onnx (as the folder's manifest records them), the recipe, and the
    onnxruntime and onnx versions that build it. None when model.onnx is missing."""
    files = (read_manifest(model_dir) or {}).get("files")
    record = files.get("model.onnx") if isinstance(files, dict) else None
    if isinstance(record, dict) and "sha256" in record:
        size, sha256 = record.get("size"), record["sha256"]
    else:
        try:
            size, sha256 = file_digest(model_dir / "model.onnx")
        except OSError:
            return None
    return {"model_sha256": sha256, "model_size": size, "recipe": QUERY_MODEL_FILE} | (
        _runtime_versions()
    )


def recent_build_failure(model_dir: Path) -> str | None:
    """Why the query model of `model_dir` is not built, when a build from today's
    inputs failed less than RETRY_AFTER_SECONDS ago (no build is tried meanwhile);
    else None."""
    return _recent_failure(model_dir / QUERY_MODEL_FILE, query_model_inputs(model_dir))


def _recent_failure(target: Path, inputs: dict[str, Any] | None) -> str | None:
    """The error of a build of `target` that failed less than RETRY_AFTER_SECONDS
    ago, recorded next to it; None when there is none, it is older, or it was made
    from other inputs than `inputs` (other weights, recipe or onnxruntime: then the
    record is stale and removed). A record of an earlier codesift, which did not
    say its inputs, counts for a day."""
    marker = _failure_marker(target)
    try:
        record = json.loads(marker.read_text(encoding="utf-8"))
        failed_at = float(record["at"])
        error = str(record["error"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    recorded = record.get("inputs")
    if recorded is not None and inputs is not None and recorded != inputs:
        log.info("query model: a failed build from other inputs is forgotten (%s)", marker)
        with contextlib.suppress(OSError):
            marker.unlink()
        return None
    if not 0 <= time.time() - failed_at < RETRY_AFTER_SECONDS:
        return None
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(failed_at))
    return f"{error} (at {when}; retried a day later, or once {marker.name} is deleted)"


def _record_failure(target: Path, error: str, inputs: dict[str, Any] | None) -> None:
    record = {"error": error, "at": time.time(), "inputs": inputs}
    try:
        write_bytes_atomically(_failure_marker(target), (json.dumps(record) + "\n").encode())
    except OSError as exc:  # e.g. a read-only cache: every process tries again
        log.debug("cannot record the failed query-model build: %s", exc)


def _is_built(model_dir: Path, target: Path, inputs: dict[str, Any] | None) -> bool:
    """True when `target` is the query model the manifest records, built from
    today's model.onnx with today's recipe."""
    record = (read_manifest(model_dir) or {}).get("query_model")
    if not isinstance(record, dict) or inputs is None:
        return False
    built_from = record.get("inputs")
    return (
        record.get("file") == target.name
        and isinstance(built_from, dict)
        and built_from.get("model_sha256") == inputs["model_sha256"]
        and built_from.get("recipe") == inputs["recipe"]
        and file_matches(target, record)
    )


def ensure_query_model(model_dir: Path) -> Path:
    """The query model of `model_dir` (which holds model.onnx), built first when
    missing or not built from today's model.onnx; raises EmbeddingError when it
    cannot be built.

    One process builds at a time (the folder's lock): the others wait, then use
    what it built or raise what it recorded. A failed build is recorded next to
    the model (`<file>.failed`, with its inputs): processes started within
    RETRY_AFTER_SECONDS do not build it again from the same inputs (a one-shot CLI
    search would otherwise pay for a failing build each time) and raise the
    recorded error at once."""
    target = model_dir / QUERY_MODEL_FILE
    inputs = query_model_inputs(model_dir)
    if _is_built(model_dir, target, inputs):
        return target
    _raise_recent_failure(target, inputs)
    with folder_lock(model_dir):
        if _is_built(model_dir, target, inputs):  # built by another process meanwhile
            return target
        _raise_recent_failure(target, inputs)
        _remove_build_leftovers(model_dir)
        error = _build_in_child(model_dir / "model.onnx", target)
        if error is not None:
            _record_failure(target, error, inputs)
            raise EmbeddingError(f"cannot build the query model: {error}")
        _record_build(model_dir, target, inputs)
        _failure_marker(target).unlink(missing_ok=True)
        _remove_older_builds(target)
    return target


def _raise_recent_failure(target: Path, inputs: dict[str, Any] | None) -> None:
    failed = _recent_failure(target, inputs)
    if failed is not None:
        raise EmbeddingError(f"cannot build the query model: {failed}")


def _record_build(model_dir: Path, target: Path, inputs: dict[str, Any] | None) -> None:
    """Record the new query model in the folder's manifest, with what it was built
    from and how many builds the folder has seen (hold the folder's lock)."""
    manifest = read_manifest(model_dir) or {}
    manifest["query_model"] = {
        "file": target.name,
        "inputs": inputs,
        **file_record(target, file_digest(target)[1]),
    }
    manifest["query_model_builds"] = int(manifest.get("query_model_builds", 0)) + 1
    write_manifest(model_dir, manifest)


def keep_query_model(model_dir: Path, record: object, model_sha256: str) -> dict[str, Any] | None:
    """While the folder is assembled again (holding its lock): `record`, the query
    model's, when it was built from weights with this hash; otherwise the query
    models in the folder are deleted, with a failure record that does not say it
    was made from those weights, and None."""
    if isinstance(record, dict):
        built_from = record.get("inputs")
        if isinstance(built_from, dict) and built_from.get("model_sha256") == model_sha256:
            return record
    target = model_dir / QUERY_MODEL_FILE
    _remove_query_files(model_dir)
    marker = _failure_marker(target)
    try:
        inputs = json.loads(marker.read_text(encoding="utf-8")).get("inputs") or {}
    except (OSError, ValueError, AttributeError):
        inputs = {}
    if not isinstance(inputs, dict) or inputs.get("model_sha256") != model_sha256:
        marker.unlink(missing_ok=True)
    return None


def discard_query_model(model_dir: Path) -> None:
    """Delete the folder's query model and its record, so the next
    `ensure_query_model` builds it again (e.g. it no longer loads)."""
    with folder_lock(model_dir):
        manifest = read_manifest(model_dir)
        if manifest is not None and manifest.pop("query_model", None) is not None:
            write_manifest(model_dir, manifest)
        _remove_query_files(model_dir)


def _remove_query_files(model_dir: Path) -> None:
    for built in model_dir.glob("query-int8*.onnx"):
        if built.is_file() or built.is_symlink():
            built.unlink(missing_ok=True)


def _remove_build_leftovers(model_dir: Path) -> None:
    """The work folders of builds whose process died (hold the folder's lock)."""
    for leftover in model_dir.glob(".query-model-*"):
        shutil.rmtree(leftover, ignore_errors=True)


def _remove_older_builds(target: Path) -> None:
    """Delete the query models earlier recipes left in the folder (~22 MB each)."""
    for old in target.parent.glob("query-int8*.onnx*"):
        if old.name != target.name and old.is_file():
            try:
                old.unlink()
            except OSError as exc:  # another process's, or a read-only folder
                log.debug("cannot remove %s: %s", old, exc)


def _build_in_child(source: Path, target: Path) -> str | None:
    """Build `target` in a child process; the reason when that fails."""
    model_dir = target.parent
    log.info("building the int8 query model in %s (once)", model_dir)
    # The child imports this very codesift, however the parent found it.
    package_root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_root, env.get("PYTHONPATH")]))
    try:
        done = subprocess.run(
            [sys.executable, "-m", __name__, str(source), str(target)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,  # never the caller's stdout: it may be the LSP channel
            stderr=subprocess.PIPE,
            timeout=BUILD_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode != 0 or not target.is_file():
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return lines[-1] if lines else f"exit status {done.returncode}"
    return None


def load_query_tokenizer(model_dir: Path) -> Tokenizer:
    """The model folder's tokenizer, set up for one text at a time as fastembed sets
    it up for the batch model: truncated at the stricter of `model_max_length` and
    `max_length` (tokenizer_config.json), the special tokens of
    special_tokens_map.json registered. Read with `tokenizers` directly: importing
    fastembed takes ~0.5 s, a third of a one-shot `codesift search`."""
    from tokenizers import AddedToken, Tokenizer

    config = json.loads((model_dir / "tokenizer_config.json").read_text(encoding="utf-8"))
    limits = [
        value
        for value in (config.get("model_max_length"), config.get("max_length"))
        if isinstance(value, int) and 0 < value < 1_000_000
    ]
    if not limits:
        raise EmbeddingError(f"no usable model_max_length in {model_dir / 'tokenizer_config.json'}")
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    truncation = tokenizer.truncation or {}
    tokenizer.enable_truncation(
        max_length=min(limits),
        direction=config.get("truncation_side") or truncation.get("direction", "right"),
    )
    tokenizer.no_padding()
    special_path = model_dir / "special_tokens_map.json"
    special = json.loads(special_path.read_text(encoding="utf-8")) if special_path.is_file() else {}
    for value in special.values():
        for token in value if isinstance(value, list) else [value]:
            if isinstance(token, str):
                tokenizer.add_special_tokens([token])
            elif isinstance(token, dict):
                tokenizer.add_special_tokens([AddedToken(**token)])
    return tokenizer


class QueryEncoder:
    """Embeds one query at a time with the int8 query model: the batch model's
    tokenizer, mean pooling and L2 normalisation; one onnxruntime thread, which
    sleeps between queries."""

    def __init__(self, model_dir: Path, model_path: Path) -> None:
        import onnxruntime as ort

        self._tokenizer: Tokenizer = load_query_tokenizer(model_dir)
        self._session: ort.InferenceSession = ort.InferenceSession(
            str(model_path), sleeping_session_options(1), providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self._session.get_inputs()}

    def token_count(self, text: str) -> int:
        """Tokens the model reads for `text` (markers included, truncated)."""
        return len(self._tokenizer.encode(text).ids)

    def encode(self, text: str) -> npt.NDArray[np.float32]:
        encoding = self._tokenizer.encode(text)
        ids = np.array([encoding.ids], dtype=np.int64)
        mask = np.array([encoding.attention_mask], dtype=np.int64)
        feeds: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1)[0] / max(float(weights.sum()), 1e-9)
        norm = float(np.linalg.norm(pooled)) or 1.0
        return np.asarray(pooled / norm, dtype=np.float32)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m codesift.embedding.query_model SOURCE TARGET", file=sys.stderr)
        return 2
    try:
        build_query_model(Path(argv[0]), Path(argv[1]))
    except Exception as exc:  # reported to the parent through stderr
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
