#!/usr/bin/env python3
"""Query speed on the Python stdlib index, embedding throughput, int8 vs float32 vectors.

Run by hand from the repository root (with the project's interpreter):

    PYTHONPATH=server python bench/query_speed.py [--repeats 5] [--fill] [--write]
        [--embed-sample 1000] [--out bench/RESULTS.md] [--latency-only]

1. The index: bench/.data/db/query-speed-python-stdlib.db, a copy of the quality
   benchmark's python-stdlib index (bench/quality.py builds that one; this script
   never writes into it). With --fill, the missing vectors (settings.embedding
   layers) are computed first and the fill is timed: that is "time until all
   vectors are ready" on this machine; the record is kept in
   bench/.data/query_speed-fill.json and reported by later runs (a fill with
   nothing missing keeps the last record; it still compacts the vector table when
   deleted vectors left a quarter of its slots empty).
2. Warm query latency, in-process, query embedding included: every devset
   python-stdlib query (symbol, semantic, architecture) plus signature queries (the
   first 60 characters of signatures of functions picked by node id, i.e. at
   random but the same every run), once to warm up, then `--repeats` times. Each
   query runs through five Searchers, alternating which goes first: streams side
   by side with the vectors in memory as the language server runs them (`server`),
   the same with queries embedded by the batch model instead of the int8 query
   encoder (`server, batch-model queries`), streams side by side with sqlite-vec's
   kNN as a one-shot CLI search runs them (`parallel`), one stream after the
   other (`sequential`), and streams side by side without vectors, where the
   feedback stream runs (`server, no vectors`). First, the `server` mode alone in a
   child process that holds only what a language server holds (`server, alone in
   its process`).
   Figures: p50/p95 of `Searcher.search` wall time per mode and category, per-stream
   times and per-stage times.
3. Embedding throughput: `--embed-sample` summary chunks (picked by chunk id)
   embedded in-process as fill_vectors does (batch 32, 256 tokens); chunks/s, and
   the time all embeddable chunks would take at that rate (extrapolated).
3b. Query embedding: every query above and the devset's queries of all corpora
   embedded alone by the int8 query encoder and by the batch model, interleaved:
   time, and the cosine between the two vectors of each text.
4. Resident vectors: the in-memory kNN against sqlite-vec's exact kNN over the
   index's vectors, every devset query: recall at 10, 100 and k, and time.
5. int8 vs float32: the sample's float32 vectors as a corpus, every devset query
   (all corpora) embedded as a query; recall@10 and @50 of sqlite-vec int8 kNN
   (codesift's quantisation) against exact float32 kNN (numpy). Speed: vec0 tables
   of either type with as many rows as the index has vectors (random unit
   vectors: brute-force kNN cost does not depend on the values), k = candidate_cap
   + 50 with the layer filter the vector stream uses; 30 queries x 3 rounds, the
   two tables queried alternately.

Output: tables on stdout, bench/.data/query_speed-last.json, and with --write the
section between `<!-- query_speed:begin -->` and `<!-- query_speed:end -->` of
--out (added at the end when missing).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
SERVER_DIR = REPO_DIR / "server"
if str(SERVER_DIR) not in sys.path:
    sys.path.insert(0, str(SERVER_DIR))
if str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))

import apsw  # noqa: E402
import numpy as np  # noqa: E402
import sqlite_vec  # noqa: E402

import codesift.store.sqlite.search as sqlite_search  # noqa: E402
from codesift.config import SearchSettings, Settings, load_settings  # noqa: E402
from codesift.embedding import Embedder, fill_vectors, vector_coverage  # noqa: E402
from codesift.embedding.vectors import embedding_text, quantize  # noqa: E402
from codesift.retrieval import Searcher, SearchRequest  # noqa: E402
from codesift.retrieval.query import analyze_query  # noqa: E402
from codesift.retrieval.streams import (  # noqa: E402
    Ranked,
    StreamFilters,
    lexical_stream,
    symbol_stream,
)
from codesift.retrieval.vector_index import PREFILTER_FACTOR, PREFILTER_MIN, VectorIndex  # noqa: E402
from codesift.store.database import open_database, scalar  # noqa: E402
from codesift.store.reader import chunk_rows  # noqa: E402
from codesift.store.sqlite.search import SqliteSearchStore  # noqa: E402
from corpora import CORPUS_NAMES, DATA_DIR, DB_DIR, DEVSET_DIR  # noqa: E402
from runinfo import head_commit, server_changes  # noqa: E402
from timing import effective_cores  # noqa: E402

Json = dict[str, Any]

SECTION = "query_speed"
DEFAULT_OUT = BENCH_DIR / "RESULTS.md"
DB_PATH = DB_DIR / "query-speed-python-stdlib.db"
SOURCE_DB = DB_DIR / "quality-python-stdlib.db"
FILL_RECORD = DATA_DIR / "query_speed-fill.json"
LAST_JSON = DATA_DIR / "query_speed-last.json"
SIGNATURE_QUERIES = 20
TARGET_P50_MS, TARGET_P95_MS = 10.0, 60.0


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def percentile(values: Sequence[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * p / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def load_avg() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


# --- the index ---------------------------------------------------------------------------


def prepare_db() -> apsw.Connection:
    if not DB_PATH.exists():
        if not SOURCE_DB.exists():
            raise SystemExit(
                f"{SOURCE_DB} is missing: run `PYTHONPATH=server python bench/quality.py "
                "--corpus python-stdlib` once to build the python-stdlib index"
            )
        log(f"copying {SOURCE_DB} to {DB_PATH}")
        shutil.copyfile(SOURCE_DB, DB_PATH)
    return open_database(DB_PATH, create=False)


def fill(conn: apsw.Connection, settings: Settings, embedder: Embedder) -> Json | None:
    layers = settings.embedding.layers
    before = vector_coverage(conn, layers)
    started = time.perf_counter()
    load_start = load_avg()
    last = [started]

    def progress(done: int, total: int) -> None:
        now = time.perf_counter()
        if now - last[0] >= 30 or done == total:
            last[0] = now
            log(f"  embedded {done:,}/{total:,} ({done / (now - started):.1f} chunks/s)")

    done = fill_vectors(
        conn, embedder, layers=layers, batch_size=settings.embedding.batch_size, progress=progress
    )
    seconds = time.perf_counter() - started
    if not done:  # nothing was missing (the fill may still have compacted the table)
        log(f"  no missing vectors ({seconds:.1f} s); the recorded fill is kept")
        return json.loads(FILL_RECORD.read_text()) if FILL_RECORD.is_file() else None
    record = {
        "embedded": done,
        "already": before.embedded,
        "seconds": seconds,
        "rate": done / max(seconds, 1e-9),
        "load_start": load_start,
        "load_end": load_avg(),
        "at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }
    FILL_RECORD.write_text(json.dumps(record) + "\n")
    return record


# --- queries -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BenchQuery:
    text: str
    category: str  # symbol, signature, semantic, architecture


def bench_queries(conn: apsw.Connection) -> list[BenchQuery]:
    devset = json.loads((DEVSET_DIR / "python-stdlib.json").read_text())
    queries = [BenchQuery(q["query"], q["category"]) for q in devset]
    signatures = [
        str(r[0])
        for r in conn.execute(
            "SELECT n.signature FROM nodes n JOIN files f ON f.id = n.file_id"
            " WHERE n.kind IN ('function', 'method') AND f.language = 'python'"
            " AND length(n.signature) >= 25 ORDER BY n.id LIMIT ?",
            (SIGNATURE_QUERIES,),
        )
    ]
    queries += [BenchQuery(sig[:60], "signature") for sig in signatures]
    return queries


def all_devset_queries() -> list[str]:
    texts: list[str] = []
    for name in CORPUS_NAMES:
        path = DEVSET_DIR / f"{name}.json"
        if path.is_file():
            texts += [q["query"] for q in json.loads(path.read_text())]
    return texts


# --- latency -----------------------------------------------------------------------------


@dataclass(slots=True)
class ModeRun:
    total_ms: list[float] = field(default_factory=list)
    by_category: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    streams: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    stages: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: int = 0


def measure_latency(
    searchers: dict[str, Searcher], queries: Sequence[BenchQuery], repeats: int
) -> dict[str, ModeRun]:
    runs = {mode: ModeRun() for mode in searchers}
    modes = list(searchers)
    log(f"warming up: {len(queries)} queries x {len(modes)} modes")
    for q in queries:
        for mode in modes:
            searchers[mode].search(SearchRequest(q.text))
    for r in range(repeats):
        log(f"repeat {r + 1}/{repeats} (load {load_avg()})")
        for i, q in enumerate(queries):
            order = modes if (i + r) % 2 == 0 else modes[::-1]
            for mode in order:
                t0 = time.perf_counter()
                response = searchers[mode].search(SearchRequest(q.text))
                ms = (time.perf_counter() - t0) * 1000
                run = runs[mode]
                run.total_ms.append(ms)
                run.by_category[q.category].append(ms)
                for report in response.streams:
                    run.streams[report.stream].append(report.ms)
                    run.errors += report.error is not None
                for stage, value in response.stages.items():
                    run.stages[stage].append(value)
    return runs


def lexical_pruning(
    conn: apsw.Connection, queries: Sequence[BenchQuery], repeats: int, shipped_df: float
) -> Json:
    """The lexical stream scoring every term, leaving out terms in at least half the
    rows (no change to bm25's ranking), in at least a tenth (the default until
    2026-11-30), and as shipped (terms in at least `shipped_df` of the rows left
    out): time, and agreement with every term."""
    filters = StreamFilters(("code", "summary", "doc"))
    store = SqliteSearchStore(conn)
    variants = {
        "all terms": 2.0,
        "terms in >= 50% of rows left out": 0.5,
        "terms in >= 10% of rows left out": 0.1,
        f"terms in >= {shipped_df:.0%} of rows left out (shipped)": shipped_df,
    }
    times: dict[str, list[float]] = {name: [] for name in variants}
    same_top10 = {name: 0 for name in variants}
    same_set = {name: 0 for name in variants}
    max_score_diff = {name: 0.0 for name in variants}
    for q in queries:
        analysis = analyze_query(q.text)
        results: dict[str, Ranked] = {}
        for r in range(repeats + 1):
            order = list(variants)
            for name in order if r % 2 else order[::-1]:
                t0 = time.perf_counter()
                ranked = lexical_stream(store, analysis, filters, 300, variants[name])
                if r:  # the first round warms the caches
                    times[name].append((time.perf_counter() - t0) * 1000)
                results[name] = ranked
        reference = results["all terms"]
        for name, ranked in results.items():
            same_top10[name] += [c for c, _ in reference[:10]] == [c for c, _ in ranked[:10]]
            same_set[name] += {c for c, _ in reference} == {c for c, _ in ranked}
            sa, sb = dict(reference), dict(ranked)
            for cid in set(sa) & set(sb):
                max_score_diff[name] = max(max_score_diff[name], abs(sa[cid] - sb[cid]))
    return {
        "queries": len(queries),
        "times": {k: [percentile(v, 50), percentile(v, 95)] for k, v in times.items()},
        "same_top10": same_top10,
        "same_candidates": same_set,
        "max_score_diff": max_score_diff,
    }


ALL_TRIGRAMS = "every trigram counted (before)"
TELLING_TRIGRAMS = "rarest trigrams within 6,000 postings counted (shipped)"


def symbol_candidates(conn: apsw.Connection, queries: Sequence[BenchQuery], repeats: int) -> Json:
    """The symbol stream with every trigram of a probe counted for its name candidates
    (before) against counting its rarest ones only (shipped)."""
    times: dict[str, list[float]] = {ALL_TRIGRAMS: [], TELLING_TRIGRAMS: []}
    shipped_budget = sqlite_search.NAME_POSTINGS_BUDGET
    store = SqliteSearchStore(conn)
    filters = StreamFilters(("code", "summary", "doc"))
    cap = SearchSettings().candidate_cap
    asked = same_top10 = same_all = 0
    for q in queries:
        analysis = analyze_query(q.text)
        if not analysis.symbol_like and not any(len(w) >= 3 for w in analysis.identifiers):
            continue
        results: dict[str, Ranked] = {}
        for r in range(repeats + 1):
            for variant, budget in ((ALL_TRIGRAMS, 1 << 62), (TELLING_TRIGRAMS, shipped_budget)):
                sqlite_search.NAME_POSTINGS_BUDGET = budget
                try:
                    t0 = time.perf_counter()
                    results[variant] = symbol_stream(store, analysis, filters, cap)
                    if r:
                        times[variant].append((time.perf_counter() - t0) * 1000)
                finally:
                    sqlite_search.NAME_POSTINGS_BUDGET = shipped_budget
        asked += 1
        before, after = results[ALL_TRIGRAMS], results[TELLING_TRIGRAMS]
        same_top10 += before[:10] == after[:10]
        same_all += before == after
    return {
        "queries": asked,
        "same_top10": same_top10,
        "same_all": same_all,
        "times": {k: [percentile(v, 50), percentile(v, 95)] for k, v in times.items()},
    }


SERVER_BATCH_QUERIES = "server, batch-model queries"
SERVER_NO_VECTORS = "server, no vectors"
SERVER_ALONE = "server, alone in its process"


def server_alone(repeats: int) -> ModeRun:
    """The `server` mode measured in a process of its own (`--server-alone-child`):
    the index, its vectors in memory and the query encoder, nothing else, as in a
    language server. In this process the other modes (sqlite-vec's kNN on the
    stream threads, the float32 batch model) run between the server's searches."""
    child = subprocess.run(
        [sys.executable, __file__, "--server-alone-child", "--repeats", str(repeats)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(REPO_DIR / "server")},
    )
    data = json.loads(child.stdout)
    run = ModeRun(total_ms=data["total_ms"], errors=data["errors"])
    for key in ("by_category", "streams", "stages"):
        getattr(run, key).update(data[key])
    return run


