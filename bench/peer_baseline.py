#!/usr/bin/env python3
"""The peer baseline of bench/quality.py: semble 0.7.0 on both development sets.

Run by hand from the repository root (with the project's interpreter):

    PYTHONPATH=server python bench/peer_baseline.py [--devset 1|2|all|gen] [--corpus NAME ...]
        [--files semble|codesift] [--rerun] [--top-k 10] [--write] [--out bench/RESULTS.md]

semble (PyPI `semble`, MIT) is a peer code-search library: BM25 over tree-sitter
chunks with identifier-aware tokens, fused with a static embedding model, then
code-aware reranking. It is used here as a black box through its own API; none of
its code is part of codesift.

1. A separate virtual environment, bench/.data/peer-venv, gets `semble==0.7.0` (and
   what it needs: model2vec, tree-sitter grammars...) from PyPI; codesift's
   environment is never touched.
2. semble's index loads its embedding model (`minishlab/potion-code-16M-v2`) from a
   model hub, which is out of reach offline. A stand-in model2vec `StaticModel` (a
   two-token vocabulary of constant vectors, saved under bench/.data/peer-model) is
   passed as its `model_path`, and every search runs with `alpha=0`: the semantic
   side's weight is 0, so only semble's BM25 and its code-aware ranking (definition
   and file-stem boosts, multi-chunk file boost, test/example/compat penalties,
   per-file decay) order the results.
3. Each corpus is obtained with bench/corpora.py's `prepare_corpus` (what quality.py
   extracted is reused) and indexed with `SembleIndex.from_path`, in that environment,
   by this same file run as `peer_baseline.py --runner JOB OUT`. semble's API takes no
   file list, so the peer's row (`--files semble`, the default) is its own file walk:
   code extensions only, its ignored folders (node_modules, build, dist...),
   .gitignore files, a 1 MB cap. `--files codesift` replaces semble's module-level
   walker for the run by exactly the files codesift indexed (the `files` table of
   bench/.data/db/quality-<corpus>.db, or codesift's discovery when that database is
   missing); chunking, tokenising, BM25 and ranking stay semble's.
4. Each query of dev set 1 and of dev set 2 (long and short) is searched once with
   top_k = k; the ranked results (path, start/end line, rank, score) are written to
   bench/.data/peer/<corpus>.json (bench/.data/peer-codesift-files/ for `--files
   codesift`) and re-read by later runs (`--rerun` recomputes them).
5. They are scored with bench/quality.py's own functions (same target rule, NDCG@k)
   and printed as quality.py's tables are: overall and per category for each suite
   (set 1, set 2 long, set 2 short), per language, per corpus. codesift's row comes
   from bench/.data/quality-last.json (what the last quality.py run wrote) for each
   suite that run covered on the same corpora, otherwise from the per-query dumps
   bench/.data/quality-<corpus>.jsonl (codesift's pages rescored the same way). The
   other file choice is shown as a second peer row when its results are cached.

With --write, the section between `<!-- peer:begin -->` and `<!-- peer:end -->` of
--out is replaced (added at the end when missing); the rest of the file is kept.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
DATA_DIR = BENCH_DIR / ".data"
PEER_VENV = DATA_DIR / "peer-venv"
PEER_MODEL = DATA_DIR / "peer-model"
PEER_CACHE = DATA_DIR / "peer-cache"  # semble's cache and savings stats, kept out of $HOME
PEER_VERSION = "0.7.0"
PEER_REQUIREMENT = f"semble=={PEER_VERSION}"
# Result folders and table rows per file choice: semble's own walk (the peer's row),
# and the files codesift indexed.
RESULT_DIRS = {"semble": DATA_DIR / "peer", "codesift": DATA_DIR / "peer-codesift-files"}
PEER_ROWS = {
    "semble": f"semble {PEER_VERSION} (BM25 + ranking, no model)",
    "codesift": f"semble {PEER_VERSION} on codesift's files (BM25 + ranking, no model)",
}
SECTION = "peer"
DEFAULT_OUT = BENCH_DIR / "RESULTS.md"

Json = dict[str, Any]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --- inside the peer's environment ---------------------------------------------------------


def _stand_in_model(folder: Path) -> Any:
    """A model2vec StaticModel that embeds every text alike (semble needs one to build
    its index; with alpha=0 its scores weigh nothing). Saved once, loaded by path."""
    import numpy as np
    from model2vec import StaticModel
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    if not (folder / "config.json").is_file():
        tokenizer = Tokenizer(WordLevel({"[UNK]": 0, "[PAD]": 1}, unk_token="[UNK]"))
        tokenizer.pre_tokenizer = Whitespace()
        vectors = np.ones((2, 8), dtype=np.float32)
        StaticModel(vectors, tokenizer, normalize=True).save_pretrained(str(folder))
    return StaticModel.from_pretrained(str(folder), force_download=False)


def runner(job_path: Path, out_path: Path) -> int:
    """Index one corpus with semble and search every query (run with the peer's
    interpreter). The job names the root, the files (None: semble's own walk), the
    queries and k."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ["SEMBLE_CACHE_LOCATION"] = str(PEER_CACHE)
    import semble
    import semble.index.create as create
    from semble import SembleIndex

    job: Json = json.loads(job_path.read_text(encoding="utf-8"))
    root = Path(job["root"]).resolve()
    files: list[str] | None = job["files"]
    _stand_in_model(PEER_MODEL)
    if files is not None:
        chosen = [root / f for f in files]

        def walk_files(
            walk_root: Path, extensions: Sequence[str], ignore: Sequence[str] | None = None
        ) -> Iterator[Path]:
            yield from (p for p in chosen if p.is_file())

        create.walk_files = walk_files  # the file list in place of semble's walk
    started = time.perf_counter()
    index = SembleIndex.from_path(root, model_path=str(PEER_MODEL))
    index_seconds = time.perf_counter() - started
    k = int(job["k"])
    index.search("warm up", top_k=k, alpha=0.0)
    queries: list[Json] = []
    for item in job["queries"]:
        t0 = time.perf_counter()
        found = index.search(item["query"], top_k=k, alpha=0.0)
        ms = (time.perf_counter() - t0) * 1000
        queries.append(
            {
                **item,
                "ms": round(ms, 2),
                "results": [
                    {
                        "rank": rank,
                        "path": r.chunk.file_path,
                        "start_line": r.chunk.start_line,
                        "end_line": r.chunk.end_line,
                        "score": round(float(r.score), 6),
                    }
                    for rank, r in enumerate(found, start=1)
                ],
            }
        )
    stats = index.stats
    out: Json = {
        "peer": f"semble {semble.__version__}",
        "corpus": job["corpus"],
        "files_mode": job["files_mode"],
        "k": k,
        "alpha": 0.0,
        "model": "stand-in model2vec StaticModel (2 tokens, constant vectors)",
        "files_given": None if files is None else len(files),
        "files_indexed": stats.indexed_files,
        "chunks": stats.total_chunks,
        "index_seconds": round(index_seconds, 2),
        "at": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "queries": queries,
    }
    out_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_path.with_suffix(".tmp")
    tmp.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    tmp.replace(out_path)
    return 0


# --- the peer's environment ------------------------------------------------------------------


def peer_python() -> Path:
    return PEER_VENV / "bin" / "python"


def ensure_peer_venv() -> Path:
    """bench/.data/peer-venv with semble==PEER_VERSION (created and installed once)."""
    python = peer_python()
    marker = PEER_VENV / ".installed"
    if python.is_file() and marker.is_file() and marker.read_text().strip() == PEER_REQUIREMENT:
        return python
    if not python.is_file():
        base = getattr(sys, "_base_executable", sys.executable)
        log(f"creating {PEER_VENV} ({base} -m venv)")
        subprocess.run([base, "-m", "venv", str(PEER_VENV)], check=True)
    log(f"installing {PEER_REQUIREMENT} into {PEER_VENV} (PyPI)")
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", PEER_REQUIREMENT],
        check=True,
    )
    check = subprocess.run(
        [str(python), "-c", "import semble; print(semble.__version__)"],
        capture_output=True,
        text=True,
        check=True,
    )
    if check.stdout.strip() != PEER_VERSION:
        raise SystemExit(f"{PEER_VENV}: semble {check.stdout.strip()}, wanted {PEER_VERSION}")
    marker.write_text(PEER_REQUIREMENT + "\n")
    return python


