#!/usr/bin/env python3
"""Search quality on the labeled development sets (../shared/devset, ../shared/devset2).

Run by hand from the repository root (with the project's interpreter):

    PYTHONPATH=server python bench/quality.py [--devset 1|2|all|gen] [--split train|held-out|both]
        [--queries long|short|both]
        [--corpus NAME ...] [--top-k 10] [--write] [--embed | --no-vectors]
        [--config NAME ...] [--no-bm25] [--keep-stale-index] [--out bench/RESULTS.md]

Dev set 1 has five corpora (python-stdlib, go-stdlib, rust-std, js-npm, ts-rxjs);
dev set 2 twenty repositories in 19 languages, each with its long queries
(NAME.json) and the search-box rewrites of its prose queries (NAME.short.json,
`--queries short` or `--short` for those alone). Results are reported per query
suite (set 1; set 2 long; set 2 short) side by side, by category, by language and by
corpus. `--devset gen` runs the generated set of bench/docset.py instead (44 Debian
packages in 12 languages; suites `gen train` / `gen held-out`, each with its `short`
3-4 word questions; `--split` picks one split): its section of --out is `quality-gen`
and its summary bench/.data/quality-gen-last.json, where each generated suite is also
graded by file (`<suite> by file`: a question's target files, any result of the file a
hit, as the dev sets grade theirs). For each corpus:

1. obtain it as corpora.json says (bench/corpora.py; skipped with a message when it
   cannot be obtained);
2. index it with codesift's Indexer into bench/.data/db/quality-<corpus>.db, whole:
   the default excluded folders (node_modules, vendor, build, target...) are
   overridden, since the devset indexes every root whole. An existing database is
   updated incrementally; it is rebuilt when the indexing sources (parsing, store,
   workspace, indexer, tokens, config) changed since it was built, because an
   incremental run does not re-chunk unchanged files;
3. run every devset query through each named search configuration (the Searcher
   as shipped, each stream alone, each stream left out; the vector stream only with
   --embed, which first computes the missing vectors) and through two BM25
   baselines over 50-line windows of the same indexed files (bm25s; plain
   lower-case words, and words plus their identifier parts);
4. score NDCG@k exactly as ../shared/devset/README.md defines it (binary gains,
   each target hit at the rank of the first result that matches it, ideal DCG over
   min(k, number of targets)), plus MRR@k, recall@k and query latency.

Output: tables on stdout, the 10 worst queries per corpus for the shipped Searcher,
bench/.data/quality-<corpus>.jsonl (one line per query: targets, top-k results
with provenance, first-hit rank and NDCG per system, for a generated question its NDCG
graded by file per system too, deep rank of missed targets) and
bench/.data/quality-last.json. With --write, the section between
`<!-- quality:begin -->` and `<!-- quality:end -->` of --out is replaced (added
at the end when missing); the rest of the file is kept.

New rows: add a `SearchConfig` to EXTRA_CONFIGS (a stream subset, SearchSettings
overrides, or a Searcher factory for ranking priors) or a tokenizer to BM25_VARIANTS.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
SERVER_DIR = REPO_DIR / "server"
if str(SERVER_DIR) not in sys.path:
    sys.path.insert(0, str(SERVER_DIR))
if str(BENCH_DIR) not in sys.path:
    sys.path.insert(0, str(BENCH_DIR))

import apsw  # noqa: E402
import numpy as np  # noqa: E402

from codesift.config import SearchSettings, Settings, load_settings  # noqa: E402
from codesift.embedding import Embedder, fill_vectors, vector_coverage  # noqa: E402
from codesift.indexer import Indexer, IndexProgress  # noqa: E402
from codesift.retrieval.flight import Stream  # noqa: E402
from codesift.retrieval.request import SearchRequest  # noqa: E402
from codesift.retrieval.search import Searcher  # noqa: E402
from codesift.retrieval.vector_index import VectorIndex  # noqa: E402
from codesift.store.database import open_database, scalar  # noqa: E402
from codesift.tokens import split_identifier  # noqa: E402
from corpora import (  # noqa: E402
    CORPUS_NAMES,
    DATA_DIR,
    DB_DIR,
    DEVSET2_DIR,
    DEVSET2_NAMES,
    DEVSET_DIR,
    Corpus,
    CorpusUnavailable,
    prepare_corpus,
)
from docset import DOCSET_NAMES, docset_corpus  # noqa: E402

Json = dict[str, Any]

CATEGORIES: tuple[str, ...] = ("semantic", "architecture", "symbol")
SECTION = "quality"
DEFAULT_OUT = BENCH_DIR / "RESULTS.md"
# Missed targets are looked up this deep in the shipped Searcher's ranking.
DEEP_K = 100
WINDOW_LINES = 50
# Only the folders a VCS or codesift itself owns are left out: the devset indexes
# node_modules, vendor, build, target... as part of each corpus.
WHOLE_TREE_EXCLUDED_DIRS = [".git", ".codesift"]
# Sources whose changes alter what an index contains (not how it is searched).
INDEXING_SOURCES = (
    "parsing",
    "store",
    "workspace",
    "preparation.py",
    "indexer.py",
    "tokens.py",
    "config.py",
    "embedding",
)


def log(message: str) -> None:
    print(message, flush=True)


# --- the devset ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Target:
    path: str
    start_line: int | None = None
    end_line: int | None = None

    def label(self) -> str:
        if self.start_line is None:
            return self.path
        return f"{self.path}:{self.start_line}-{self.end_line}"

    def matches(self, path: str, start_line: int, end_line: int) -> bool:
        """The devset rule: path equal or ending with "/" + target; lines overlap any span."""
        if path != self.path and not path.endswith("/" + self.path):
            return False
        if self.start_line is None or self.end_line is None:
            return True
        return start_line <= self.end_line and end_line >= self.start_line


@dataclass(frozen=True, slots=True)
class DevQuery:
    corpus: str
    text: str
    category: str
    targets: tuple[Target, ...]  # relevant + secondary, equal weight
    devset: int = 1
    language: str = ""
    style: str = "long"  # "short": a dev set 2 search-box rewrite of a long query
    split: str = ""  # the generated set's split (bench/docset.py): train or held-out

    @property
    def suite(self) -> str:
        return suite_label(self.devset, self.style, self.split)


def suite_label(devset: int, style: str, split: str = "") -> str:
    if devset == GENERATED:
        return f"gen {split}" + (" short" if style == "short" else "")
    return "set 1" if devset == 1 else f"set 2 {style}"


# The generated measuring stick's queries carry this dev-set number.
GENERATED = 3
# Report order of the query suites.
SUITES: tuple[str, ...] = (
    "set 1",
    "set 2 long",
    "set 2 short",
    "gen train",
    "gen train short",
    "gen held-out",
    "gen held-out short",
)
# Which of the generated set's splits a run reads (--split; tuning reads train only).
GEN_SPLITS: tuple[str, ...] = ("train", "held-out")


def _target(raw: Any) -> Target:
    if isinstance(raw, str):
        return Target(raw)
    return Target(str(raw["path"]), int(raw["start_line"]), int(raw["end_line"]))


def load_queries(corpus: Corpus, styles: Collection[str] = ("long", "short")) -> list[DevQuery]:
    """The corpus's queries: its long ones, then (dev set 2) its short rewrites."""
    if corpus.devset == GENERATED:
        return [
            DevQuery(
                corpus.name,
                str(item["query"]),
                str(item["category"]),
                tuple(_target(t) for t in item["relevant"]),
                GENERATED,
                corpus.language,
                str(item["style"]),
                str(item["split"]),
            )
            for item in json.loads(corpus.queries.read_text(encoding="utf-8"))
            if item["style"] in styles and item["split"] in GEN_SPLITS
        ]
    files = []
    if "long" in styles or corpus.devset == 1:
        files.append(("long", corpus.queries))
    if "short" in styles and corpus.short_queries is not None:
        files.append(("short", corpus.short_queries))
    queries: list[DevQuery] = []
    for style, path in files:
        for item in json.loads(path.read_text(encoding="utf-8")):
            targets = tuple(_target(t) for t in [*item["relevant"], *item.get("secondary", [])])
            queries.append(
                DevQuery(
                    corpus.name,
                    str(item["query"]),
                    str(item["category"]),
                    targets,
                    corpus.devset,
                    corpus.language,
                    style,
                )
            )
    return queries