def bench_settings() -> Settings:
    return load_settings(REPO_DIR, {"embedding": {"cache_dir": str(DATA_DIR / "embedding-cache")}})


def bench_embedder(settings: Settings, *, quantized_queries: bool | None = None) -> Embedder:
    """The embedder the settings make (queries by the int8 encoder unless
    `quantized_queries` says otherwise)."""
    return Embedder(
        DATA_DIR / "embedding-cache",
        max_tokens=settings.embedding.max_tokens,
        batch_size=settings.embedding.batch_size,
        quantized_queries=(
            settings.embedding.quantized_queries if quantized_queries is None else quantized_queries
        ),
    )


def server_alone_child(repeats: int) -> int:
    conn = prepare_db()
    settings = bench_settings()
    embedder = bench_embedder(settings)
    searcher = Searcher(conn, settings.search, embedder, vector_index=VectorIndex())
    searcher.load_vectors()
    run = measure_latency({SERVER_ALONE: searcher}, bench_queries(conn), repeats)[SERVER_ALONE]
    print(
        json.dumps(
            {
                "total_ms": run.total_ms,
                "by_category": run.by_category,
                "streams": run.streams,
                "stages": run.stages,
                "errors": run.errors,
            }
        )
    )
    return 0


def compare_query_embedding(
    encoder: Embedder, batch: Embedder, texts: Sequence[str], repeats: int
) -> Json:
    """One query embedded alone, by the int8 query encoder (shipped) and by the batch
    model (`quantized_queries = false`), interleaved: time, and cosine between the
    two vectors of each text."""
    names = ("int8 query encoder, one thread (shipped)", "batch model, float32, two threads")
    embedders = dict(zip(names, (encoder, batch), strict=True))
    for embedder in embedders.values():
        embedder.embed_query("warm up")
    times: dict[str, list[float]] = {name: [] for name in names}
    cosines: list[float] = []
    tokens: list[int] = []
    for r in range(repeats):
        for i, text in enumerate(texts):
            vectors = {}
            for name in names if (i + r) % 2 == 0 else names[::-1]:
                t0 = time.perf_counter()
                vectors[name] = embedders[name].embed_query(text)
                times[name].append((time.perf_counter() - t0) * 1000)
            if r == 0:
                cosines.append(float(vectors[names[0]] @ vectors[names[1]]))
    query_encoder = encoder.query_encoder()
    if query_encoder is not None:
        tokens = [query_encoder.token_count(t) for t in texts]
    return {
        "queries": len(texts),
        "tokens_p50": percentile([float(t) for t in tokens], 50) if tokens else None,
        "times": {k: [percentile(v, 50), percentile(v, 95)] for k, v in times.items()},
        "cosine_min": min(cosines),
        "cosine_mean": statistics.mean(cosines),
        "encoder_error": encoder.query_encoder_error,
    }