# --- in codesift's environment: corpora, files, scoring, tables ------------------------------


def codesift_files(quality: Any, corpus: Any) -> tuple[list[str], str]:
    """The files codesift indexed for this corpus, and where the list came from."""
    db_path = DATA_DIR / "db" / f"quality-{corpus.name}.db"
    if db_path.is_file():
        import apsw

        conn = apsw.Connection(str(db_path), flags=apsw.SQLITE_OPEN_READONLY)
        try:
            paths = [str(r[0]) for r in conn.execute("SELECT path FROM files ORDER BY path")]
        finally:
            conn.close()
        if paths:
            return paths, f"files table of {db_path.relative_to(REPO_DIR)}"
    from codesift.workspace.discovery import discover_files

    settings = quality.corpus_settings(corpus, db_path)
    found = discover_files(corpus.root, settings.index)
    return sorted(f.path for f in found.files), "codesift's discovery (no database)"


def _query_key(style: str, text: str) -> tuple[str, str]:
    return (style, text)


def peer_results(
    quality: Any,
    corpus: Any,
    queries: Sequence[Any],
    k: int,
    files_mode: str,
    rerun: bool,
    cached_only: bool = False,
) -> Json | None:
    """The peer's ranked results for this corpus: re-read when computed before for the
    same queries, k and file choice; else computed once in the peer's environment."""
    out_path = RESULT_DIRS[files_mode] / f"{corpus.name}.json"
    wanted = {_query_key(q.style, q.text) for q in queries}
    if out_path.is_file() and not rerun:
        cached: Json = json.loads(out_path.read_text(encoding="utf-8"))
        have = {_query_key(q["style"], q["query"]) for q in cached["queries"]}
        if cached.get("k") == k and cached.get("files_mode") == files_mode and wanted <= have:
            log(f"{corpus.name}: re-reading {out_path.relative_to(REPO_DIR)}")
            return cached
    if cached_only:
        return None
    python = ensure_peer_venv()
    files: list[str] | None = None
    source = "semble's own file walk (defaults)"
    if files_mode == "codesift":
        files, source = codesift_files(quality, corpus)
    job: Json = {
        "corpus": corpus.name,
        "root": str(corpus.root),
        "files_mode": files_mode,
        "files": files,
        "k": k,
        "queries": [
            {"query": q.text, "style": q.style, "category": q.category, "suite": q.suite}
            for q in queries
        ],
    }
    job_path = out_path.with_suffix(".job.json")
    job_path.parent.mkdir(parents=True, exist_ok=True)
    job_path.write_text(json.dumps(job) + "\n", encoding="utf-8")
    log(
        f"{corpus.name}: indexing {corpus.root} with semble ({source}"
        + (f", {len(files):,} files" if files is not None else "")
        + f") and searching {len(queries)} queries"
    )
    started = time.perf_counter()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "SEMBLE_CACHE_LOCATION": str(PEER_CACHE)}
    env.pop("PYTHONPATH", None)
    subprocess.run(
        [str(python), str(Path(__file__).resolve()), "--runner", str(job_path), str(out_path)],
        check=True,
        env=env,
    )
    job_path.unlink(missing_ok=True)
    result: Json = json.loads(out_path.read_text(encoding="utf-8"))
    result["files_source"] = source
    out_path.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    log(
        f"{corpus.name}: {result['files_indexed']:,} files, {result['chunks']:,} chunks, "
        f"indexed in {result['index_seconds']:.1f} s; all in {time.perf_counter() - started:.0f} s"
    )
    return result