# --- scoring (pure) ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RankedChunk:
    """One result of any system, as the metric sees it (plus what error analysis needs)."""

    path: str
    start_line: int
    end_line: int
    kind: str = ""
    name: str = ""
    layer: str = ""
    provenance: tuple[tuple[str, int, float], ...] = ()  # (stream, rank, raw score)


@dataclass(frozen=True, slots=True)
class QueryScore:
    ndcg: float
    rr: float  # reciprocal rank of the first result that hits any target (0 if none)
    recall: float  # share of targets hit within k
    first_hit: int | None  # rank of the first hitting result
    target_ranks: tuple[int | None, ...]  # per target, the rank of its first hit


def target_ranks(results: Sequence[RankedChunk], targets: Sequence[Target]) -> list[int | None]:
    """For each target, the 1-based rank of the first result that matches it."""
    ranks: list[int | None] = []
    for target in targets:
        rank = next(
            (
                i
                for i, r in enumerate(results, start=1)
                if target.matches(r.path, r.start_line, r.end_line)
            ),
            None,
        )
        ranks.append(rank)
    return ranks


def ideal_dcg(n_targets: int, k: int) -> float:
    return sum(1.0 / math.log2(i + 1) for i in range(1, min(k, n_targets) + 1))


def score_results(results: Sequence[RankedChunk], targets: Sequence[Target], k: int) -> QueryScore:
    """NDCG@k as the devset README defines it, with MRR@k and recall@k."""
    ranks = target_ranks(results[:k], targets)
    hit_ranks = sorted({r for r in ranks if r is not None})  # a chunk hitting two counts once
    dcg = sum(1.0 / math.log2(r + 1) for r in hit_ranks)
    ideal = ideal_dcg(len(targets), k)
    first = hit_ranks[0] if hit_ranks else None
    return QueryScore(
        ndcg=dcg / ideal if ideal else 0.0,
        rr=1.0 / first if first else 0.0,
        recall=sum(r is not None for r in ranks) / len(targets) if targets else 0.0,
        first_hit=first,
        target_ranks=tuple(ranks),
    )


def file_targets(targets: Sequence[Target]) -> tuple[Target, ...]:
    """The files of `targets`, each once and whole: a question graded by file, as the
    dev sets grade theirs (any result of a target's file is a hit)."""
    return tuple(Target(path) for path in dict.fromkeys(t.path for t in targets))


def by_file_ndcg(runs: Sequence[QueryRun], k: int) -> float:
    """Mean NDCG@k of `runs` with each query's targets graded by file."""
    if not runs:
        return float("nan")
    return statistics.fmean(
        score_results(r.results, file_targets(r.query.targets), k).ndcg for r in runs
    )


def percentile(values: Sequence[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, math.ceil(p / 100 * len(ordered)) - 1))
    return ordered[index]


# --- systems ----------------------------------------------------------------------------


class System(Protocol):
    name: str

    def search(self, query: str, k: int) -> list[RankedChunk]: ...


class StreamSubsetSearcher(Searcher):
    """The shipped Searcher with only some of its streams (an ablation)."""

    def __init__(
        self,
        conn: apsw.Connection,
        settings: SearchSettings,
        streams: Collection[str],
        embedder: Embedder | None = None,
        vector_index: VectorIndex | None = None,
    ) -> None:
        super().__init__(conn, settings, embedder, vector_index=vector_index)
        self.keep = frozenset(streams)
        known = {s.name for s in super()._streams()}
        unknown = self.keep - known
        if unknown:
            raise ValueError(
                f"unknown stream(s) {', '.join(sorted(unknown))}; the Searcher runs "
                f"{', '.join(sorted(known))}"
            )

    def _streams(self) -> list[Stream]:
        return [s for s in super()._streams() if s.name in self.keep]


SearcherFactory = Callable[[apsw.Connection, SearchSettings, Embedder | None], Searcher]


@dataclass(frozen=True, slots=True)
class SearchConfig:
    """One named row of the ablation table.

    `streams` keeps only those Searcher streams (None: all of them, as shipped);
    `overrides` replaces SearchSettings fields; `factory`, when given, builds the
    Searcher itself (for ranking priors or new streams in a subclass). Vectors are
    searched in memory as the language server does (`resident`), loaded before the
    first query; `resident=False` asks sqlite-vec's exact kNN, as one-shot CLI
    searches do.
    """

    name: str
    description: str
    streams: tuple[str, ...] | None = None
    overrides: dict[str, Any] = field(default_factory=dict)
    factory: SearcherFactory | None = None
    resident: bool = True

    def build(
        self, conn: apsw.Connection, settings: SearchSettings, embedder: Embedder | None
    ) -> Searcher:
        tuned = replace(settings, **self.overrides) if self.overrides else settings
        if self.factory is not None:
            return self.factory(conn, tuned, embedder)
        vectors = VectorIndex() if self.resident and embedder is not None else None
        searcher = (
            Searcher(conn, tuned, embedder, vector_index=vectors)
            if self.streams is None
            else StreamSubsetSearcher(conn, tuned, self.streams, embedder, vectors)
        )
        searcher.load_vectors()
        return searcher


SHIPPED = "codesift"
# Rows for ranking priors, tuned weights or new streams; they run after the stream
# ablations on every corpus. A row whose overrides name a SearchSettings field this
# codesift does not have is left out.
_PRIORS = ("prior_definition", "prior_tests", "prior_path", "prior_path_short", "prior_headers")
# What bench/fit_ranking.py found on the generated set's train split (2026-12-05), and
# the part of it that changes fusion only.
FITTED_FUSION = {
    "rrf_k": 20,
    "weight_symbol": 0.6,
    "weight_feedback": 0.9,
    "symbol_threshold": 0.5,
}
FITTED = {**FITTED_FUSION, "file_diversity": 1.0, "prior_tests": False, "prior_path_short": False}
EXTRA_CONFIGS: list[SearchConfig] = [
    SearchConfig(
        "no priors", "ranking priors off (plain RRF)", overrides={p: False for p in _PRIORS}
    ),
    # A prior on by default is left out; one off by default is added.
    *[
        SearchConfig(
            f"- {p.removeprefix('prior_')} prior",
            f"every prior but {p}",
            overrides={p: False},
        )
        if getattr(SearchSettings(), p)
        else SearchConfig(
            f"+ {p.removeprefix('prior_')} prior",
            f"the shipped priors plus {p} (off by default)",
            overrides={p: True},
        )
        for p in _PRIORS
    ],
    SearchConfig(
        "fitted (train)",
        "every setting bench/fit_ranking.py changed on the generated set's train split",
        overrides=FITTED,
    ),
    SearchConfig(
        "fitted fusion",
        "the fitted fusion settings only (rrf_k, weight_symbol, weight_feedback, symbol_threshold)",
        overrides=FITTED_FUSION,
    ),
    SearchConfig(
        "- file evidence",
        "no lift from other matching chunks of the same file",
        overrides={"file_evidence": 0.0},
    ),
    SearchConfig(
        "- file evidence yield",
        "file evidence applies even when one chunk matches the question far better than any other",
        overrides={"file_evidence_yield": 0.0},
    ),
    SearchConfig(
        "- file diversity",
        "results ordered by score alone, however many come from one file",
        overrides={"file_diversity": 1.0},
    ),
    SearchConfig(
        "no priors, no file ranking",
        "plain RRF: priors, file evidence and file diversity off",
        overrides={**{p: False for p in _PRIORS}, "file_evidence": 0.0, "file_diversity": 1.0},
    ),
    SearchConfig(
        "- feedback",
        "no feedback stream (without vectors, the words of the first results' best"
        " chunks are not searched)",
        overrides={"feedback_terms": 0},
    ),
    SearchConfig(
        "- feedback keeps first",
        "the feedback stream ranks by its own words alone (not the first pass's best result first)",
        overrides={"feedback_keeps_first": False},
    ),
    SearchConfig(
        "doc weight 1.0", "doc sections weighted like code", overrides={"weight_doc": 1.0}
    ),
    *(
        SearchConfig(
            f"vector weight {w}",
            f"the vector stream weighted {w} against 1.0 for the lexical one (shipped: 0.8)",
            overrides={"weight_vector": w},
        )
        for w in (0.5, 0.7, 1.0)
    ),
    SearchConfig(
        "lexical max_df 0.5",
        "the lexical stream scores every term found in fewer than half the code chunks "
        "(shipped: a twentieth)",
        overrides={"lexical_max_df": 0.5},
    ),
    SearchConfig(
        "lexical max_df 0.1",
        "the lexical stream leaves out only terms found in a tenth of the code chunks "
        "(the default before 2026-11-30)",
        overrides={"lexical_max_df": 0.1},
    ),
    SearchConfig(
        "batch-model queries",
        "queries embedded by the batch model, as the chunks are (float32 products, two "
        "threads), instead of the int8 query encoder",
        factory=lambda conn, tuned, embedder: _with_vectors(
            Searcher(conn, tuned, _batch_model_queries(embedder), vector_index=VectorIndex())
        ),
    ),
    SearchConfig(
        "other-model queries",
        "queries embedded by the other model than the chunks' (static chunk vectors with "
        "MiniLM int8 queries, or MiniLM chunk vectors with static queries): both live in "
        "MiniLM's space",
        factory=lambda conn, tuned, embedder: _with_vectors(
            Searcher(conn, tuned, _other_model_queries(embedder), vector_index=VectorIndex())
        ),
    ),
    SearchConfig(
        "sqlite-vec kNN",
        "vectors searched by sqlite-vec's exact kNN (one-shot CLI searches) instead of "
        "the in-memory copy (the language server)",
        resident=False,
    ),
]


