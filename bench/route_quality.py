"""Routing accuracy: does `codesift route` pick the repository a question is about?

Every corpus of both development sets (../shared/devset, ../shared/devset2) is one
workspace folder; every dev-set query (set 1, set 2 long and short) is routed among
all of them without saying its corpus. Reports top-1 and top-3 accuracy (the target:
top-3 >= 0.95), per suite and per corpus, and the routing time per query.

Then the unscoped search across every folder, on a sample of the queries
(`--latency-queries`, spread over the corpora): as the language server does it
(route among the folders, then search the folders at ROUTE_THRESHOLD or more,
every folder when none is; routing on profiles kept in memory, as the server
caches them) against searching every folder; each folder's Searcher is opened
once, pages merged as the server merges them. With `--query-model minilm` and
indexes of MiniLM vectors (`--vectors-prefix msf`) it runs as a language server
with MiniLM does: every stream, the query embedded once per request, each
folder's vectors held in memory and read by routing's neighbour scores too;
otherwise lexical and symbol streams only. Reports p50 / p95 of routing alone
and of both strategies, the folders searched per query and how often the right
corpus was among them.

It reads the indexes bench/quality.py builds (bench/.data/db/quality-<corpus>.db):
run that first. Those hold no vectors: each repository's topic centroids are read
from the same corpus's index with static vectors (`--vectors-prefix`, default
bench/.data/db/static-<corpus>.db, built by `bench/quality.py --embed --model
static --db-prefix static`; `--vectors-prefix ''`: routing without topics). With
`--vectors-prefix msf --query-model minilm` the indexes of MiniLM vectors
(`bench/quality.py --embed --model minilm --db-prefix msf`) also give each
repository's neighbour score, as a server whose embedding.model is MiniLM routes.

The queries are split in two halves by a hash of their text (`half 0`, `half 1`):
routing's constants are set on half 0 and checked on half 1.

    python bench/route_quality.py [--corpus NAME]... [--limit 3] [--latency-queries 60]
        [--vectors-prefix static] [--query-model static|minilm] [--write]
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import os
import platform
import re
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent / "server"))
sys.path.insert(0, str(BENCH_DIR))

from codesift.embedding import Embedder, remembered_queries  # noqa: E402
from codesift.engine.live_collections import (  # noqa: E402
    ROUTE_FOLDERS,
    ROUTE_THRESHOLD,
    resident_neighbours,
    routed_folders,
)
from codesift.engine.route import (  # noqa: E402
    MAX_ROUTE_LIMIT,
    RouteResult,
    repository_profile,
    route_sources,
)
from codesift.engine.search import ROUTE_DECAY, FolderPage, merge_pages  # noqa: E402
from codesift.engine.unscoped import GRADE_SCALE, page_weights  # noqa: E402
from codesift.engine.workspace import Workspace  # noqa: E402
from codesift.retrieval import BROAD_LAYERS, Searcher, SearchRequest, SearchResult  # noqa: E402
from codesift.retrieval.routing import RouteEvidence, SourceProfile  # noqa: E402
from codesift.retrieval.vector_index import VectorIndex  # noqa: E402
from codesift.store.database import open_database  # noqa: E402
from codesift.store.route_centroids import (  # noqa: E402
    cached_centroids,
    neighbour_similarity,
    vectors_are_minilm,
)
from codesift.store.route_profile import IndexEvidence  # noqa: E402
from corpora import DEVSET2_NAMES, CorpusUnavailable, prepare_corpus  # noqa: E402
from quality import (  # noqa: E402
    SUITES,
    RankedChunk,
    corpus_settings,
    load_queries,
    score_results,
)
from runinfo import head_commit  # noqa: E402

# The MiniLM query embedder of --query-model minilm (None: the static query alone).
QUERY_EMBEDDER: Embedder | None = None

DB_DIR = BENCH_DIR / ".data" / "db"
DEVSET1_NAMES = ("python-stdlib", "go-stdlib", "rust-std", "js-npm", "ts-rxjs")
SECTION = "routing"
# (suite, half) of a query, for the unscoped quality table.
DevQueryKey = tuple[str, int]


@dataclass(frozen=True, slots=True)
class Routed:
    corpus: str
    suite: str
    rank: int | None  # 1-based rank of the right corpus among the routed ones
    half: int  # 0 or 1 (`query_half`)


def query_half(text: str) -> int:
    """The half of the dev set a query is in (a hash of its text: stable)."""
    return int(hashlib.sha1(text.encode("utf-8")).hexdigest(), 16) % 2


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def write_section(out: Path, section: str) -> None:
    text = out.read_text(encoding="utf-8")
    pattern = re.compile(rf"<!-- {SECTION}:begin -->.*?<!-- {SECTION}:end -->\n?", re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _: section, text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    out.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", action="append", help="corpus to include (repeatable)")
    parser.add_argument("--limit", type=int, default=3, help="repositories returned per query")
    parser.add_argument(
        "--latency-queries",
        type=int,
        default=60,
        help="queries timed for the unscoped search (0: skip)",
    )
    parser.add_argument(
        "--vectors-prefix",
        default="static",
        help="read topic centroids from bench/.data/db/PREFIX-<corpus>.db ('': none)",
    )
    parser.add_argument(
        "--query-model",
        choices=("static", "minilm"),
        default="static",
        help="minilm: queries also embedded by MiniLM, for the neighbour scores of"
        " indexes whose vectors are MiniLM's (--vectors-prefix msf), as a server"
        " with embedding.model = 'minilm' routes (default: the static query alone)",
    )
    parser.add_argument(
        "--no-unscoped-quality",
        dest="unscoped_quality",
        action="store_false",
        help="skip the NDCG@10 of the unscoped search over every folder (every query"
        " searched in every folder: ~3 minutes with MiniLM vectors)",
    )
    parser.add_argument("--write", action="store_true", help="update bench/RESULTS.md")
    args = parser.parse_args(argv)
    global QUERY_EMBEDDER
    QUERY_EMBEDDER = Embedder(model="minilm") if args.query_model == "minilm" else None
    names = args.corpus or [*DEVSET1_NAMES, *DEVSET2_NAMES]

    profiles: list[SourceProfile] = []
    indexes: dict[str, IndexEvidence] = {}
    evidence: dict[str, RouteEvidence] = {}
    workspaces: dict[str, Workspace] = {}
    queries = []
    started = time.perf_counter()
    for name in names:
        db_path = DB_DIR / f"quality-{name}.db"
        if not db_path.exists():
            log(f"{name}: no index at {db_path}; run bench/quality.py first")
            continue
        try:
            corpus = prepare_corpus(name, log)
        except CorpusUnavailable as exc:
            log(f"{name}: {exc}")
            continue
        ws = Workspace(corpus.root, corpus_settings(corpus, db_path), db_path)
        workspaces[name] = ws
        # Kept open: routing reads each index's vocabulary and probes it per query,
        # as the server does through its reader connections.
        conn = open_database(db_path, readonly=True)
        profiles.append(repository_profile(ws, conn, name=name))
        topics, neighbours, minilm = _vector_evidence(name, args.vectors_prefix)
        indexes[name] = IndexEvidence(conn, topics=topics, neighbours=neighbours, minilm=minilm)
        evidence[name] = indexes[name]
        queries.extend(load_queries(corpus))
    profile_s = time.perf_counter() - started
    log(f"{len(profiles)} profiles in {profile_s:.1f} s; {len(queries)} queries")
    started = time.perf_counter()
    with_topics = len([e for e in indexes.values() if e.topics() is not None])
    topics_s = time.perf_counter() - started
    log(f"topic centroids of {with_topics} repositories in {topics_s:.1f} s")

    routed: list[Routed] = []
    times: list[float] = []
    for q in queries:
        t0 = time.perf_counter()
        result = route_sources(
            q.text, profiles, limit=args.limit, evidence=evidence, query_embedder=QUERY_EMBEDDER
        )
        times.append((time.perf_counter() - t0) * 1000)
        names_routed = [m.name for m in result.repositories]
        rank = names_routed.index(q.corpus) + 1 if q.corpus in names_routed else None
        routed.append(Routed(q.corpus, q.suite, rank, query_half(q.text)))

    def accuracy(rows: list[Routed], k: int) -> float:
        return sum(1 for r in rows if r.rank is not None and r.rank <= k) / len(rows)

    lines = [
        f"<!-- {SECTION}:begin -->",
        "## Source routing (`bench/route_quality.py`)",
        "",
        f"Run {time.strftime('%Y-%m-%d')} at commit `{head_commit()}`; machine: nproc"
        f" {os.cpu_count()}, {platform.machine()}, {platform.python_version()}.",
        "",
        f"{len(profiles)} repositories (every dev-set corpus), {len(queries)} queries routed"
        f" among all of them; {args.limit} returned per query; profiles built in"
        f" {profile_s:.1f} s; routing p50 {statistics.median(times):.2f} ms,"
        f" max {max(times):.2f} ms (load average"
        f" {' / '.join(f'{x:.1f}' for x in os.getloadavg())} at the end); topic"
        f" centroids of {with_topics} repositories (from `{args.vectors_prefix}-*` indexes)"
        f" computed in {topics_s:.1f} s.",
        "",
        "| suite | queries | top-1 | top-3 |",
        "|---|---|---|---|",
    ]
    by_suite: dict[str, list[Routed]] = defaultdict(list)
    by_corpus: dict[str, list[Routed]] = defaultdict(list)
    for r in routed:
        by_suite[r.suite].append(r)
        by_corpus[r.corpus].append(r)
    for suite in SUITES:
        rows = by_suite.get(suite)
        if rows:
            lines.append(
                f"| {suite} | {len(rows)} | {accuracy(rows, 1):.3f} | {accuracy(rows, 3):.3f} |"
            )
    for half in (0, 1):
        rows = [r for r in routed if r.half == half]
        lines.append(
            f"| half {half} | {len(rows)} | {accuracy(rows, 1):.3f} | {accuracy(rows, 3):.3f} |"
        )
    lines.append(
        f"| **all** | {len(routed)} | **{accuracy(routed, 1):.3f}** |"
        f" **{accuracy(routed, 3):.3f}** |"
    )
    lines += ["", "| corpus | queries | top-1 | top-3 |", "|---|---|---|---|"]
    for name in sorted(by_corpus, key=lambda n: accuracy(by_corpus[n], 3)):
        rows = by_corpus[name]
        lines.append(
            f"| {name} | {len(rows)} | {accuracy(rows, 1):.3f} | {accuracy(rows, 3):.3f} |"
        )
    lines += ["", *threshold_sweep(Pool(profiles, evidence), queries)]
    if args.latency_queries > 0 or args.unscoped_quality:
        folders, search_evidence, how = open_folders(workspaces, evidence, args.vectors_prefix)
        pool = Pool(profiles, search_evidence)
        try:
            if args.unscoped_quality:
                lines += ["", *unscoped_quality(folders, pool, queries, how)]
            if args.latency_queries > 0:
                lines += ["", *unscoped_latency(folders, pool, queries, args.latency_queries, how)]
        finally:
            for folder in folders.values():
                folder.close()
    lines.append(f"<!-- {SECTION}:end -->")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        write_section(BENCH_DIR / "RESULTS.md", text)
        from runinfo import markdown_tables, write_results

        write_results(SECTION, {"tables": markdown_tables(text)})
    return 0


def _vector_evidence(name: str, prefix: str) -> tuple[Any, Any, Any]:
    """What reads `name`'s topic centroids, its neighbour score and whether its
    vectors are MiniLM's from its index with vectors ((None, None, None): no
    prefix, or no such index). Opened read-only and
    kept open, as the server keeps its readers."""
    if not prefix:
        return None, None, None
    path = DB_DIR / f"{prefix}-{name}.db"
    if not path.exists():
        log(f"{name}: no index with vectors at {path}; routed without topics")
        return None, None, None
    conn = open_database(path, readonly=True)
    return (
        functools.partial(cached_centroids, path, conn),
        functools.partial(neighbour_similarity, path, conn),
        functools.partial(vectors_are_minilm, path, conn),
    )


def _sample(queries: list[Any], count: int) -> list[Any]:
    """`count` queries spread evenly over the list (every corpus and suite in turn)."""
    if count >= len(queries):
        return list(queries)
    step = len(queries) / count
    return [queries[int(i * step)] for i in range(count)]


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


@dataclass(frozen=True, slots=True)
class Pool:
    """The folders routed among: their profiles and what routing reads of them."""

    profiles: list[SourceProfile]
    evidence: dict[str, RouteEvidence]

    def route(self, text: str) -> RouteResult:
        """`text` routed as an unscoped search routes it (MAX_ROUTE_LIMIT listed)."""
        return route_sources(
            text,
            self.profiles,
            limit=MAX_ROUTE_LIMIT,
            evidence=self.evidence,
            query_embedder=QUERY_EMBEDDER,
        )


def threshold_sweep(pool: Pool, queries: list[Any]) -> list[str]:
    """For each confidence threshold: how many folders an unscoped search would
    search (none passing: every folder) and how often the right corpus is among
    them, over every query (routing only)."""
    results = [(q.corpus, pool.route(q.text)) for q in queries]
    lines = [
        "### Which folders an unscoped search searches, by threshold",
        "",
        f"Over all {len(queries)} queries, the router's best {ROUTE_FOLDERS} at or"
        f" above each threshold; a query no folder passes searches all {len(pool.profiles)}."
        f" codesift/search uses {ROUTE_THRESHOLD}.",
        "",
        "| threshold | folders searched (mean) | none passed | right corpus searched |",
        "|---|---|---|---|",
    ]
    for threshold in (0.1, 0.2, 0.3, 0.4, 0.5, 0.6):
        searched: list[int] = []
        none = right = 0
        for corpus, result in results:
            chosen = routed_folders(result, threshold)
            if not chosen:
                none += 1
                chosen = [p.name for p in pool.profiles]
            searched.append(len(chosen))
            right += corpus in chosen
        lines.append(
            f"| {threshold} | {statistics.mean(searched):.1f} | {none / len(results):.3f} |"
            f" {right / len(results):.3f} |"
        )
    return lines


class _Folder:
    """One folder as the unscoped search meets it: its Searcher and what routing
    reads of it, over connections kept open (as the server keeps its readers)."""

    def __init__(self, name: str, ws: Workspace, vectors_prefix: str) -> None:
        self.conns: list[Any] = []
        vectors_path = DB_DIR / f"{vectors_prefix}-{name}.db" if vectors_prefix else None
        self.resident: VectorIndex | None = None
        embedder = None
        search_path = ws.db_path
        if QUERY_EMBEDDER is not None and vectors_path is not None and vectors_path.exists():
            # The server's configuration: MiniLM vectors held in memory, read by the
            # vector streams and by routing's neighbour score; the index searched is
            # the one holding them (the same files, full text and symbols included).
            search_path = vectors_path
            embedder = QUERY_EMBEDDER
            self.resident = VectorIndex()
        conn = self._open(search_path)
        if self.resident is not None:
            self.resident.load(conn)
        self.searcher = Searcher(conn, ws.settings.search, embedder, vector_index=self.resident)
        self.layers = ws.settings.embedding.layers
        self.vectors_conn = conn if self.resident is not None else None
        self.vectors_path = search_path

    def _open(self, path: Path) -> Any:
        conn = open_database(path, readonly=True)
        self.conns.append(conn)
        return conn

    def neighbours(self, query_vector: Any) -> float | None:
        """Routing's neighbour score from the resident vectors (as
        engine/live_collections.LiveEvidence reads it)."""
        assert self.resident is not None and self.vectors_conn is not None
        return resident_neighbours(
            self.vectors_path, self.vectors_conn, self.resident, self.layers, query_vector
        )

    def close(self) -> None:
        self.searcher.close()
        for conn in self.conns:
            conn.close()


def open_folders(
    workspaces: dict[str, Workspace],
    evidence: dict[str, RouteEvidence],
    vectors_prefix: str,
) -> tuple[dict[str, _Folder], dict[str, RouteEvidence], str]:
    """Every folder's Searcher, the routing evidence a server would use with them
    (neighbour scores from resident vectors when every folder holds MiniLM's) and
    a line saying how they search."""
    folders = {name: _Folder(name, ws, vectors_prefix) for name, ws in workspaces.items()}
    if not all(f.resident is not None for f in folders.values()):
        return folders, evidence, "lexical and symbol streams (no vectors)"
    # Routing as the language server does it: neighbours from resident vectors.
    resident: dict[str, RouteEvidence] = {
        name: IndexEvidence(
            e.conn,  # type: ignore[attr-defined]
            topics=e.topics,  # type: ignore[attr-defined]
            neighbours=folders[name].neighbours,
            minilm=e.minilm_vectors,  # type: ignore[attr-defined]
        )
        for name, e in evidence.items()
    }
    how = (
        "every stream (MiniLM query embedded once per search, each folder's vectors"
        f" held in memory as the language server holds them, `{vectors_prefix}-*`"
        " indexes); routing's neighbour scores read from those resident vectors"
    )
    return folders, resident, how


def _in_corpus(corpus: str, merged: Sequence[tuple[str, SearchResult]]) -> list[RankedChunk]:
    """A merged page as the metric sees it: a result from another folder never
    matches the query's targets (they are paths within its own corpus)."""
    return [
        RankedChunk(r.path if folder == corpus else "", r.start_line, r.end_line)
        for folder, r in merged
    ]


def unscoped_quality(
    folders: dict[str, _Folder], pool: Pool, queries: list[Any], how: str
) -> list[str]:
    """NDCG@10 of the unscoped search over every folder (the query's targets count
    in its own corpus only), for the ways to choose and merge the folders; every
    query is routed once and searched in every folder once, and each way merges
    its folders' pages (engine/search.merge_pages) as codesift/search would."""
    strategies = (
        "the right folder alone (a scoped search)",
        "every folder, merged by score (`route: false`)",
        "confidence >= 0.3, merged by score (before)",
        f"the router's best {ROUTE_FOLDERS} at >= {ROUTE_THRESHOLD}, {ROUTE_DECAY} per place"
        " in its order (first version)",
        "every folder, weighted by the router (as over fewer than 5 folders)",
        f"the router's best {ROUTE_FOLDERS} at >= {ROUTE_THRESHOLD}, weighted by the router"
        " (shipped)",
    )
    ndcg: dict[str, list[tuple[DevQueryKey, float]]] = {s: [] for s in strategies}
    searched: dict[str, list[int]] = {s: [] for s in strategies}
    right: dict[str, int] = dict.fromkeys(strategies, 0)
    for i, q in enumerate(queries, start=1):
        request = SearchRequest(q.text, top_k=10)
        with remembered_queries():
            result = pool.route(q.text)
            pages = {n: FolderPage(n, f.searcher.search(request)) for n, f in folders.items()}
        every = list(folders)
        by_place = {m.name: ROUTE_DECAY**i for i, m in enumerate(result.repositories)}
        weights = page_weights(result.repositories, every)
        routed = routed_folders(result) or every
        ways: dict[str, tuple[list[str], dict[str, float]]] = {
            strategies[0]: ([q.corpus], {}),
            strategies[1]: (every, {}),
            strategies[2]: (routed_folders(result, 0.3, len(every)) or every, {}),
            strategies[3]: (routed, by_place),
            strategies[4]: (every, weights),
            strategies[5]: (routed, weights),
        }
        for name, (chosen, merge_weights) in ways.items():
            merged = merge_pages(request, [pages[n] for n in chosen], merge_weights)
            score = score_results(_in_corpus(q.corpus, merged.results), q.targets, 10)
            ndcg[name].append(((q.suite, query_half(q.text)), score.ndcg))
            searched[name].append(len(chosen))
            right[name] += q.corpus in chosen
        if i % 100 == 0:
            log(f"unscoped quality: {i}/{len(queries)} queries")

    def mean(rows: list[tuple[DevQueryKey, float]], keep: Any) -> str:
        kept = [v for key, v in rows if keep(key)]
        return f"{statistics.mean(kept):.3f}" if kept else "-"

    lines = [
        "### Unscoped search quality: NDCG@10 across every folder",
        "",
        f"All {len(queries)} queries, each searched in all {len(folders)} folders (top"
        f" 10, {how}); a result counts when it is one of the query's targets in its"
        " own corpus (another folder's answer to the same question counts as a miss)."
        f" Routed as codesift/search routes, merged by engine/search.merge_pages"
        " (each folder's page weighed by engine/unscoped.page_weights: exp(-"
        f"{GRADE_SCALE} x its distance from the best grade of the router's graded"
        " order)).",
        "",
        "| folders searched, pages merged | set 1 | set 2 long | set 2 short | half 0 |"
        " half 1 | **all** | folders (mean) | right folder searched |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for name in strategies:
        rows = ndcg[name]
        lines.append(
            f"| {name} | "
            + " | ".join(mean(rows, lambda k, s=suite: k[0] == s) for suite in SUITES)
            + f" | {mean(rows, lambda k: k[1] == 0)} | {mean(rows, lambda k: k[1] == 1)}"
            f" | **{mean(rows, lambda k: True)}** | {statistics.mean(searched[name]):.1f}"
            f" | {right[name] / len(queries):.3f} |"
        )
    return lines


def unscoped_latency(
    folders: dict[str, _Folder], pool: Pool, queries: list[Any], count: int, how: str
) -> list[str]:
    """The unscoped search: route then search the routed folders, against
    searching every folder (see the module docstring); the RESULTS.md lines."""
    sample = _sample(queries, count)
    route_ms: list[float] = []
    routed_ms: list[float] = []
    every_ms: list[float] = []
    searched: list[int] = []
    right = 0
    for q in sample[:1]:  # warm every folder's statements and page cache once
        with remembered_queries():
            for f in folders.values():
                f.searcher.search(SearchRequest(q.text, top_k=10, layers=BROAD_LAYERS))
    for i, q in enumerate(sample, start=1):
        request = SearchRequest(q.text, top_k=10, layers=BROAD_LAYERS)
        # Each strategy is one request: the query is embedded once within it.
        with remembered_queries():
            t0 = time.perf_counter()
            result = pool.route(q.text)
            route_ms.append((time.perf_counter() - t0) * 1000)
            chosen = routed_folders(result) or list(folders)
            pages = [FolderPage(n, folders[n].searcher.search(request)) for n in chosen]
            merge_pages(request, pages, page_weights(result.repositories, folders))
            routed_ms.append((time.perf_counter() - t0) * 1000)
        searched.append(len(chosen))
        right += q.corpus in chosen

        with remembered_queries():
            t0 = time.perf_counter()
            pages = [FolderPage(n, f.searcher.search(request)) for n, f in folders.items()]
            merge_pages(request, pages)
            every_ms.append((time.perf_counter() - t0) * 1000)
        if i % 10 == 0:
            log(f"unscoped latency: {i}/{len(sample)} queries")
    n = len(sample)
    return [
        "### Unscoped search: route first vs every folder",
        "",
        f"{n} queries (spread over the suites and corpora) searched across all"
        f" {len(folders)} folders, top 10, {how}; each folder's Searcher opened once."
        " Routed: route (profiles in memory, each index read for its vocabulary and"
        f" probed) then search the router's best {ROUTE_FOLDERS} at confidence >="
        f" {ROUTE_THRESHOLD} (every folder when none is), as codesift/search does"
        " without `folders`.",
        "",
        "| strategy | p50 ms | p95 ms | folders searched (mean) | right corpus searched |",
        "|---|---|---|---|---|",
        f"| routing alone | {statistics.median(route_ms):.1f} |"
        f" {_percentile(route_ms, 0.95):.1f} | | |",
        f"| route, then the routed folders | {statistics.median(routed_ms):.1f} |"
        f" {_percentile(routed_ms, 0.95):.1f} | {statistics.mean(searched):.1f} |"
        f" {right / n:.3f} |",
        f"| every folder | {statistics.median(every_ms):.1f} |"
        f" {_percentile(every_ms, 0.95):.1f} | {len(folders)} | 1.000 |",
    ]


if __name__ == "__main__":
    sys.exit(main())