# --- embedding throughput and int8 vs float32 ---------------------------------------------


def embed_sample(conn: apsw.Connection, embedder: Embedder, n: int) -> tuple[Json, np.ndarray]:
    ids = [
        int(r[0])
        for r in conn.execute(
            "SELECT id FROM chunks WHERE layer = 'summary' ORDER BY id LIMIT ?", (n,)
        )
    ]
    rows = chunk_rows(conn, ids)
    texts = [embedding_text(rows[i].text, rows[i].qualified_name, rows[i].layer) for i in ids]
    embedder.embed(texts[:32])  # load the model, warm the session
    load_start = load_avg()
    t0 = time.perf_counter()
    vectors = embedder.embed(texts)
    seconds = time.perf_counter() - t0
    # fill_vectors embeds each window of pending chunks in order of length, so a
    # batch pads less: the same texts that way.
    t0 = time.perf_counter()
    embedder.embed(sorted(texts, key=len))
    sorted_seconds = time.perf_counter() - t0
    return {
        "chunks": len(texts),
        "seconds": seconds,
        "rate": len(texts) / seconds,
        "sorted_seconds": sorted_seconds,
        "sorted_rate": len(texts) / sorted_seconds,
        "mean_chars": statistics.mean(len(t) for t in texts),
        "load_start": load_start,
        "load_end": load_avg(),
    }, vectors