_BATCH_QUERY_EMBEDDERS: dict[tuple[Path, int, int], Embedder] = {}


def _batch_model_queries(embedder: Embedder | None) -> Embedder | None:
    """An Embedder like `embedder` whose queries run on the batch model (one per
    model folder, reused across corpora)."""
    if embedder is None:
        return None
    key = (embedder.cache_dir, embedder.max_tokens, embedder.batch_size)
    if key not in _BATCH_QUERY_EMBEDDERS:
        _BATCH_QUERY_EMBEDDERS[key] = Embedder(
            embedder.cache_dir,
            max_tokens=embedder.max_tokens,
            batch_size=embedder.batch_size,
            quantized_queries=False,
            model=embedder.model,
        )
    return _BATCH_QUERY_EMBEDDERS[key]


_OTHER_MODEL_EMBEDDERS: dict[tuple[Path, int, str], Embedder] = {}


def _other_model_queries(embedder: Embedder | None) -> Embedder | None:
    """An Embedder of the other model than `embedder`'s (static <-> minilm), for its
    queries only (one per model, reused across corpora)."""
    if embedder is None:
        return None
    other = "minilm" if embedder.model == "static" else "static"
    key = (embedder.cache_dir, embedder.max_tokens, other)
    if key not in _OTHER_MODEL_EMBEDDERS:
        _OTHER_MODEL_EMBEDDERS[key] = Embedder(
            embedder.cache_dir, max_tokens=embedder.max_tokens, model=other
        )
    return _OTHER_MODEL_EMBEDDERS[key]


def _with_vectors(searcher: Searcher) -> Searcher:
    searcher.load_vectors()
    return searcher


def setting_config(item: str) -> SearchConfig:
    """The row `--setting KEY=VALUE[,KEY=VALUE...]` asks for: the shipped Searcher with
    those SearchSettings fields changed (each value parsed as its field's type)."""
    types = {f.name: f.type for f in fields(SearchSettings)}
    overrides: dict[str, Any] = {}
    for pair in item.split(","):
        key, sep, raw = pair.partition("=")
        if not sep or key not in types:
            raise SystemExit(
                f"--setting {item!r}: expected KEY=VALUE with KEY one of {sorted(types)}"
            )
        kind = str(types[key])
        value: Any
        if "bool" in kind:
            value = raw.strip().lower() in ("1", "true", "yes", "on")
        elif "int" in kind:
            value = int(raw)
        elif "float" in kind:
            value = float(raw)
        else:
            value = raw
        overrides[key] = value
    changed = ", ".join(f"search.{k} = {v}" for k, v in overrides.items())
    return SearchConfig(item, f"the shipped Searcher with {changed}", overrides=overrides)


def search_configs(streams: Sequence[str]) -> list[SearchConfig]:
    """The shipped Searcher, each of its streams alone, each left out, then EXTRA_CONFIGS."""
    configs = [SearchConfig(SHIPPED, "the Searcher as shipped: all streams fused (RRF)")]
    configs += [SearchConfig(f"{s} only", f"only the {s} stream", streams=(s,)) for s in streams]
    if len(streams) > 2:
        configs += [
            SearchConfig(
                f"all - {s}",
                f"every stream but {s}",
                streams=tuple(x for x in streams if x != s),
            )
            for s in streams
        ]
    known = {f.name for f in fields(SearchSettings)}
    return configs + [
        c
        for c in EXTRA_CONFIGS
        if set(c.overrides) <= known and (c.resident or "vector" in streams)
    ]


def searcher_streams(
    conn: apsw.Connection, settings: SearchSettings, embedder: Embedder | None
) -> list[str]:
    """The streams the shipped Searcher runs with this index and embedder."""
    return [s.name for s in Searcher(conn, settings, embedder)._streams()]


class CodesiftSystem:
    def __init__(self, config: SearchConfig, searcher: Searcher) -> None:
        self.name = config.name
        self.searcher = searcher

    def search(self, query: str, k: int) -> list[RankedChunk]:
        response = self.searcher.search(SearchRequest(query=query, top_k=k))
        return [
            RankedChunk(
                r.path,
                r.start_line,
                r.end_line,
                r.kind,
                r.qualified_name,
                r.layer,
                tuple((h.stream, h.rank, round(h.score, 4)) for h in r.provenance),
            )
            for r in response.results
        ]


_WORDS = re.compile(r"\w+")


def plain_tokens(text: str) -> list[str]:
    """Lower-case word split, no stemming, no stopwords."""
    return _WORDS.findall(text.lower())


def split_tokens(text: str) -> list[str]:
    """Each word lower-cased, followed by its identifier parts when it is compound."""
    out: list[str] = []
    for word in _WORDS.findall(text):
        lower = word.lower()
        out.append(lower)
        parts = split_identifier(word)
        if len(parts) > 1:
            out.extend(parts)
    return out


Tokenizer = Callable[[str], list[str]]


@dataclass(frozen=True, slots=True)
class Window:
    path: str
    start_line: int
    end_line: int


class WindowBM25:
    """BM25 (bm25s, Lucene variant, k1=1.5, b=0.75) over fixed line windows of files."""

    def __init__(self, name: str, tokenize: Tokenizer) -> None:
        self.name = name
        self.tokenize = tokenize
        self.windows: list[Window] = []
        self.build_seconds = 0.0
        self._retriever: Any = None

    def build(self, root: Path, paths: Iterable[str], lines_per_window: int) -> None:
        import bm25s  # type: ignore[import-untyped]

        started = time.perf_counter()
        tokens: list[list[str]] = []
        for rel in paths:
            try:
                text = (root / rel).read_bytes().decode("utf-8", errors="replace")
            except OSError:
                continue
            lines = text.splitlines()
            for start in range(0, max(len(lines), 1), lines_per_window):
                piece = lines[start : start + lines_per_window]
                self.windows.append(Window(rel, start + 1, start + max(len(piece), 1)))
                tokens.append(self.tokenize("\n".join(piece)))
        retriever = bm25s.BM25()
        retriever.index(tokens, show_progress=False)
        self._retriever = retriever
        self.build_seconds = time.perf_counter() - started

    def search(self, query: str, k: int) -> list[RankedChunk]:
        scores = np.asarray(self._retriever.get_scores(self.tokenize(query)))
        if scores.size == 0:
            return []
        top = np.argpartition(-scores, min(k, scores.size - 1))[:k]
        ordered = sorted((int(i) for i in top if scores[i] > 0), key=lambda i: (-scores[i], i))
        out: list[RankedChunk] = []
        for i in ordered:
            w = self.windows[i]
            out.append(
                RankedChunk(
                    w.path,
                    w.start_line,
                    w.end_line,
                    "window",
                    "",
                    "window",
                    (("bm25", len(out) + 1, round(float(scores[i]), 4)),),
                )
            )
        return out


BM25_VARIANTS: list[tuple[str, Tokenizer]] = [
    ("bm25 50-line windows", plain_tokens),
    ("bm25 50-line windows + identifier split", split_tokens),
]


# --- indexing ---------------------------------------------------------------------------