def scored_runs(
    quality: Any, queries: Sequence[Any], pages: dict[tuple[str, str], Json], k: int
) -> list[Any]:
    """quality.QueryRun per query: the page's results scored by quality.score_results."""
    runs: list[Any] = []
    for q in queries:
        page = pages[_query_key(q.style, q.text)]
        results = [
            quality.RankedChunk(str(r["path"]), int(r["start_line"]), int(r["end_line"]))
            for r in page["results"]
        ]
        runs.append(
            quality.QueryRun(q, results, quality.score_results(results, q.targets, k), page["ms"])
        )
    return runs


def codesift_dump_runs(
    quality: Any, corpus: Any, queries: Sequence[Any], k: int
) -> list[Any] | None:
    """codesift's pages from quality.py's per-query dump of this corpus, rescored."""
    path = DATA_DIR / f"quality-{corpus.name}.jsonl"
    if not path.is_file():
        return None
    pages: dict[tuple[str, str], Json] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("system") != quality.SHIPPED:
            return None
        style = "short" if str(record["suite"]).endswith("short") else "long"
        pages[_query_key(style, record["query"])] = {
            "ms": record.get("ms", 0.0),
            "results": [
                {"path": r["path"], "start_line": r["lines"][0], "end_line": r["lines"][1]}
                for r in record["results"]
            ],
        }
    if any(_query_key(q.style, q.text) not in pages for q in queries):
        return None
    return scored_runs(quality, queries, pages, k)