def resident_recall(
    conn: apsw.Connection, query_vectors: np.ndarray, k: int, layers: Sequence[str]
) -> Json:
    """The in-memory vectors (retrieval/vector_index.py) against sqlite-vec's exact
    int8 kNN over the index's own vectors: recall at 10, 100 and k, and time of each
    (same queries, alternating which goes first)."""
    index = VectorIndex()
    t0 = time.perf_counter()
    index.load(conn)
    load_s = time.perf_counter() - t0
    in_layers = ",".join("?" * len(layers))
    sql = (
        "SELECT chunk_id FROM chunk_vectors WHERE embedding MATCH vec_int8(?)"
        f" AND k = ? AND layer IN ({in_layers})"
    )
    recalls: dict[int, list[float]] = {10: [], 100: [], k: []}
    times: dict[str, list[float]] = {"sqlite-vec": [], "resident": []}
    for i, q in enumerate(query_vectors):
        exact: list[int] = []
        found: list[int] = []
        for kind in ("sqlite-vec", "resident") if i % 2 == 0 else ("resident", "sqlite-vec"):
            t0 = time.perf_counter()
            if kind == "sqlite-vec":
                q8 = quantize(q[None, :])[0].tobytes()
                exact = [int(r[0]) for r in conn.execute(sql, [q8, k, *layers])]
            else:
                found = [cid for cid, _ in index.search(conn, q, k, layers)]
            times[kind].append((time.perf_counter() - t0) * 1000)
        for cut in recalls:
            reference = set(exact[:cut])
            if reference:
                recalls[cut].append(len(reference & set(found[:cut])) / len(reference))
    return {
        "vectors": len(index),
        "mib": index.nbytes / 2**20,
        "load_s": load_s,
        "queries": len(query_vectors),
        "k": k,
        "prefilter": max(PREFILTER_FACTOR * k, PREFILTER_MIN),
        "recall": {str(cut): statistics.mean(v) for cut, v in recalls.items()},
        "min_recall@10": min(recalls[10]),
        "times": {kind: [percentile(v, 50), percentile(v, 95)] for kind, v in times.items()},
    }


def _memory_vec_db() -> apsw.Connection:
    db = apsw.Connection(":memory:")
    db.enable_load_extension(True)
    db.load_extension(sqlite_vec.loadable_path())
    return db


def int8_recall(corpus: np.ndarray, queries: np.ndarray, ks: Sequence[int] = (10, 50)) -> Json:
    db = _memory_vec_db()
    db.execute(
        "CREATE VIRTUAL TABLE v8 USING vec0(id INTEGER PRIMARY KEY,"
        " embedding int8[384] distance_metric=cosine)"
    )
    db.execute(
        "CREATE VIRTUAL TABLE v32 USING vec0(id INTEGER PRIMARY KEY,"
        " embedding float[384] distance_metric=cosine)"
    )
    q8 = quantize(corpus.astype(np.float32))
    with db:
        for i, (f, b) in enumerate(zip(corpus, q8, strict=True)):
            db.execute("INSERT INTO v8 VALUES (?, vec_int8(?))", (i, b.tobytes()))
            db.execute("INSERT INTO v32 VALUES (?, ?)", (i, f.astype(np.float32).tobytes()))
    out: Json = {"corpus": len(corpus), "queries": len(queries)}
    kmax = max(ks)
    exact_all = np.argsort(-(corpus @ queries.T), axis=0, kind="stable")[:kmax].T
    quant_queries = quantize(queries.astype(np.float32))
    for k in ks:
        rec8, rec32 = [], []
        for qi in range(len(queries)):
            exact = set(int(x) for x in exact_all[qi][:k])
            got8 = {
                int(r[0])
                for r in db.execute(
                    "SELECT id FROM v8 WHERE embedding MATCH vec_int8(?) AND k = ?",
                    (quant_queries[qi].tobytes(), k),
                )
            }
            got32 = {
                int(r[0])
                for r in db.execute(
                    "SELECT id FROM v32 WHERE embedding MATCH ? AND k = ?",
                    (queries[qi].astype(np.float32).tobytes(), k),
                )
            }
            rec8.append(len(got8 & exact) / k)
            rec32.append(len(got32 & exact) / k)
        out[f"recall@{k}_int8"] = statistics.mean(rec8)
        out[f"recall@{k}_float32_vec0"] = statistics.mean(rec32)
        out[f"min_recall@{k}_int8"] = min(rec8)
    return out