def sources_digest(parts: Sequence[str]) -> str:
    digest = hashlib.blake2b(digest_size=8)
    package = SERVER_DIR / "codesift"
    for part in parts:
        base = package / part
        files = sorted(base.rglob("*")) if base.is_dir() else [base]
        for path in files:
            if path.suffix in (".py", ".scm") and path.is_file():
                digest.update(path.relative_to(package).as_posix().encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()


@dataclass(slots=True)
class IndexReport:
    db_path: Path
    files: int = 0
    nodes: int = 0
    chunks: int = 0
    by_language: dict[str, int] = field(default_factory=dict)
    indexed_this_run: int = 0
    seconds: float = 0.0
    rebuilt: str = ""  # why the database was rebuilt, if it was
    vectors: str = "off"  # vector coverage when --embed, else "off"
    problems: list[str] = field(default_factory=list)


# Databases are bench/.data/db/<DB_PREFIX>-<corpus>.db (--db-prefix keeps runs of
# different checkouts apart).
DB_PREFIX = "quality"


def _shown_path(path: Path) -> str:
    """A path as results show it: relative to the repository when near it."""
    return os.path.relpath(path, REPO_DIR) if path.is_absolute() else str(path)


# The embedding model and layers of --embed runs (--model, --embed-layers; None: the
# settings' defaults).
EMBED_MODEL: str | None = None
EMBED_LAYERS: list[str] | None = None


def corpus_settings(corpus: Corpus, db_path: Path) -> Settings:
    overrides: dict[str, Any] = {
        "index": {
            "db_path": str(db_path),
            "excluded_dirs": WHOLE_TREE_EXCLUDED_DIRS,
            "output_dirs": [],
        }
    }
    if EMBED_MODEL is not None:
        overrides.setdefault("embedding", {})["model"] = EMBED_MODEL
    if EMBED_LAYERS is not None:
        overrides.setdefault("embedding", {})["layers"] = EMBED_LAYERS
    return load_settings(corpus.root, overrides)


def _remove_db(db_path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db_path}{suffix}").unlink(missing_ok=True)


def _force_reindex(conn: apsw.Connection) -> None:
    """Make the next run re-read, re-parse and rewrite every file, as a cold build
    would, while keeping the database: chunk ids are stable, so the vectors of chunks
    whose text did not change stay valid and need no re-embedding."""
    with conn:
        conn.execute("UPDATE files SET mtime_ns = -1, content_hash = ''")
        conn.execute("DELETE FROM skipped_files")


def index_corpus(
    corpus: Corpus, queries: Sequence[DevQuery], keep_stale: bool, fresh: bool
) -> tuple[apsw.Connection, Settings, IndexReport]:
    DB_DIR.mkdir(parents=True, exist_ok=True)
    db_path = (DB_DIR / f"{DB_PREFIX}-{corpus.name}.db").resolve()
    stamp_path = db_path.with_name(db_path.name + ".built")
    digest = sources_digest(INDEXING_SOURCES)
    report = IndexReport(db_path)
    reindex = False
    if db_path.exists() and fresh:
        log(f"{corpus.name}: deleting {db_path} (--fresh-index)")
        _remove_db(db_path)
        report.rebuilt = "--fresh-index"
    elif db_path.exists():
        built = json.loads(stamp_path.read_text()) if stamp_path.is_file() else {}
        if built.get("indexing_sources") != digest:
            reason = (
                "indexing sources changed since it was built"
                if built
                else "no record of the sources it was built with"
            )
            if keep_stale:
                log(f"{corpus.name}: keeping {db_path} although {reason} (--keep-stale-index)")
            else:
                log(f"{corpus.name}: re-indexing every file of {db_path}: {reason}")
                reindex = True
                report.rebuilt = reason
    settings = corpus_settings(corpus, db_path)
    conn = open_database(db_path)
    if reindex:
        _force_reindex(conn)
    action = "updating" if report.rebuilt == "" and db_path.stat().st_size > 100_000 else "building"
    log(f"{corpus.name}: {action} the index {db_path} of {corpus.root}")
    last = [time.perf_counter()]

    def on_progress(event: IndexProgress) -> None:
        now = time.perf_counter()
        if event.phase in ("resolving", "done") or now - last[0] >= 15:
            last[0] = now
            log(f"    {event.phase} {event.done}/{event.total} {event.path}")

    summary = Indexer(corpus.root, settings, conn).run(progress=on_progress)
    stamp_path.write_text(json.dumps({"indexing_sources": digest, "at": time.time()}) + "\n")
    report.indexed_this_run = summary.indexed
    report.seconds = summary.seconds
    report.files = int(scalar(conn, "SELECT count(*) FROM files"))
    report.nodes = int(scalar(conn, "SELECT count(*) FROM nodes"))
    report.chunks = int(scalar(conn, "SELECT count(*) FROM chunks"))
    report.by_language = {
        str(lang): int(n)
        for lang, n in conn.execute(
            "SELECT language, count(*) FROM files GROUP BY language ORDER BY 2 DESC"
        )
    }
    log(
        f"{corpus.name}: {report.files:,} files ({_languages(report.by_language)}), "
        f"{report.nodes:,} nodes, {report.chunks:,} chunks; "
        f"{summary.indexed:,} (re)indexed in {summary.seconds:.1f} s"
    )
    report.problems = check_index(conn, corpus, queries)
    for problem in report.problems:
        log(f"{corpus.name}: WARNING: {problem}")
    return conn, settings, report


def _languages(by_language: dict[str, int], top: int = 4) -> str:
    items = list(by_language.items())
    shown = ", ".join(f"{lang} {n:,}" for lang, n in items[:top])
    return shown + (f", +{len(items) - top} more" if len(items) > top else "")


def indexed_paths(conn: apsw.Connection) -> list[str]:
    return [str(r[0]) for r in conn.execute("SELECT path FROM files ORDER BY path")]


def check_index(conn: apsw.Connection, corpus: Corpus, queries: Sequence[DevQuery]) -> list[str]:
    """Every sentinel file and every target path must be in the index."""
    paths = set(indexed_paths(conn))
    problems = [f"sentinel {s} is not indexed" for s in corpus.sentinels if s not in paths]
    targets = sorted({t.path for q in queries for t in q.targets})
    missing = [t for t in targets if not any(p == t or p.endswith("/" + t) for p in paths)]
    if missing:
        problems.append(f"{len(missing)} target file(s) not indexed: {', '.join(missing[:8])}")
    if len(paths) < 100:
        problems.append(f"only {len(paths)} files indexed")
    return problems


# --- evaluation -------------------------------------------------------------------------


@dataclass(slots=True)
class QueryRun:
    query: DevQuery
    results: list[RankedChunk]
    score: QueryScore
    ms: float


@dataclass(slots=True)
class SystemRun:
    system: str
    corpus: str
    runs: list[QueryRun] = field(default_factory=list)
    error: str | None = None


def evaluate(system: System, queries: Sequence[DevQuery], k: int) -> SystemRun:
    out = SystemRun(system.name, queries[0].corpus if queries else "")
    system.search("warm up the caches", k)
    for query in queries:
        t0 = time.perf_counter()
        results = system.search(query.text, k)
        ms = (time.perf_counter() - t0) * 1000
        out.runs.append(QueryRun(query, results, score_results(results, query.targets, k), ms))
    return out


@dataclass(frozen=True, slots=True)
class Aggregate:
    n: int
    ndcg: float
    mrr: float
    recall: float
    zero_hit: int  # queries with no target in the top k

    @staticmethod
    def of(runs: Sequence[QueryRun]) -> Aggregate:
        if not runs:
            return Aggregate(0, float("nan"), float("nan"), float("nan"), 0)
        return Aggregate(
            len(runs),
            statistics.fmean(r.score.ndcg for r in runs),
            statistics.fmean(r.score.rr for r in runs),
            statistics.fmean(r.score.recall for r in runs),
            sum(r.score.first_hit is None for r in runs),
        )


_TEST_PART = re.compile(r"(^|/)(tests?|testdata|testing|__tests__|spec|benches|idlelib)/")
_TEST_FILE = re.compile(
    r"(^|/)(test_[^/]*\.py|[^/]*_test\.go|tests\.rs|[^/]*\.(test|spec)\.[jt]sx?)$"
)


def is_test_path(path: str) -> bool:
    """Tests, test data and benches (and Python's idlelib, never a devset target)."""
    return bool(_TEST_PART.search(path) or _TEST_FILE.search(path))


def composition(runs: Sequence[QueryRun]) -> dict[str, float]:
    """What the top-k results are made of, over all queries (shares of results)."""
    results = [r for run in runs for r in run.results]
    firsts = [run.results[0] for run in runs if run.results]
    if not results:
        return {}
    n = len(results)
    return {
        "results": float(n),
        "test": sum(is_test_path(r.path) for r in results) / n,
        "module": sum(r.kind == "module" for r in results) / n,
        "doc": sum(r.layer == "doc" for r in results) / n,
        "summary": sum(r.layer == "summary" for r in results) / n,
        "line_windows": sum(r.kind == "text" for r in results) / n,
        "first_is_test": sum(is_test_path(r.path) for r in firsts) / max(len(firsts), 1),
    }


def deep_ranks(searcher: Searcher, run: QueryRun, k: int) -> list[int | None]:
    """Where the shipped Searcher ranks each target within DEEP_K (None: deeper)."""
    if all(r is not None for r in run.score.target_ranks):
        return list(run.score.target_ranks)
    system = CodesiftSystem(SearchConfig("deep", ""), searcher)
    return target_ranks(system.search(run.query.text, max(DEEP_K, k)), run.query.targets)


# --- one corpus -------------------------------------------------------------------------


@dataclass(slots=True)
class CorpusResult:
    corpus: Corpus
    queries: list[DevQuery]
    index: IndexReport
    systems: list[SystemRun] = field(default_factory=list)
    streams: list[str] = field(default_factory=list)  # the shipped Searcher's streams
    bm25_windows: int = 0
    bm25_build_seconds: dict[str, float] = field(default_factory=dict)
    deep: dict[int, list[int | None]] = field(default_factory=dict)  # query index -> ranks


def embed_corpus(conn: apsw.Connection, settings: Settings, report: IndexReport) -> Embedder:
    """Compute the missing vectors of the layers settings.embedding names (slow: ~30-100
    chunks/s on 2 cores); the vectors stay in the database for the next run."""
    layers = settings.embedding.layers
    embedder = Embedder(
        DATA_DIR / "embedding-cache",
        max_tokens=settings.embedding.max_tokens,
        batch_size=settings.embedding.batch_size,
        quantized_queries=settings.embedding.quantized_queries,
        model=settings.embedding.model,
    )
    before = vector_coverage(conn, layers, embedder.model_id)
    missing = before.embeddable - before.embedded
    log(f"    vectors: {before.embedded:,} of {before.embeddable:,} {'+'.join(layers)} chunks")
    if missing:
        started = time.perf_counter()
        last = [started]

        def on_progress(done: int, total: int) -> None:
            now = time.perf_counter()
            if now - last[0] >= 30 or done == total:
                last[0] = now
                rate = done / max(now - started, 1e-9)
                log(f"    embedded {done:,}/{total:,} ({rate:.0f} chunks/s)")

        fill_vectors(
            conn,
            embedder,
            layers=layers,
            batch_size=settings.embedding.batch_size,
            progress=on_progress,
        )
    after = vector_coverage(conn, layers)
    report.vectors = f"{after.embedded:,}/{after.embeddable:,} ({'+'.join(layers)})"
    return embedder


def run_corpus(
    corpus: Corpus,
    only: Collection[str],
    k: int,
    with_bm25: bool,
    keep_stale: bool,
    fresh: bool,
    embed: bool,
    styles: Collection[str] = ("long", "short"),
) -> CorpusResult:
    queries = load_queries(corpus, styles)
    conn, settings, report = index_corpus(corpus, queries, keep_stale, fresh)
    result = CorpusResult(corpus, queries, report)
    try:
        embedder = embed_corpus(conn, settings, report) if embed else None
        streams = result.streams = searcher_streams(conn, settings.search, embedder)
        configs = [c for c in search_configs(streams) if not only or c.name in only]
        log(
            f"{corpus.name}: streams {', '.join(streams)}; configurations: "
            f"{', '.join(c.name for c in configs)}"
        )
        shipped: Searcher | None = None
        for config in configs:
            searcher = config.build(conn, settings.search, embedder)
            if config.name == SHIPPED:
                shipped = searcher
            run = evaluate(CodesiftSystem(config, searcher), queries, k)
            if searcher is not shipped:
                searcher.close()  # its worker connections; the shipped one is used below
            result.systems.append(run)
            agg = Aggregate.of(run.runs)
            log(
                f"{corpus.name}: {config.name:<24} NDCG@{k} {agg.ndcg:.3f}  MRR {agg.mrr:.3f}  "
                f"recall {agg.recall:.3f}  p50 {percentile([r.ms for r in run.runs], 50):.0f} ms"
            )
        if shipped is not None:
            main = next(s for s in result.systems if s.system == SHIPPED)
            for i, qrun in enumerate(main.runs):
                result.deep[i] = deep_ranks(shipped, qrun, k)
        if with_bm25:
            paths = indexed_paths(conn)
            for name, tokenize in BM25_VARIANTS:
                bm25 = WindowBM25(name, tokenize)
                bm25.build(corpus.root, paths, WINDOW_LINES)
                result.bm25_windows = len(bm25.windows)
                result.bm25_build_seconds[name] = bm25.build_seconds
                run = evaluate(bm25, queries, k)
                result.systems.append(run)
                agg = Aggregate.of(run.runs)
                log(
                    f"{corpus.name}: {name:<24} NDCG@{k} {agg.ndcg:.3f}  MRR {agg.mrr:.3f}  "
                    f"recall {agg.recall:.3f}  ({len(bm25.windows):,} windows, built in "
                    f"{bm25.build_seconds:.1f} s)"
                )
                del bm25
    finally:
        conn.close()
    return result


# --- reports ----------------------------------------------------------------------------


def _fmt(value: float, digits: int = 3) -> str:
    return "-" if math.isnan(value) else f"{value:.{digits}f}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def system_names(results: Sequence[CorpusResult]) -> list[str]:
    names: list[str] = []
    for res in results:
        for run in res.systems:
            if run.system not in names:
                names.append(run.system)
    return names


def runs_of(results: Sequence[CorpusResult], system: str) -> list[QueryRun]:
    return [q for res in results for run in res.systems if run.system == system for q in run.runs]


def suites_of(results: Sequence[CorpusResult]) -> list[str]:
    present = {q.suite for res in results for q in res.queries}
    return [x for x in SUITES if x in present]


def _suite_categories(results: Sequence[CorpusResult], suite: str) -> list[str]:
    present = {q.category for res in results for q in res.queries if q.suite == suite}
    return [c for c in CATEGORIES if c in present]


def overview_table(results: Sequence[CorpusResult], k: int) -> list[str]:
    """Every system on every query suite side by side: NDCG@k overall and per category."""
    suites = suites_of(results)
    header = ["system"]
    for suite in suites:
        n = sum(q.suite == suite for res in results for q in res.queries)
        header += [f"{suite} ({n})", *(f"{c[:4]}." for c in _suite_categories(results, suite))]
    header += ["no hit", "p50 ms"]
    rows: list[list[str]] = []
    for name in system_names(results):
        runs = runs_of(results, name)
        row = [f"**{name}**" if name == SHIPPED else name]
        for suite in suites:
            sub = [r for r in runs if r.query.suite == suite]
            row.append(f"**{_fmt(Aggregate.of(sub).ndcg)}**")
            row += [
                _fmt(Aggregate.of([r for r in sub if r.query.category == c]).ndcg)
                for c in _suite_categories(results, suite)
            ]
        agg = Aggregate.of(runs)
        row += [f"{agg.zero_hit}/{agg.n}", _fmt(percentile([r.ms for r in runs], 50), 1)]
        rows.append(row)
    return _table(header, rows)


def systems_table(results: Sequence[CorpusResult], k: int, suite: str | None = None) -> list[str]:
    """One suite's figures per system (all suites when None); a column per corpus when
    the suite has at most six corpora."""
    chosen = [res for res in results if suite is None or any(q.suite == suite for q in res.queries)]
    corpora = [res.corpus.name for res in chosen] if len(chosen) <= 6 else []
    header = [
        "system",
        f"NDCG@{k} all",
        *CATEGORIES,
        *corpora,
        f"MRR@{k}",
        f"recall@{k}",
        "no hit",
        "p50 ms",
        "p95 ms",
    ]
    rows: list[list[str]] = []
    for name in system_names(chosen):
        runs = [r for r in runs_of(chosen, name) if suite is None or r.query.suite == suite]
        agg = Aggregate.of(runs)
        by_cat = [Aggregate.of([r for r in runs if r.query.category == c]).ndcg for c in CATEGORIES]
        by_corpus = [Aggregate.of([r for r in runs if r.query.corpus == c]).ndcg for c in corpora]
        ms = [r.ms for r in runs]
        label = f"**{name}**" if name == SHIPPED else name
        rows.append(
            [
                label,
                f"**{_fmt(agg.ndcg)}**",
                *[_fmt(v) for v in by_cat],
                *[_fmt(v) for v in by_corpus],
                _fmt(agg.mrr),
                _fmt(agg.recall),
                f"{agg.zero_hit}/{agg.n}",
                _fmt(percentile(ms, 50), 1),
                _fmt(percentile(ms, 95), 1),
            ]
        )
    return _table(header, rows)


def corpus_category_table(results: Sequence[CorpusResult], system: str, k: int) -> list[str]:
    header = [
        "corpus",
        "language",
        "suite",
        "queries",
        *CATEGORIES,
        f"NDCG@{k}",
        f"MRR@{k}",
        f"recall@{k}",
        "no hit",
    ]
    rows: list[list[str]] = []
    for res in results:
        all_runs = [q for run in res.systems if run.system == system for q in run.runs]
        for suite in suites_of([res]):
            runs = [r for r in all_runs if r.query.suite == suite]
            agg = Aggregate.of(runs)
            cells = []
            for c in CATEGORIES:
                sub = Aggregate.of([r for r in runs if r.query.category == c])
                cells.append(f"{_fmt(sub.ndcg)} ({sub.n})" if sub.n else "-")
            rows.append(
                [
                    res.corpus.name,
                    res.corpus.language,
                    suite,
                    str(agg.n),
                    *cells,
                    f"**{_fmt(agg.ndcg)}**",
                    _fmt(agg.mrr),
                    _fmt(agg.recall),
                    str(agg.zero_hit),
                ]
            )
    return _table(header, rows)


def language_table(results: Sequence[CorpusResult], systems: Sequence[str], k: int) -> list[str]:
    """NDCG@k per language and suite for the named systems, weakest (first suite of the
    first system) first."""
    suites = suites_of(results)
    languages = sorted({res.corpus.language for res in results})
    present = set(system_names(results))
    systems = [s for s in systems if s in present]
    header = ["language", *(f"{name}: {suite}" for name in systems for suite in suites)]

    def value(name: str, suite: str, language: str) -> float:
        runs = [
            r
            for r in runs_of(results, name)
            if r.query.suite == suite and r.query.language == language
        ]
        return Aggregate.of(runs).ndcg

    def sort_key(language: str) -> float:
        values = [value(systems[0], suite, language) for suite in suites] if systems else []
        known = [v for v in values if not math.isnan(v)]
        return statistics.fmean(known) if known else 0.0

    rows = [
        [lang, *(_fmt(value(name, suite, lang)) for name in systems for suite in suites)]
        for lang in sorted(languages, key=sort_key)
    ]
    return _table(header, rows)


def composition_table(results: Sequence[CorpusResult], systems: Sequence[str]) -> list[str]:
    header = [
        "system",
        "corpus",
        "results",
        "test/bench files",
        "first result a test",
        "module chunks",
        "doc sections",
        "summary layer",
        "line windows (no grammar)",
    ]
    rows: list[list[str]] = []
    for name in systems:
        for res in results:
            runs = [q for run in res.systems if run.system == name for q in run.runs]
            comp = composition(runs)
            if not comp:
                continue
            rows.append(
                [
                    name,
                    res.corpus.name,
                    f"{int(comp['results']):,}",
                    f"{comp['test']:.0%}",
                    f"{comp['first_is_test']:.0%}",
                    f"{comp['module']:.0%}",
                    f"{comp['doc']:.0%}",
                    f"{comp['summary']:.0%}",
                    f"{comp['line_windows']:.0%}",
                ]
            )
    return _table(header, rows)


def misranking_table(results: Sequence[CorpusResult], system: str, k: int) -> list[str]:
    """Evidence for what pushes targets down: per corpus, among the queries whose first
    hit is not at rank 1, how many have a test file, a doc section or a module chunk
    ranked above it (anywhere in the top k when nothing hits), and how many a single
    stream alone ranks better than the fusion."""
    header = [
        "corpus",
        "queries",
        "first hit not at 1",
        "test file above",
        "doc section above",
        "module chunk above",
        "a single stream ranks it better",
    ]
    rows: list[list[str]] = []
    inf = k + 1
    for res in results:
        main = next((s for s in res.systems if s.system == system), None)
        if main is None:
            continue
        singles = [s for s in res.systems if s.system.endswith(" only")]
        counts: Counter[str] = Counter()
        better: Counter[str] = Counter()
        for i, run in enumerate(main.runs):
            first = run.score.first_hit
            if first == 1:
                continue
            counts["not first"] += 1
            above = run.results[: first - 1] if first else run.results[:k]
            counts["test"] += any(is_test_path(r.path) for r in above)
            counts["doc"] += any(r.layer == "doc" for r in above)
            counts["module"] += any(r.kind == "module" for r in above)
            winners = [
                s.system.removesuffix(" only")
                for s in singles
                if (s.runs[i].score.first_hit or inf) < (first or inf)
            ]
            counts["better"] += bool(winners)
            better.update(winners)
        detail = ", ".join(f"{name} {n}" for name, n in better.most_common())
        rows.append(
            [
                res.corpus.name,
                str(len(main.runs)),
                str(counts["not first"]),
                str(counts["test"]),
                str(counts["doc"]),
                str(counts["module"]),
                f"{counts['better']}" + (f" ({detail})" if detail else ""),
            ]
        )
    return _table(header, rows)


def corpora_table(results: Sequence[CorpusResult]) -> list[str]:
    header = [
        "corpus",
        "root",
        "files indexed",
        "languages (files)",
        "nodes",
        "chunks",
        "index run",
        "vectors",
        "BM25 windows",
    ]
    rows: list[list[str]] = []
    for res in results:
        idx = res.index
        root = str(res.corpus.root)
        root = root.replace(str(REPO_DIR) + "/", "")
        run = f"{idx.indexed_this_run:,} files, {idx.seconds:.0f} s"
        if idx.rebuilt == "--fresh-index":
            run += " (fresh database)"
        elif idx.rebuilt:
            run += " (all re-indexed: sources changed)"
        rows.append(
            [
                res.corpus.name,
                f"`{root}`",
                f"{idx.files:,}",
                _languages(idx.by_language, 3),
                f"{idx.nodes:,}",
                f"{idx.chunks:,}",
                run,
                idx.vectors,
                f"{res.bm25_windows:,}" if res.bm25_windows else "-",
            ]
        )
    return _table(header, rows)


def _result_label(r: RankedChunk) -> str:
    streams = ",".join(f"{s}#{rank}" for s, rank, _ in r.provenance)
    name = f" {r.name}" if r.name and r.name != r.path else ""
    return f"{r.path}:{r.start_line}-{r.end_line} [{r.layer}/{r.kind}{name}] ({streams})"


def worst_queries(res: CorpusResult, k: int, count: int = 10) -> list[Json]:
    main = next((s for s in res.systems if s.system == SHIPPED), None)
    if main is None:
        return []
    order = sorted(
        range(len(main.runs)),
        key=lambda i: (main.runs[i].score.ndcg, -(main.runs[i].score.first_hit or k + 1)),
    )
    out: list[Json] = []
    for i in order[:count]:
        run = main.runs[i]
        first = run.score.first_hit
        above = run.results[: (first - 1) if first else 5]
        out.append(
            {
                "query": run.query.text,
                "suite": run.query.suite,
                "category": run.query.category,
                "ndcg": round(run.score.ndcg, 3),
                "targets": [
                    {"target": t.label(), "rank": r}
                    for t, r in zip(run.query.targets, res.deep.get(i, []), strict=False)
                ],
                "above": [_result_label(r) for r in above],
            }
        )
    return out


def print_worst(res: CorpusResult, k: int) -> None:
    worst = worst_queries(res, k)
    if not worst:
        return
    log(f"\n== {res.corpus.name}: the 10 worst queries ({SHIPPED}) ==")
    for item in worst:
        ranks = "; ".join(
            f"{t['target']} @ {t['rank'] if t['rank'] is not None else f'>{DEEP_K}'}"
            for t in item["targets"]
        )
        log(
            f"- [{item['suite']}, {item['category']}] {item['query']!r}  "
            f"NDCG {item['ndcg']}  targets: {ranks}"
        )
        for line in item["above"]:
            log(f"      above: {line}")


def dump_queries(res: CorpusResult, k: int) -> Path:
    path = DATA_DIR / f"{DB_PREFIX}-{res.corpus.name}.jsonl"
    main = next((s for s in res.systems if s.system == SHIPPED), None)
    reference = main or (res.systems[0] if res.systems else None)
    with path.open("w", encoding="utf-8") as out:
        if reference is None:
            return path
        for i, run in enumerate(reference.runs):
            first_by_system: dict[str, int | None] = {}
            ndcg_by_system: dict[str, float] = {}
            by_file: dict[str, float] = {}  # a generated question graded by file
            for system in res.systems:
                other = system.runs[i]
                first_by_system[system.system] = other.score.first_hit
                ndcg_by_system[system.system] = round(other.score.ndcg, 4)
                if run.query.devset == GENERATED:
                    by_file[system.system] = round(by_file_ndcg([other], k), 4)
            record = {
                "query": run.query.text,
                "suite": run.query.suite,
                "category": run.query.category,
                "system": reference.system,
                "targets": [t.label() for t in run.query.targets],
                "ndcg": round(run.score.ndcg, 4),
                "first_hit_rank": run.score.first_hit,
                "target_ranks": list(run.score.target_ranks),
                f"target_ranks_within_{DEEP_K}": res.deep.get(i),
                "ms": round(run.ms, 2),
                "results": [
                    {
                        "rank": rank,
                        "path": r.path,
                        "lines": [r.start_line, r.end_line],
                        "kind": r.kind,
                        "name": r.name,
                        "layer": r.layer,
                        "provenance": [
                            {"stream": s, "rank": sr, "score": sc} for s, sr, sc in r.provenance
                        ],
                        "hit": any(
                            t.matches(r.path, r.start_line, r.end_line) for t in run.query.targets
                        ),
                    }
                    for rank, r in enumerate(run.results, start=1)
                ],
                "first_hit_by_system": first_by_system,
                "ndcg_by_system": ndcg_by_system,
                **({"ndcg_by_file_by_system": by_file} if by_file else {}),
            }
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


def machine_info() -> Json:
    mem_kib = 0
    cpu = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_kib = int(line.split()[1])
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(REPO_DIR), *args], capture_output=True, text=True, check=False
        )
        return done.stdout.strip()

    nproc = subprocess.run(["nproc"], capture_output=True, text=True, check=False).stdout.strip()
    from runinfo import server_changes  # its lines unstripped: the first path kept whole

    dirty = server_changes()
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": git("rev-parse", "--short", "HEAD"),
        "dirty": dirty,
        "sources": sources_digest(("",)),
        "nproc": nproc or str(os.cpu_count()),
        "mem_gib": mem_kib / 1024**2,
        "cpu": cpu,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": platform.platform(),
        "load": os.getloadavg(),
    }