Figures = dict[str, dict[str, float]]  # suite -> "all" | category | "lang:X" | corpus -> NDCG


def figures_of(quality: Any, corpus_runs: Sequence[tuple[Any, list[Any]]], k: int) -> Figures:
    """NDCG@k in quality-last.json's layout, through quality.result_json itself."""
    results = [
        quality.CorpusResult(
            corpus,
            [r.query for r in runs],
            quality.IndexReport(Path()),
            [quality.SystemRun("peer", corpus.name, runs)],
        )
        for corpus, runs in corpus_runs
    ]
    entry: Json = quality.result_json(results, {}, k)["systems"]["peer"]
    return {suite: dict(values) for suite, values in entry.items() if isinstance(values, dict)}


def _fmt(value: float | None) -> str:
    return "-" if value is None or value != value else f"{value:.3f}"


def _delta(a: float | None, b: float | None) -> str:
    if a is None or b is None or a != a or b != b:
        return "-"
    return f"{a - b:+.3f}"


def _table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


CATEGORIES = ("semantic", "architecture", "symbol")


def overview_table(
    mine: Figures,
    peers: Sequence[tuple[str, Figures]],
    suites: Sequence[str],
    counts: dict[str, int],
) -> list[str]:
    """Per suite NDCG@k overall and per category: codesift, each peer row, and codesift
    minus each peer row."""
    header = ["system"]
    for suite in suites:
        header += [f"{suite} ({counts[suite]})", "sem.", "arch.", "sym."]
    keys = ("all", *CATEGORIES)

    def cells(figures: Figures, suite: str) -> list[str]:
        values = figures.get(suite, {})
        return [f"**{_fmt(values.get('all'))}**", *(_fmt(values.get(c)) for c in CATEGORIES)]

    rows = [["**codesift**", *(c for suite in suites for c in cells(mine, suite))]]
    rows += [[name, *(c for suite in suites for c in cells(f, suite))] for name, f in peers]
    if mine:
        for name, peer in peers:
            rows.append(
                [
                    f"codesift - {name}",
                    *(
                        _delta(mine.get(suite, {}).get(key), peer.get(suite, {}).get(key))
                        for suite in suites
                        for key in keys
                    ),
                ]
            )
    return _table(header, rows)


def split_table(
    label: str,
    keys: Sequence[tuple[str, str]],
    mine: Figures,
    peers: Sequence[tuple[str, Figures]],
    suites: Sequence[str],
) -> list[str]:
    """One row per key (language or corpus): per suite codesift, the first peer row, the
    difference, then any other peer row."""
    header = [label]
    for suite in suites:
        header += [
            f"{suite}: codesift",
            "peer",
            "Δ",
            *(f"peer {i + 2}" for i in range(len(peers) - 1)),
        ]
    rows: list[list[str]] = []
    for shown, key in keys:
        row = [shown]
        for suite in suites:
            a = mine.get(suite, {}).get(key)
            values = [f.get(suite, {}).get(key) for _, f in peers]
            row += [_fmt(a), _fmt(values[0]), _delta(a, values[0]), *(_fmt(v) for v in values[1:])]
        rows.append(row)
    return _table(header, rows)


