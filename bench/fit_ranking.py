#!/usr/bin/env python3
"""Fit the ranking settings on the generated set's train split (a coordinate search).

Run by hand from the repository root (with the project's interpreter), after
`python bench/docset.py` and one `python bench/quality.py --devset gen` (which builds
the indexes):

    PYTHONPATH=server python bench/fit_ranking.py [--passes 1] [--min-gain 0.002]
        [--param NAME ...]

Only the train split is read: the held-out split and the dev sets are for checking
what the fit found, with bench/quality.py. The objective is NDCG@10 averaged over
languages (each language weighs the same, whatever its number of questions), over
every question style (sentences, 3-4 words, symbols). Starting from the shipped
settings, each parameter in turn takes each of its GRID values with the others held;
a value is kept when it beats the current one by at least --min-gain (ties keep the
shipped value), so every change of the result is one line of the printed log.
Deterministic: the same indexes give the same path.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Sequence
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
for folder in (BENCH_DIR.parent / "server", BENCH_DIR):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

import quality  # noqa: E402
from codesift.config import SearchSettings  # noqa: E402
from codesift.retrieval.search import Searcher  # noqa: E402

__all__ = ["GRID", "language_mean", "main"]

# The values each setting may take (the shipped value is always tried as well).
GRID: dict[str, tuple[Any, ...]] = {
    "lexical_max_df": (0.05, 0.1, 0.2, 0.5, 1.0),
    "rrf_k": (20, 40, 60, 100),
    "weight_symbol": (0.6, 0.8, 1.0, 1.3, 1.6),
    "weight_feedback": (0.0, 0.3, 0.6, 0.9),
    "symbol_threshold": (0.2, 0.3, 0.4, 0.5),
    "file_evidence": (0.0, 0.1, 0.2, 0.3, 0.5),
    "file_diversity": (0.1, 0.3, 0.5, 1.0),
    "prior_definition": (False, True),
    "prior_tests": (False, True),
    "prior_path": (False, True),
    "prior_path_short": (False, True),
}


def language_mean(runs: Sequence[quality.QueryRun]) -> float:
    """NDCG averaged per language, then over languages."""
    by_language: dict[str, list[float]] = {}
    for run in runs:
        by_language.setdefault(run.query.language, []).append(run.score.ndcg)
    return statistics.fmean(statistics.fmean(v) for v in by_language.values())


class TrainSet:
    """The train split's corpora, indexed, with their questions."""

    def __init__(self, names: Sequence[str]) -> None:
        self.items: list[tuple[Any, list[quality.DevQuery], Any]] = []
        for name in names:
            corpus = quality.docset_corpus(name)
            queries = quality.load_queries(corpus, ("long", "short"))
            conn, settings, _ = quality.index_corpus(corpus, queries, False, False)
            self.items.append((conn, queries, settings.search))

    def score(self, overrides: dict[str, Any], k: int = 10) -> float:
        runs: list[quality.QueryRun] = []
        for conn, queries, base in self.items:
            searcher = Searcher(conn, replace(base, **overrides), None)
            system = quality.CodesiftSystem(quality.SearchConfig("fit", ""), searcher)
            runs += quality.evaluate(system, queries, k).runs
            searcher.close()
        return language_mean(runs)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--passes", type=int, default=1, help="rounds over every parameter")
    parser.add_argument("--min-gain", type=float, default=0.002, help="smallest kept gain")
    parser.add_argument(
        "--param", action="append", choices=sorted(GRID), help="parameters to fit (default: all)"
    )
    args = parser.parse_args(argv)
    quality.GEN_SPLITS = ("train",)  # the held-out split is never read here
    train = TrainSet(quality.docset_names(("train",)))
    shipped = SearchSettings()
    known = {f.name for f in fields(SearchSettings)}
    params = [p for p in (args.param or GRID) if p in known]
    chosen: dict[str, Any] = {}
    best = train.score(chosen)
    print(f"shipped settings: train NDCG@10 (language mean) {best:.4f}", flush=True)
    for round_no in range(1, args.passes + 1):
        changed = False
        for param in params:
            current = chosen.get(param, getattr(shipped, param))
            for value in GRID[param]:
                if value == current:
                    continue
                score = train.score({**chosen, param: value})
                print(f"  pass {round_no}: {param}={value}: {score:.4f}", flush=True)
                if score >= best + args.min_gain:
                    best, current, changed = score, value, True
                    chosen[param] = value
            print(f"pass {round_no}: {param} -> {current} ({best:.4f})", flush=True)
        if not changed:
            break
    diff = {p: v for p, v in chosen.items() if v != getattr(shipped, p)}
    print(f"fitted: {diff or 'the shipped settings'}; train NDCG@10 {best:.4f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