def vector_speed(rows: int, k: int, layers: Sequence[str], rounds: int = 3) -> Json:
    """kNN time for int8 and float32 vec0 tables of `rows` random unit vectors in the
    vector stream's schema, on files like the index (page cache warm). The two
    tables are queried alternately, so a change in machine load hits both alike."""
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((rows, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    queries = rng.standard_normal((30, 384)).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    layer_cycle = ["summary"] * 9 + ["doc"]
    in_layers = ",".join("?" * len(layers))
    out: Json = {"rows": rows, "k": k, "rounds": rounds}
    dbs: dict[str, tuple[apsw.Connection, str, np.ndarray, Path]] = {}
    for kind in ("int8", "float32"):
        path = DB_DIR / f"query-speed-vectors-{kind}.db"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        db = apsw.Connection(str(path))
        db.enable_load_extension(True)
        db.load_extension(sqlite_vec.loadable_path())
        db.execute("PRAGMA page_size=8192")
        db.execute("PRAGMA journal_mode=WAL")
        column = "int8[384]" if kind == "int8" else "float[384]"
        db.execute(
            "CREATE VIRTUAL TABLE chunk_vectors USING vec0(chunk_id INTEGER PRIMARY KEY,"
            f" layer TEXT, embedding {column} distance_metric=cosine)"
        )
        wrap = "vec_int8(?)" if kind == "int8" else "?"
        data = quantize(vectors) if kind == "int8" else vectors
        t0 = time.perf_counter()
        with db:
            db.executemany(
                f"INSERT INTO chunk_vectors VALUES (?, ?, {wrap})",
                ((i, layer_cycle[i % 10], data[i].tobytes()) for i in range(rows)),
            )
        out[kind] = {"insert_s": time.perf_counter() - t0}
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        out[kind]["file_mib"] = path.stat().st_size / 2**20
        sql = (
            f"SELECT chunk_id, distance FROM chunk_vectors WHERE embedding MATCH {wrap}"
            f" AND k = ? AND layer IN ({in_layers})"
        )
        qdata = quantize(queries) if kind == "int8" else queries
        for q in qdata[:3]:  # warm the page cache
            db.execute(sql, [q.tobytes(), k, *layers]).fetchall()
        dbs[kind] = (db, sql, qdata, path)
    times: dict[str, list[float]] = {kind: [] for kind in dbs}
    for r in range(rounds):
        for i in range(len(queries)):
            order = list(dbs) if (i + r) % 2 == 0 else list(dbs)[::-1]
            for kind in order:
                db, sql, qdata, _ = dbs[kind]
                t0 = time.perf_counter()
                db.execute(sql, [qdata[i].tobytes(), k, *layers]).fetchall()
                times[kind].append((time.perf_counter() - t0) * 1000)
    for kind, (db, _, _, path) in dbs.items():
        db.close()
        out[kind]["p50_ms"] = percentile(times[kind], 50)
        out[kind]["p95_ms"] = percentile(times[kind], 95)
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
    return out


# --- report ------------------------------------------------------------------------------


def machine_info() -> Json:
    mem_kib = 0
    cpu = ""
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            mem_kib = int(line.split()[1])
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    commit = head_commit()
    dirty = server_changes()
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit + (" (plus uncommitted changes in server/)" if dirty else ""),
        "nproc": os.cpu_count(),
        "mem_gib": mem_kib / 1024**2,
        "cpu": cpu,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "load_start": load_avg(),
    }


def _ms(values: Sequence[float]) -> str:
    """p50 / p95 of `values`; `-` when the mode has none (a stream it does not run)."""
    if not values:
        return "-"
    return f"{percentile(values, 50):.1f} / {percentile(values, 95):.1f}"


def _verdict(p50: float, p95: float) -> str:
    ok = p50 <= TARGET_P50_MS and p95 <= TARGET_P95_MS
    return "ok" if ok else "**over**"


def markdown(result: Json, runs: dict[str, ModeRun], categories: Sequence[str]) -> str:
    m = result["machine"]
    idx = result["index"]
    lines = [
        f"<!-- {SECTION}:begin -->",
        "## Query speed (`bench/query_speed.py`)",
        "",
        f"Run {m['date']} at commit `{m['commit']}`; machine: nproc {m['nproc']}, "
        f"{m['mem_gib']:.1f} GiB RAM, {m['cpu']}; {m['python']}; load average (1/5/15 min) "
        f"{m['load_start']} at start, {result['load_end']} at end (a shared 2-core machine: "
        "other jobs ran meanwhile). Effective cores (one CPU loop against two at once in "
        "two processes; 2.0 when the host gives this machine both its cores) before and "
        "after the latency runs: "
        f"{result['effective_cores'][0]:.2f} / {result['effective_cores'][1]:.2f}. The "
        "`server` mode runs its streams side by side: it is fastest with both cores.",
        "",
        f"Index: python-stdlib (`{DB_PATH.relative_to(REPO_DIR)}`), {idx['files']:,} files, "
        f"{idx['chunks']:,} chunks, vectors for {idx['vectors']:,} of {idx['embeddable']:,} "
        f"{'+'.join(idx['layers'])} chunks. {result['query_count']} queries "
        f"({', '.join(f'{c} {n}' for c, n in result['category_counts'].items())}): the "
        "devset's python-stdlib queries plus signature prefixes of indexed functions; each "
        f"warmed once, then timed {result['repeats']} times per mode, in-process, wall time "
        "of `Searcher.search` (top_k 10) including the query embedding. `server`: streams "
        "side by side, vectors searched in memory (as the language server runs); "
        f"`{SERVER_BATCH_QUERIES}`: the same, with queries embedded by the batch model "
        "(float32 products, two threads) instead of the int8 query encoder; `parallel`: "
        "streams side by side, vectors searched by sqlite-vec (as a one-shot `codesift "
        "search` runs); `sequential`: one after the other on one connection, sqlite-vec; "
        f"`{SERVER_NO_VECTORS}`: streams side by side without vectors (embeddings off, or "
        "before the first vectors exist), the feedback stream running after the others. "
        f"`{SERVER_ALONE}`: the `server` mode in a child process that loads only what a "
        "language server holds (the index, its vectors in memory, the query encoder) and "
        "runs nothing else, measured first (the other modes alternate query by query in "
        "this process, sqlite-vec's kNN and the batch model between the server's searches).",
        "",
        "| mode | p50 ms | p95 ms | mean ms | "
        + " | ".join(f"{c} p50 / p95" for c in categories)
        + f" | target p50 <= {TARGET_P50_MS:g}, p95 <= {TARGET_P95_MS:g} |",
        "|---" * (5 + len(categories)) + "|",
    ]
    for mode, run in runs.items():
        p50, p95 = percentile(run.total_ms, 50), percentile(run.total_ms, 95)
        lines.append(
            f"| {mode} | {p50:.1f} | {p95:.1f} | {statistics.mean(run.total_ms):.1f} | "
            + " | ".join(_ms(run.by_category[c]) for c in categories)
            + f" | {_verdict(p50, p95)} |"
        )
    streams = list(dict.fromkeys(s for run in runs.values() for s in run.streams))
    stages = list(dict.fromkeys(s for run in runs.values() for s in run.stages))
    lines += [
        "",
        "Per stream and stage, p50 / p95 ms (a stream's own time; in `parallel` the streams "
        "overlap, so `streams` is their wall time together):",
        "",
        "| mode | " + " | ".join(streams) + " | " + " | ".join(f"stage {s}" for s in stages) + " |",
        "|---" * (1 + len(streams) + len(stages)) + "|",
    ]
    for mode, run in runs.items():
        lines.append(
            f"| {mode} | "
            + " | ".join(_ms(run.streams[s]) for s in streams)
            + " | "
            + " | ".join(_ms(run.stages[s]) for s in stages)
            + " |"
        )
    errors = sum(run.errors for run in runs.values())
    if errors:
        lines += ["", f"Stream errors during the run: {errors}."]
    pr = result["lexical_pruning"]
    lines += [
        "",
        "### Optimising the lexical stream",
        "",
        "Common terms (`self`, `def`, `return`... in at least half the FTS rows) get an "
        "IDF of 1e-6 from FTS5's bm25, so they change no ranking, but bm25 visits every row "
        "they occur in. The lexical stream leaves out of the MATCH every term found in at "
        "least `search.lexical_max_df` of the rows, when the query has rarer ones "
        "(`streams.scored_terms`; document counts cached per process). Same "
        f"{pr['queries']} queries, lexical stream alone, interleaved, {result['repeats']} "
        "timed repeats after one warm-up; agreement with scoring every term:",
        "",
        "| lexical stream | p50 ms | p95 ms | same top 10 | same 300 candidates "
        "| largest score difference |",
        "|---|---|---|---|---|---|",
        *[
            f"| {k} | {v[0]:.1f} | {v[1]:.1f} | {pr['same_top10'][k]}/{pr['queries']} | "
            f"{pr['same_candidates'][k]}/{pr['queries']} | {pr['max_score_diff'][k]:.1e} |"
            for k, v in pr["times"].items()
        ],
    ]
    sc = result["symbol_candidates"]
    lines += [
        "",
        "### Optimising the symbol stream",
        "",
        "Its name candidates are the 400 names sharing most trigrams with each identifier "
        "of the query, counted in one SQL statement over the trigram index. A trigram like "
        "`est` (of `test_...`) is in 44% of the stdlib's names: its postings were most of "
        "the work and say little about which name is meant. Candidates are now counted "
        "over the identifier's rarest trigrams whose postings add up to at most 6,000 "
        "(where words join: `ngf`, `leh` in TimedRotatingFileHandler, which similar names "
        "share); they are still scored on all their trigrams. The symbol stream alone "
        f"on the {sc['queries']} queries that have identifiers, {result['repeats']} timed "
        f"repeats; same top 10 as before for {sc['same_top10']}/{sc['queries']}, same "
        f"whole ranking for {sc['same_all']}/{sc['queries']}:",
        "",
        "| symbol stream | p50 ms | p95 ms |",
        "|---|---|---|",
        *[f"| {k} | {v[0]:.1f} | {v[1]:.1f} |" for k, v in sc["times"].items()],
    ]
    qe = result["query_embedding"]
    server = result["modes"]["server"]
    batch_mode = result["modes"][SERVER_BATCH_QUERIES]
    lines += [
        "",
        "### Query embedding",
        "",
        "The shipped model stores int8 weights but computes in float32; a search embeds "
        "one short query while its other streams use the same cores. Queries now run on "
        "an int8 copy of the model (int8 products, per-channel weights; the feed-forward "
        "output projections of the first two layers stay float32), rebuilt with "
        "onnxruntime's fused transformer operators (embedding/bert_graph.py), on one "
        "thread (embedding/query_model.py). One query embedded alone, "
        f"{qe['queries']} texts (the queries above and the devset's queries of all corpora; "
        f"median {qe['tokens_p50']:.0f} tokens), {result['repeats']} repeats, interleaved:",
        "",
        "| query embedding | p50 ms | p95 ms |",
        "|---|---|---|",
        *[f"| {k} | {v[0]:.1f} | {v[1]:.1f} |" for k, v in qe["times"].items()],
        "",
        f"Cosine between the two vectors of a text: mean {qe['cosine_mean']:.4f}, lowest "
        f"{qe['cosine_min']:.4f}. Whole searches (the latency table above): `server` "
        f"p50 {server['p50_ms']:.1f} / p95 {server['p95_ms']:.1f} ms against "
        f"{batch_mode['p50_ms']:.1f} / {batch_mode['p95_ms']:.1f} ms with batch-model "
        "queries. Quality: bench/quality.py's row `batch-model queries` (the Quality "
        "section).",
    ]
    emb = result["embedding"]
    fill_rec = result.get("fill")
    lines += [
        "",
        "### Embedding throughput",
        "",
        f"{emb['chunks']:,} summary chunks (mean {emb['mean_chars']:.0f} characters) embedded "
        f"in-process, batch 32, at most 256 tokens: {emb['rate']:.1f} chunks/s in id order "
        f"({emb['seconds']:.1f} s), **{emb.get('sorted_rate', emb['rate']):.1f} chunks/s** in "
        "order of length as `fill_vectors` embeds them (a batch is padded to its longest "
        f"text; load {emb['load_start']} before, {emb['load_end']} after). At that rate all "
        f"{idx['embeddable']:,} embeddable chunks take "
        f"**{idx['embeddable'] / emb.get('sorted_rate', emb['rate']) / 60:.0f} min** "
        "(extrapolated from the sample).",
    ]
    if fill_rec:
        stopped = (
            f" It was stopped there (it slowed every other measurement); at its rate all "
            f"{idx['embeddable']:,} chunks take "
            f"**{idx['embeddable'] / fill_rec['rate'] / 60:.0f} min** (extrapolated)."
            if fill_rec.get("partial")
            else ""
        )
        lines += [
            "",
            f"Measured fill (`fill_vectors` over the index, batch 32, {fill_rec['at']}): "
            f"{fill_rec['embedded']:,} chunks in {fill_rec['seconds'] / 60:.1f} min, "
            f"{fill_rec['rate']:.1f} chunks/s (load {fill_rec.get('load_start', '?')} at start, "
            f"{fill_rec['load_end']} at end).{stopped} Lexical and symbol search answer "
            "meanwhile; vectors join as each batch commits.",
        ]
    rec = result["int8"]
    speed = result["vector_speed"]
    lines += [
        "",
        "### int8 vs float32 vectors",
        "",
        f"Recall: {rec['corpus']:,} summary-chunk vectors (the sample above) as the corpus, "
        f"{rec['queries']} devset queries (all corpora) as queries; exact float32 cosine kNN "
        "(numpy) is the reference. Speed: vec0 tables with "
        f"{speed['rows']:,} rows (as many as the index's vectors; random unit vectors), "
        f"k = {speed['k']}, layer filter as in the vector stream; 30 queries x "
        f"{speed['rounds']} rounds, the two tables queried alternately.",
        "",
        "| vectors | recall@10 | recall@50 | worst query recall@10 | kNN p50 / p95 ms "
        "| table file | insert s |",
        "|---|---|---|---|---|---|---|",
        f"| int8 (shipped) | {rec['recall@10_int8']:.3f} | {rec['recall@50_int8']:.3f} | "
        f"{rec['min_recall@10_int8']:.2f} | {speed['int8']['p50_ms']:.1f} / "
        f"{speed['int8']['p95_ms']:.1f} | {speed['int8']['file_mib']:.1f} MiB | "
        f"{speed['int8']['insert_s']:.1f} |",
        f"| float32 | {rec['recall@10_float32_vec0']:.3f} | {rec['recall@50_float32_vec0']:.3f}"
        f" | 1.00 | {speed['float32']['p50_ms']:.1f} / {speed['float32']['p95_ms']:.1f} | "
        f"{speed['float32']['file_mib']:.1f} MiB | {speed['float32']['insert_s']:.1f} |",
    ]
    res = result["resident"]
    lines += [
        "",
        "### Resident vectors",
        "",
        f"The language server searches an in-memory copy of the index's {res['vectors']:,} "
        f"vectors ({res['mib']:.1f} MiB, loaded in {res['load_s']:.2f} s): sign-bit Hamming "
        f"distance keeps the {res['prefilter']:,} most promising, exact cosine reranks them "
        "(retrieval/vector_index.py). Against sqlite-vec's exact int8 kNN over the same "
        f"vectors, k = {res['k']} (the vector stream's k), layers code+summary, "
        f"{res['queries']} devset queries (all corpora), alternating which runs first:",
        "",
        "| kNN | p50 ms | p95 ms | recall@10 | recall@100 | recall@k | worst recall@10 |",
        "|---|---|---|---|---|---|---|",
        f"| sqlite-vec (exact) | {res['times']['sqlite-vec'][0]:.1f} | "
        f"{res['times']['sqlite-vec'][1]:.1f} | 1 | 1 | 1 | 1 |",
        f"| resident (shipped in the server) | {res['times']['resident'][0]:.1f} | "
        f"{res['times']['resident'][1]:.1f} | {res['recall']['10']:.3f} | "
        f"{res['recall']['100']:.3f} | {res['recall'][str(res['k'])]:.3f} | "
        f"{res['min_recall@10']:.2f} |",
    ]
    if result.get("notes"):
        lines += ["", *[f"- {n}" for n in result["notes"]]]
    lines.append(f"<!-- {SECTION}:end -->")
    return "\n".join(lines) + "\n"


def write_section(out: Path, section: str) -> None:
    text = out.read_text() if out.exists() else "# Benchmark results\n"
    pattern = re.compile(rf"<!-- {SECTION}:begin -->.*?<!-- {SECTION}:end -->\n?", re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _: section, text)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    out.write_text(text)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--embed-sample", type=int, default=1000)
    parser.add_argument("--fill", action="store_true", help="compute missing vectors first")
    parser.add_argument("--write", action="store_true", help="update the RESULTS.md section")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--note", action="append", default=[], help="a line for the report")
    parser.add_argument(
        "--latency-only",
        action="store_true",
        help="measure the search latency (section 2) and stop: no report is written",
    )
    parser.add_argument("--server-alone-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.server_alone_child:
        return server_alone_child(args.repeats)
    if args.latency_only and args.write:
        parser.error("--latency-only writes no report: drop --write")

    machine = machine_info()
    conn = prepare_db()
    settings = bench_settings()
    embedder = bench_embedder(settings)
    fill_record: Json | None = None
    if args.fill:
        log("filling the missing vectors (timed)")
        fill_record = fill(conn, settings, embedder)
    elif FILL_RECORD.is_file():
        fill_record = json.loads(FILL_RECORD.read_text())
    coverage = vector_coverage(conn, settings.embedding.layers)
    index = {
        "files": int(scalar(conn, "SELECT count(*) FROM files")),
        "chunks": int(scalar(conn, "SELECT count(*) FROM chunks")),
        "vectors": coverage.embedded,
        "embeddable": coverage.embeddable,
        "layers": list(settings.embedding.layers),
    }
    log(f"index: {index}")
    queries = bench_queries(conn)
    categories = list(dict.fromkeys(q.category for q in queries))
    with_vectors = embedder if coverage.embedded else None
    resident = Searcher(conn, settings.search, with_vectors, vector_index=VectorIndex())
    resident.load_vectors()
    batch_queries = bench_embedder(settings, quantized_queries=False)
    exact = Searcher(
        conn,
        settings.search,
        batch_queries if coverage.embedded else None,
        vector_index=VectorIndex(),
    )
    exact.load_vectors()
    searchers = {
        "server": resident,
        SERVER_BATCH_QUERIES: exact,
        "parallel": Searcher(conn, settings.search, with_vectors),
        "sequential": Searcher(conn, settings.search, with_vectors, parallel=False),
        SERVER_NO_VECTORS: Searcher(conn, settings.search),
    }
    cores_before = effective_cores()
    log(f"effective cores before the latency runs: {cores_before:.2f}")
    log(f"{SERVER_ALONE}: a child process (load {load_avg()})")
    alone = server_alone(args.repeats)
    runs = {SERVER_ALONE: alone, **measure_latency(searchers, queries, args.repeats)}
    cores_after = effective_cores()
    log(f"effective cores after: {cores_after:.2f}")
    for mode, run in runs.items():
        log(
            f"{mode}: p50 {percentile(run.total_ms, 50):.1f} ms, "
            f"p95 {percentile(run.total_ms, 95):.1f} ms; streams "
            + ", ".join(f"{s} {percentile(v, 50):.1f}" for s, v in run.streams.items())
        )
    if args.latency_only:
        log(f"load at end {load_avg()}")
        return 0
    log(f"lexical stream: common terms left out vs all terms (load {load_avg()})")
    pruning = lexical_pruning(conn, queries, args.repeats, settings.search.lexical_max_df)
    log(f"  {pruning}")
    log(f"symbol stream: name candidates counted in SQL vs Python (load {load_avg()})")
    symbol = symbol_candidates(conn, queries, args.repeats)
    log(f"  {symbol}")
    log(f"embedding {args.embed_sample} summary chunks (load {load_avg()})")
    emb, sample_vectors = embed_sample(conn, embedder, args.embed_sample)
    log(f"  {emb['rate']:.1f} chunks/s")
    log(f"query embedding: int8 encoder vs batch model (load {load_avg()})")
    query_embedding = compare_query_embedding(
        embedder, batch_queries, [q.text for q in queries] + all_devset_queries(), args.repeats
    )
    log(f"  {query_embedding}")
    query_texts = all_devset_queries()
    query_vectors = np.stack([embedder.embed_query(t) for t in query_texts])
    recall = int8_recall(sample_vectors, query_vectors)
    log(f"int8 recall: {recall}")
    cap_k = settings.search.candidate_cap + 50
    resident_rec = resident_recall(conn, query_vectors, cap_k, ["code", "summary"])
    log(f"resident vectors: {resident_rec}")
    rows = max(coverage.embedded, coverage.embeddable)
    speed = vector_speed(rows, settings.search.candidate_cap + 50, ["summary", "code"])
    log(f"vector speed: {speed}")
    result: Json = {
        "machine": machine,
        "index": index,
        "query_count": len(queries),
        "category_counts": {c: sum(q.category == c for q in queries) for c in categories},
        "repeats": args.repeats,
        "effective_cores": [cores_before, cores_after],
        "modes": {
            mode: {
                "p50_ms": percentile(run.total_ms, 50),
                "p95_ms": percentile(run.total_ms, 95),
                "by_category": {
                    c: [percentile(v, 50), percentile(v, 95)] for c, v in run.by_category.items()
                },
                "streams": {
                    s: [percentile(v, 50), percentile(v, 95)] for s, v in run.streams.items()
                },
                "stages": {
                    s: [percentile(v, 50), percentile(v, 95)] for s, v in run.stages.items()
                },
                "errors": run.errors,
            }
            for mode, run in runs.items()
        },
        "lexical_pruning": pruning,
        "symbol_candidates": symbol,
        "query_embedding": query_embedding,
        "embedding": emb,
        "fill": fill_record,
        "int8": recall,
        "resident": resident_rec,
        "vector_speed": speed,
        "load_end": load_avg(),
        "notes": args.note,
    }
    LAST_JSON.write_text(json.dumps(result, indent=1) + "\n")
    section = markdown(result, runs, categories)
    print(section)
    if args.write:
        write_section(args.out, section)
        from runinfo import markdown_tables, write_results

        write_results(
            SECTION, {"tables": markdown_tables(section)}, machine_info=result.get("machine")
        )
        log(f"wrote the {SECTION} section of {args.out} and bench/results/{SECTION}.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