def markdown_section(
    results: Sequence[CorpusResult], machine: Json, load_end: Sequence[float], k: int
) -> str:
    n_queries = sum(len(res.queries) for res in results)
    streams = list(dict.fromkeys(s for res in results for s in res.streams))
    vector_note = (
        ""
        if "vector" in streams
        else "; the vector stream is off: run with --embed to compute vectors and include it"
    )
    dirty = " (plus uncommitted changes in server/)" if machine["dirty"] else ""
    lines = [
        f"<!-- {SECTION}:begin -->",
        "## Search quality (`bench/quality.py`)"
        if SECTION == "quality"
        else "## Search quality on the generated set (`bench/quality.py --devset gen`)",
        "",
        f"Run {machine['date']} at commit `{machine['commit']}`{dirty}, codesift sources "
        f"`{machine['sources']}`; machine: nproc {machine['nproc']}, "
        f"{machine['mem_gib']:.1f} GiB RAM, {machine['cpu']}; {machine['python']}; load "
        f"average {'/'.join(f'{x:.2f}' for x in machine['load'])} at start, "
        f"{'/'.join(f'{x:.2f}' for x in load_end)} at end.",
        "",
        (
            f"Dev sets `{_shown_path(DEVSET_DIR)}` (set 1) and `{_shown_path(DEVSET2_DIR)}` (set "
            "2; `short`: its search-box rewrites of the semantic and architecture queries, "
            "same targets)"
            if SECTION == "quality"
            else "The generated set of `bench/docset.py` (bench/docset/README.md; `gen train` "
            "and `gen held-out`: sentence and symbol questions, `short`: 3-4 words)"
        )
        + f": {n_queries} queries on {len(results)} corpora, "
        "each indexed whole (only `.git` and `.codesift` excluded; node_modules, vendor, tests are "
        f"distractors). Metric as its README defines it: NDCG@{k} with binary gains over "
        "relevant + secondary targets, a target hit at the first result chunk whose path "
        "matches and whose lines overlap its span; MRR and recall over the same hits; "
        "'no hit' counts queries with no target in the top "
        f"{k}. Latency is the wall time of one `Searcher.search` (top_k={k}) in-process, on "
        "a warm index, on a shared 2-core machine.",
        "",
        "### Corpora",
        "",
        *corpora_table(results),
        "",
    ]
    notes = [f"{res.corpus.name}: {res.corpus.note}" for res in results if res.corpus.note]
    problems = [f"{res.corpus.name}: {p}" for res in results for p in res.index.problems]
    if notes or problems:
        lines += [*(f"- {x}" for x in notes + problems), ""]
    lines += [
        f"### NDCG@{k} by system",
        "",
        f"`{SHIPPED}` is the Searcher as shipped (streams {', '.join(streams)} fused by RRF"
        f"{vector_note}); `X only` / `all - X` replace `Searcher._streams()` with a subset "
        f"(ablation). BM25 rows: `bm25s` (Lucene BM25, k1 1.5, b 0.75) over {WINDOW_LINES}-line "
        "windows of exactly the indexed files, query and text split into lower-case words "
        "(no stemming, no stopwords); `+ identifier split` adds each compound identifier's "
        "parts (`codesift.tokens.split_identifier`). Other rows: "
        + "; ".join(f"`{c.name}`: {c.description}" for c in EXTRA_CONFIGS)
        + ".",
        "",
        *overview_table(results, k),
        "",
        *(
            line
            for suite in suites_of(results)
            for line in [f"#### {suite}", "", *systems_table(results, k, suite), ""]
        ),
        f"### NDCG@{k} by language (weakest first)",
        "",
        *language_table(results, [SHIPPED, BM25_VARIANTS[1][0]], k),
        "",
        f"### `{SHIPPED}` by corpus and category (NDCG@{k}, query count)",
        "",
        *corpus_category_table(results, SHIPPED, k),
        "",
        f"### What the top {k} is made of",
        "",
        "Shares of all returned results. Test/bench files: paths under test/, tests/, "
        "testdata/, testing/, __tests__/, spec/, benches/, idlelib/ or named test_*.py, "
        "*_test.go, tests.rs, *.test.js / *.spec.ts (never devset targets).",
        "",
        *composition_table(results, [SHIPPED, BM25_VARIANTS[1][0]]),
        "",
        f"### What ranks above the target (`{SHIPPED}`)",
        "",
        "Queries whose first hit is not at rank 1, by what sits above it (in the whole top "
        f"{k} when nothing hits); the last column counts queries that one stream alone "
        "(the `X only` rows) ranks better than the fusion, by stream.",
        "",
        *misranking_table(results, SHIPPED, k),
        "",
        f"Per-query dumps (targets, top-{k} with provenance, first-hit rank per system, rank "
        f"of missed targets within {DEEP_K}): `bench/.data/quality-<corpus>.jsonl`.",
        f"<!-- {SECTION}:end -->",
    ]
    return "\n".join(lines) + "\n"


