"""CPU time of one search, and its pages kept for comparison.

Runs every dev-set question through the shipped Searcher on the indexes that
bench/quality.py built (`--db-prefix`, the same databases; nothing is indexed
here), and measures each search's CPU time: `time.process_time` around
`Searcher.search`, which counts every thread of the process (the stream
workers too). Prints the median and the 90th percentile per corpus and over all.

`--dump FILE` writes every page as JSON lines (the full response, timing fields
left out); `--compare FILE` checks the pages against such a file and fails on
the first that differs, so a change meant to cost less CPU can show that it
returns the same pages, byte for byte. `--profile FILE` writes a cProfile of
the searches (`python -m pstats FILE`).

    PYTHONPATH=server python bench/search_cpu.py --devset all --dump before.jsonl
    PYTHONPATH=server python bench/search_cpu.py --devset all --compare before.jsonl
"""

from __future__ import annotations

import argparse
import cProfile
import json
import statistics
import sys
import time
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

from codesift.engine.results import result_json
from codesift.retrieval.request import SearchRequest, SearchResponse
from codesift.retrieval.search import Searcher
from codesift.store.database import open_database
from corpora import CORPUS_NAMES, DB_DIR, DEVSET2_NAMES, prepare_corpus
from quality import corpus_settings, load_queries, setting_config

TIMING = ("took_ms", "stages")


def page_json(response: SearchResponse) -> str:
    """The page as JSON without its timings (the same data otherwise)."""
    data: dict[str, Any] = asdict(response)
    for key in TIMING:
        data.pop(key, None)
    for stream in data["streams"]:
        stream.pop("ms", None)
    data["results"] = [result_json(r) for r in response.results]
    data["resources"] = [result_json(r) for r in response.resources]
    return json.dumps(data, sort_keys=True)


def _parts(response: SearchResponse) -> dict[str, float]:
    """Wall ms of each stream and stage; `rank` without the feedback stream it runs."""
    out = {f"stream {r.stream}": r.ms for r in response.streams}
    feedback = out.get("stream feedback", 0.0)
    for stage, spent in response.stages.items():
        out[f"stage {stage}"] = spent - feedback if stage == "rank" else spent
    return out


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    names = args.corpus or [
        *(CORPUS_NAMES if args.devset in ("1", "all") else ()),
        *(DEVSET2_NAMES if args.devset in ("2", "all") else ()),
    ]
    expected: dict[tuple[str, str], str] = {}
    if args.compare:
        for line in Path(args.compare).read_text().splitlines():
            item = json.loads(line)
            expected[(item["corpus"], item["query"])] = item["page"]
    dumped: list[str] = []
    profile = cProfile.Profile() if args.profile else None
    all_ms: list[float] = []
    parts: dict[str, list[float]] = {}
    differ = 0
    compared = 0
    for name in names:
        corpus = prepare_corpus(name, log)
        db_path = (DB_DIR / f"{args.db_prefix}-{name}.db").resolve()
        if not db_path.exists():
            log(f"{name}: no index {db_path} (build it with bench/quality.py first)")
            return 2
        queries = load_queries(corpus)
        settings = corpus_settings(corpus, db_path)
        conn = open_database(db_path)
        search_settings = settings.search
        if args.setting:
            search_settings = replace(search_settings, **setting_config(args.setting).overrides)
        searcher = Searcher(conn, search_settings, parallel=not args.sequential)
        searcher.search(SearchRequest(query="warm up the caches", top_k=args.top_k))
        ms: list[float] = []
        for query in queries:
            request = SearchRequest(query=query.text, top_k=args.top_k)
            best = float("inf")
            for _ in range(args.repeat):
                if profile is not None:
                    profile.enable()
                t0 = time.process_time()
                response = searcher.search(request)
                spent = (time.process_time() - t0) * 1000
                if profile is not None:
                    profile.disable()
                best = min(best, spent)
            ms.append(best)
            for name_ms, spent in _parts(response).items():
                parts.setdefault(name_ms, []).append(spent)
            page = page_json(response)
            key = (name, query.text)
            dumped.append(json.dumps({"corpus": name, "query": query.text, "page": page}))
            if key in expected:
                compared += 1
                if expected[key] != page:
                    differ += 1
                    log(f"{name}: the page of {query.text!r} differs")
        searcher.close()
        conn.close()
        all_ms.extend(ms)
        log(
            f"{name}: {len(ms)} questions, CPU-ms a search median {statistics.median(ms):.2f}, "
            f"p90 {statistics.quantiles(ms, n=10)[-1]:.2f}"
        )
    if args.dump:
        Path(args.dump).write_text("".join(f"{line}\n" for line in dumped))
    if profile is not None:
        profile.dump_stats(args.profile)
    print(
        f"{len(all_ms)} questions over {len(names)} corpora: CPU-ms a search median "
        f"{statistics.median(all_ms):.2f}, p90 {statistics.quantiles(all_ms, n=10)[-1]:.2f}, "
        f"mean {statistics.fmean(all_ms):.2f}"
    )
    print("wall ms of each part, median over the searches it ran in (--sequential: ~CPU):")
    for part, values in parts.items():
        print(f"  {part:<28} {statistics.median(values):6.2f}  ({len(values)} searches)")
    if args.compare:
        print(f"pages compared: {compared}, differing: {differ}")
        if differ or compared != len(expected):
            return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--devset", choices=("1", "2", "all"), default="all")
    parser.add_argument("--corpus", action="append", help="one corpus (repeatable)")
    parser.add_argument("--db-prefix", default="quality", help="bench/quality.py's prefix")
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=1, help="runs a question, best kept")
    parser.add_argument("--dump", help="write the pages (JSON lines) here")
    parser.add_argument("--compare", help="check the pages against a --dump file")
    parser.add_argument(
        "--sequential", action="store_true", help="streams one after the other, on one thread"
    )
    parser.add_argument("--profile", help="write a cProfile of the searches here")
    parser.add_argument(
        "--setting",
        help="search settings changed, KEY=VALUE[,KEY=VALUE...] (as bench/quality.py's)",
    )
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    raise SystemExit(main())