def report_suites(
    quality: Any, peer: Figures, corpus_queries: Sequence[tuple[Any, list[Any]]]
) -> tuple[list[str], dict[str, int]]:
    """The suites the page shows (the held-out split graded by file as well, where it
    was run) and each one's number of questions."""
    by_file = [f"{s} by file" for s in quality.SUITES if s.startswith("gen held-out")]
    suites = [s for s in (*quality.SUITES, *by_file) if s in peer]
    counts = {
        s: sum(q.suite == s.removesuffix(" by file") for _, qs in corpus_queries for q in qs)
        for s in suites
    }
    return suites, counts


def git_commit() -> str:
    done = subprocess.run(
        ["git", "-C", str(REPO_DIR), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip()


def parse_args(argv: Sequence[str] | None, quality: Any) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--devset",
        choices=("1", "2", "all", "gen"),
        default="all",
        help="dev set 1, 2, both, or gen: the generated set of bench/docset.py (its "
        "figures go to the peer-gen section)",
    )
    parser.add_argument(
        "--split",
        choices=("train", "held-out", "both"),
        default="both",
        help="the generated set's split (default: %(default)s)",
    )
    parser.add_argument(
        "--corpus",
        action="append",
        choices=(*quality.CORPUS_NAMES, *quality.DEVSET2_NAMES, *quality.DOCSET_NAMES),
        help="corpus to run (repeatable; default: every corpus of --devset)",
    )
    parser.add_argument(
        "--files",
        choices=("semble", "codesift"),
        default="semble",
        help="the peer row's files: semble's own default walk (default), or the files "
        "codesift indexed; the other choice is shown as a second row when its results "
        "are cached for every corpus",
    )
    parser.add_argument("--top-k", type=int, default=10, help="results per query and metric cut")
    parser.add_argument("--rerun", action="store_true", help="recompute cached peer results")
    parser.add_argument(
        "--codesift-json",
        type=Path,
        help="quality.py's summary that gives codesift's row (default: "
        "bench/.data/quality-last.json, quality-gen-last.json with --devset gen)",
    )
    parser.add_argument(
        "--write", action="store_true", help=f"replace the {SECTION} section of --out"
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results markdown file")
    return parser.parse_args(argv)


def load_quality() -> Any:
    for folder in (REPO_DIR / "server", BENCH_DIR):
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    import quality

    return quality


def _summary_note(summary_path: Path, machine: Json, figures: Figures) -> str:
    """Where codesift's row comes from: the summary file and its run."""
    dirty = " plus uncommitted changes" if machine.get("dirty") else ""
    resolved = summary_path.resolve()
    shown = (
        resolved.relative_to(REPO_DIR)
        if resolved.is_relative_to(REPO_DIR)
        else resolved  # a --codesift-json from elsewhere
    )
    return (
        f"{', '.join(figures)}: {shown} (quality.py run "
        f"{machine.get('date', '?')} at {machine.get('commit', '?')}{dirty})"
    )


def codesift_figures(
    quality: Any,
    summary_path: Path,
    corpus_queries: Sequence[tuple[Any, list[Any]]],
    suites: Sequence[str],
    k: int,
) -> tuple[Figures, list[str]]:
    """codesift's row: quality-last.json's suites, the per-query dumps for the others."""
    figures: Figures = {}
    notes: list[str] = []
    if summary_path.is_file():
        summary: Json = json.loads(summary_path.read_text(encoding="utf-8"))
        entry = summary.get("systems", {}).get(quality.SHIPPED, {})
        machine = summary.get("machine", {})
        if summary.get("k") == k:
            for suite in suites:
                values = entry.get(suite)
                asked = suite.removesuffix(" by file")  # graded by file: the same questions
                ours = {c.name for c, qs in corpus_queries if any(q.suite == asked for q in qs)}
                if not isinstance(values, dict):
                    continue
                theirs = {key for key in values if key not in ("all", *CATEGORIES)}
                theirs = {key for key in theirs if not key.startswith("lang:")}
                if theirs == ours:  # the same corpora, so the same queries
                    figures[suite] = {key: float(v) for key, v in values.items()}
            if figures:
                notes.append(_summary_note(summary_path, machine, figures))
    missing = [s for s in suites if s not in figures]
    if missing:
        corpus_runs = []
        for corpus, queries in corpus_queries:
            asked_suites = {m.removesuffix(" by file") for m in missing}
            wanted = [q for q in queries if q.suite in asked_suites]
            if not wanted:
                continue
            runs = codesift_dump_runs(quality, corpus, wanted, k)
            if runs is None:
                notes.append(f"{corpus.name}: no usable bench/.data/quality-{corpus.name}.jsonl")
                continue
            corpus_runs.append((corpus, runs))
        if corpus_runs:
            figures.update(
                {s: v for s, v in figures_of(quality, corpus_runs, k).items() if s in missing}
            )
            stamps = sorted(
                datetime.fromtimestamp(
                    (DATA_DIR / f"quality-{c.name}.jsonl").stat().st_mtime, UTC
                ).strftime("%Y-%m-%d %H:%M UTC")
                for c, _ in corpus_runs
            )
            notes.append(
                f"{', '.join(missing)}: codesift's pages in bench/.data/quality-<corpus>.jsonl "
                f"(written {stamps[0]} to {stamps[-1]}), rescored with quality.score_results"
            )
    return figures, notes


def run_peer(
    quality: Any,
    corpus_queries: Sequence[tuple[Any, list[Any]]],
    k: int,
    files_mode: str,
    rerun: bool,
    cached_only: bool,
) -> tuple[Figures, list[Json]] | None:
    """The peer's figures over these corpora (None when cached_only and one is missing)."""
    corpus_runs: list[tuple[Any, list[Any]]] = []
    meta: list[Json] = []
    for corpus, queries in corpus_queries:
        result = peer_results(quality, corpus, queries, k, files_mode, rerun, cached_only)
        if result is None:
            return None
        pages = {_query_key(q["style"], q["query"]): q for q in result["queries"]}
        runs = scored_runs(quality, queries, pages, k)
        corpus_runs.append((corpus, runs))
        meta.append(result)
        agg = quality.Aggregate.of(runs)
        log(f"{corpus.name}: {PEER_ROWS[files_mode]} NDCG@{k} {agg.ndcg:.3f} ({agg.n} queries)")
    return figures_of(quality, corpus_runs, k), meta


def indexes_table(quality: Any, metas: Sequence[tuple[str, list[Json]]]) -> list[str]:
    header = ["corpus"]
    for files_mode, _ in metas:
        tag = "semble's walk" if files_mode == "semble" else "codesift's files"
        header += [f"{tag}: files", "chunks", "index s", "query p50 ms"]
    rows: list[list[str]] = []
    for i, first in enumerate(metas[0][1]):
        row = [str(first["corpus"])]
        for _, meta in metas:
            m = meta[i]
            row += [
                f"{m['files_indexed']:,}",
                f"{m['chunks']:,}",
                f"{m['index_seconds']:.1f}",
                f"{quality.percentile([q['ms'] for q in m['queries']], 50):.1f}",
            ]
        rows.append(row)
    return _table(header, rows)


def write_section(out: Path, section: str) -> None:
    text = out.read_text(encoding="utf-8") if out.exists() else "# Benchmark results\n"
    pattern = re.compile(rf"<!-- {SECTION}:begin -->.*?<!-- {SECTION}:end -->\n?", re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _: section, text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    out.write_text(text, encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    quality = load_quality()
    args = parse_args(argv, quality)
    global SECTION
    if args.devset == "gen":
        SECTION = "peer-gen"
    if args.codesift_json is None:
        gen = "-gen" if args.devset == "gen" else ""
        args.codesift_json = DATA_DIR / f"quality{gen}-last.json"
    quality.GEN_SPLITS = ("train", "held-out") if args.split == "both" else (args.split,)
    k = args.top_k
    names = list(args.corpus or [])
    if not names:
        names = [
            *(quality.CORPUS_NAMES if args.devset in ("1", "all") else ()),
            *(quality.DEVSET2_NAMES if args.devset in ("2", "all") else ()),
            *(quality.docset_names(quality.GEN_SPLITS) if args.devset == "gen" else ()),
        ]
    machine = quality.machine_info()
    corpus_queries: list[tuple[Any, list[Any]]] = []
    for name in names:
        try:
            corpus = (
                quality.docset_corpus(name)
                if name in quality.DOCSET_NAMES
                else quality.prepare_corpus(name, log)
            )
        except quality.CorpusUnavailable as exc:
            log(f"SKIPPING {name}: {exc}")
            continue
        corpus_queries.append((corpus, quality.load_queries(corpus)))
    if not corpus_queries:
        log("no corpus could be obtained; nothing to report")
        return 1
    other = "codesift" if args.files == "semble" else "semble"
    peers: list[tuple[str, Figures]] = []
    metas: list[tuple[str, list[Json]]] = []
    for files_mode, cached_only in ((args.files, False), (other, True)):
        done = run_peer(quality, corpus_queries, k, files_mode, args.rerun, cached_only)
        if done is not None:
            peers.append((PEER_ROWS[files_mode], done[0]))
            metas.append((files_mode, done[1]))
    suites, counts = report_suites(quality, peers[0][1], corpus_queries)
    mine, notes = codesift_figures(quality, args.codesift_json, corpus_queries, suites, k)
    languages = sorted({c.language for c, _ in corpus_queries})
    dirty = " (plus uncommitted changes in server/)" if machine["dirty"] else ""
    peer_names = "; ".join(
        f"peer{'' if i == 0 else f' {i + 1}'}: {name}" for i, (name, _) in enumerate(peers)
    )
    lines = [
        f"<!-- {SECTION}:begin -->",
        "## Peer baseline (`bench/peer_baseline.py"
        + (" --devset gen" if args.devset == "gen" else "")
        + "`)",
        "",
        f"Run {machine['date']} at commit `{machine['commit']}`{dirty}; machine: nproc "
        f"{machine['nproc']}, {machine['mem_gib']:.1f} GiB RAM, {machine['cpu']}; "
        f"{machine['python']}. `PYTHONPATH=server python bench/peer_baseline.py"
        + ("" if args.files == "semble" else f" --files {args.files}")
        + "` installs `semble==0.7.0` (MIT, PyPI) into its own environment "
        "(bench/.data/peer-venv), indexes each corpus with `SembleIndex.from_path` and "
        f"searches each query once with `top_k={k}`, `alpha=0`: its embedding model "
        "(loaded from a model hub, out of reach offline) is replaced by a stand-in "
        "model2vec `StaticModel`, so only its BM25 and its code-aware ranking order the "
        "results. Its ranked results are cached in `bench/.data/peer/<corpus>.json` "
        "(semble's own file walk: code extensions, its ignored folders, .gitignore, 1 MB "
        "cap; semble's API takes no file list) and `bench/.data/peer-codesift-files/` "
        "(its walker replaced by the files codesift indexed), and scored with "
        f"bench/quality.py's `score_results` (NDCG@{k}, the dev sets' target rule)"
        + (
            "; `by file`: the held-out split graded by file as the dev sets grade theirs "
            "(any result of a target's file a hit), beside the definitions' lines."
            if args.devset == "gen"
            else "."
        ),
        "",
        *(f"- codesift row, {n}" for n in notes),
        f"- {peer_names}.",
        "",
        f"### NDCG@{k}, overall and by category",
        "",
        *overview_table(mine, peers, suites, counts),
        "",
        f"### NDCG@{k} by language",
        "",
        *split_table("language", [(x, f"lang:{x}") for x in languages], mine, peers, suites),
        "",
        f"### NDCG@{k} by corpus",
        "",
        *split_table("corpus", [(c.name, c.name) for c, _ in corpus_queries], mine, peers, suites),
        "",
        "### Peer indexes",
        "",
        *indexes_table(quality, metas),
        f"<!-- {SECTION}:end -->",
    ]
    section = "\n".join(lines) + "\n"
    print(section)
    if args.write:
        write_section(args.out, section)
        from runinfo import markdown_tables, write_results

        write_results(SECTION, {"tables": markdown_tables(section)})
        log(f"wrote the {SECTION} section of {args.out} and bench/results/{SECTION}.json")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--runner":
        sys.exit(runner(Path(sys.argv[2]), Path(sys.argv[3])))
    sys.exit(main())