def write_section(out: Path, section: str) -> None:
    text = out.read_text(encoding="utf-8") if out.exists() else "# Benchmark results\n"
    pattern = re.compile(rf"<!-- {SECTION}:begin -->.*?<!-- {SECTION}:end -->\n?", re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _: section, text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    out.write_text(text, encoding="utf-8")


def suite_figures(
    sub: Sequence[QueryRun],
    results: Sequence[CorpusResult],
    ndcg_of: Callable[[Sequence[QueryRun]], float],
) -> dict[str, float]:
    """One suite's NDCG: overall, by category, by language and by corpus."""
    figures = {"all": ndcg_of(sub)}
    for c in CATEGORIES:
        figures[c] = ndcg_of([r for r in sub if r.query.category == c])
    for lang in sorted({r.query.language for r in sub}):
        figures[f"lang:{lang}"] = ndcg_of([r for r in sub if r.query.language == lang])
    for res in results:
        mine = [r for r in sub if r.query.corpus == res.corpus.name]
        if mine:
            figures[res.corpus.name] = ndcg_of(mine)
    return figures


def result_json(results: Sequence[CorpusResult], machine: Json, k: int) -> Json:
    systems: Json = {}
    for name in system_names(results):
        runs = runs_of(results, name)
        entry: Json = {"all": asdict(Aggregate.of(runs))}
        for suite in suites_of(results):
            sub = [r for r in runs if r.query.suite == suite]
            entry[suite] = suite_figures(sub, results, lambda rs: Aggregate.of(rs).ndcg)
            if sub and sub[0].query.devset == GENERATED:
                # The generated set graded by file too: the dev sets' terms.
                entry[f"{suite} by file"] = suite_figures(
                    sub, results, lambda rs: by_file_ndcg(rs, k)
                )
        ms = [r.ms for r in runs]
        entry["p50_ms"], entry["p95_ms"] = percentile(ms, 50), percentile(ms, 95)
        systems[name] = entry
    return {
        "machine": machine,
        "k": k,
        "systems": systems,
        "corpora": {
            res.corpus.name: {
                "root": str(res.corpus.root),
                "files": res.index.files,
                "chunks": res.index.chunks,
                "problems": res.index.problems,
                "worst": worst_queries(res, k),
            }
            for res in results
        },
    }


# --- main -------------------------------------------------------------------------------


def docset_names(splits: Collection[str]) -> list[str]:
    """The generated set's packages in the named splits (its manifest's order)."""
    from docset import load_manifest

    try:
        packages = load_manifest()["packages"]
    except FileNotFoundError as exc:
        raise SystemExit(str(exc)) from exc
    return [str(p["name"]) for p in packages if p["split"] in splits]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--devset",
        choices=("1", "2", "all", "gen"),
        default="all",
        help="which development set's corpora to run: 1, 2, all (both) or gen, the "
        "generated set of bench/docset.py (default: %(default)s)",
    )
    parser.add_argument(
        "--split",
        choices=("train", "held-out", "both"),
        default="both",
        help="the generated set's split to run (default: %(default)s; tuning reads train)",
    )
    parser.add_argument(
        "--queries",
        choices=("long", "short", "both"),
        default="both",
        help="dev set 2's long queries, its short search-box rewrites, or both "
        "(default: %(default)s; dev set 1 has only long ones)",
    )
    parser.add_argument(
        "--short",
        action="store_const",
        dest="queries",
        const="short",
        help="dev set 2's short queries only (same as --queries short)",
    )
    parser.add_argument(
        "--corpus",
        action="append",
        choices=(*CORPUS_NAMES, *DEVSET2_NAMES, *DOCSET_NAMES),
        help="corpus to run (repeatable; default: every corpus of --devset)",
    )
    parser.add_argument("--top-k", type=int, default=10, help="results per query and metric cut")
    parser.add_argument(
        "--config",
        action="append",
        metavar="NAME",
        help=f"search configuration to run (repeatable; default: all): {SHIPPED}, "
        "'<stream> only', 'all - <stream>' or an EXTRA_CONFIGS name",
    )
    vectors = parser.add_mutually_exclusive_group()
    vectors.add_argument(
        "--no-vectors",
        dest="embed",
        action="store_false",
        default=False,
        help="lexical and symbol streams only, no embedding (the default)",
    )
    vectors.add_argument(
        "--embed",
        action="store_true",
        help="compute missing vectors (settings.embedding.layers) and run the vector "
        "stream; slow the first time on a large corpus",
    )
    parser.add_argument(
        "--setting",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="also run the shipped Searcher with this search setting changed, as a row "
        "named KEY=VALUE (repeatable; e.g. weight_vector=0.9)",
    )
    parser.add_argument("--no-bm25", action="store_true", help="skip the BM25 baselines")
    parser.add_argument(
        "--keep-stale-index",
        action="store_true",
        help="reuse a database even if the indexing sources changed since it was built",
    )
    parser.add_argument(
        "--fresh-index",
        action="store_true",
        help="delete each database and build it from scratch (vectors included)",
    )
    parser.add_argument("--write", action="store_true", help=f"update the {SECTION} section")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results markdown file")
    parser.add_argument(
        "--db-prefix",
        default=DB_PREFIX,
        help="databases are bench/.data/db/<prefix>-<corpus>.db, per-query dumps "
        "bench/.data/<prefix>-<corpus>.jsonl (default: %(default)s)",
    )
    parser.add_argument(
        "--model",
        choices=("static", "minilm"),
        help="embedding.model of --embed runs (default: the settings' default); vectors of"
        " another model in a database are computed again",
    )
    parser.add_argument(
        "--embed-layers",
        help="embedding.layers of --embed runs, comma-separated (default: the settings')",
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    global DB_PREFIX, EMBED_MODEL, EMBED_LAYERS, GEN_SPLITS, SECTION
    args = parse_args(argv)
    if args.devset == "gen":
        SECTION = "quality-gen"  # its own section of --out, beside the dev sets'

    GEN_SPLITS = ("train", "held-out") if args.split == "both" else (args.split,)
    DB_PREFIX = args.db_prefix
    EMBED_MODEL = args.model
    EMBED_LAYERS = args.embed_layers.split(",") if args.embed_layers else None
    k = args.top_k
    if not 1 <= k <= 200:
        raise SystemExit("--top-k must be between 1 and 200")
    if args.corpus:
        names = list(args.corpus)
    else:
        names = [
            *(CORPUS_NAMES if args.devset in ("1", "all") else ()),
            *(DEVSET2_NAMES if args.devset in ("2", "all") else ()),
            *(docset_names(GEN_SPLITS) if args.devset == "gen" else ()),
        ]
    styles = ("long", "short") if args.queries == "both" else (args.queries,)
    for item in args.setting:
        EXTRA_CONFIGS.append(setting_config(item))
    only = set(args.config or ())
    if only:
        only |= set(args.setting)
    machine = machine_info()
    log(
        f"codesift quality at {machine['commit']} (sources {machine['sources']}); "
        f"corpora: {', '.join(names)}; k={k}; vector stream "
        f"{'on (--embed)' if args.embed else 'off (no --embed)'}"
        + ("" if args.no_bm25 else f"; baselines: {', '.join(n for n, _ in BM25_VARIANTS)}")
    )
    results: list[CorpusResult] = []
    skipped: list[str] = []
    for name in names:
        log(f"\n== {name} ==")
        try:
            corpus = docset_corpus(name) if name in DOCSET_NAMES else prepare_corpus(name, log)
        except CorpusUnavailable as exc:
            log(f"SKIPPING {name}: {exc}")
            skipped.append(name)
            continue
        started = time.perf_counter()
        results.append(
            run_corpus(
                corpus,
                only,
                k,
                not args.no_bm25,
                args.keep_stale_index,
                args.fresh_index,
                args.embed,
                styles,
            )
        )
        log(f"{name}: done in {time.perf_counter() - started:.0f} s")
    if not results:
        log("no corpus could be obtained; nothing to report")
        return 1
    load_end = os.getloadavg()

    for res in results:
        print_worst(res, k)
        dump_queries(res, k)
    log("")
    for line in [
        *corpora_table(results),
        "",
        *overview_table(results, k),
        "",
        *(
            line
            for suite in suites_of(results)
            for line in ["", suite, *systems_table(results, k, suite)]
        ),
        "",
        *language_table(results, [SHIPPED, BM25_VARIANTS[1][0]], k),
        "",
        *corpus_category_table(results, SHIPPED, k),
        "",
        *composition_table(results, [SHIPPED, BM25_VARIANTS[1][0]]),
        "",
        *misranking_table(results, SHIPPED, k),
    ]:
        log(line)
    if skipped:
        log(f"\nskipped corpora: {', '.join(skipped)}")
    gen = "-gen" if SECTION == "quality-gen" else ""  # the generated set's summary apart
    last_json = DATA_DIR / f"{DB_PREFIX}{gen}-last.json"
    last_json.write_text(json.dumps(result_json(results, machine, k), indent=1) + "\n")
    log(f"\nper-query dumps: {DATA_DIR}/{DB_PREFIX}-<corpus>.jsonl; summary: {last_json}")
    if args.write:
        section = markdown_section(results, machine, load_end, k)
        write_section(args.out, section)
        from runinfo import markdown_tables, write_results

        summary = result_json(results, machine, k)
        figures = {key: summary[key] for key in ("k", "systems", "corpora")}
        figures["tables"] = markdown_tables(section)
        path = write_results(
            SECTION,
            figures,
            machine_info={**machine, "load_end": load_end},
            drop=("root", "worst"),
        )
        log(f"wrote the {SECTION} section of {args.out} and {path.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
