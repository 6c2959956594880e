#!/usr/bin/env python3
"""Every ranking rule on all three measuring sticks: one table from two quality.py runs.

Run by hand from the repository root, after a dev-set run and a generated-set run of
bench/quality.py with the same rows (its `--config` / `--setting` names):

    PYTHONPATH=server python bench/ablation_table.py [--dev bench/.data/quality-last.json]
        [--gen bench/.data/quality-gen-last.json] [--dumps bench/.data] [--write]
        [--out bench/RESULTS.md]

Each row is a configuration (the shipped Searcher, a rule left out or added, a setting
changed) with its NDCG@10 on dev set 1, dev set 2 (long and short), and the generated
set's train and held-out splits (sentence and symbol questions; 3-4 word questions),
and the held-out split graded by file as well, each with its difference from the
shipped row; a held-out difference also carries its 95% interval, a paired bootstrap
over the split's questions from the per-query dumps (bench/.data/quality-<corpus>.jsonl,
or --dumps) of the same generated-set run. With --write, the section between
`<!-- ablation:begin -->` and `<!-- ablation:end -->` of --out is replaced (added at the
end when missing).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["ablation_section", "main"]

BENCH_DIR = Path(__file__).resolve().parent
DATA_DIR = BENCH_DIR / ".data"
SECTION = "ablation"
SHIPPED = "codesift"
DEV_SUITES = ("set 1", "set 2 long", "set 2 short")
GEN_SUITES = (
    "gen train",
    "gen train short",
    "gen held-out",
    "gen held-out short",
    "gen held-out by file",
    "gen held-out short by file",
)

Json = dict[str, Any]

# The held-out columns carry a 95% interval of each row's difference from the shipped
# row: a paired bootstrap over the split's questions (fixed seed, BOOTSTRAP_ROUNDS
# resamples), from the per-query dumps of the generated set's run.
HELD_OUT = "gen held-out"
BOOTSTRAP_ROUNDS = 2000
BOOTSTRAP_SEED = 7
# Per-query figures: suite -> system -> one NDCG per question, in the same order.
PerQuery = dict[str, dict[str, list[float]]]


def per_query_ndcg(records: Iterable[Json]) -> PerQuery:
    """Each held-out suite's NDCG per question and system (graded by lines, and by
    file as `<suite> by file`), from quality.py's per-query dump records."""
    out: PerQuery = {}
    for record in records:
        suite = str(record.get("suite", ""))
        if not suite.startswith(HELD_OUT):
            continue
        for name, key in (
            (suite, "ndcg_by_system"),
            (f"{suite} by file", "ndcg_by_file_by_system"),
        ):
            for system, value in record.get(key, {}).items():
                out.setdefault(name, {}).setdefault(system, []).append(float(value))
    return out


def read_dumps(gen: Json, folder: Path) -> PerQuery:
    """`per_query_ndcg` of the dumps of the generated set's corpora (empty when any is
    missing: an interval over part of the questions would mislead)."""
    records: list[Json] = []
    for corpus in gen.get("corpora", {}):
        path = folder / f"quality-{corpus}.jsonl"
        if not path.is_file():
            return {}
        with path.open(encoding="utf-8") as lines:
            records.extend(json.loads(line) for line in lines if line.strip())
    return per_query_ndcg(records)


def paired_interval(row: Sequence[float], base: Sequence[float]) -> tuple[float, float]:
    """The 95% paired-bootstrap interval of mean(row - base)."""
    diffs = [a - b for a, b in zip(row, base, strict=True)]
    rng = random.Random(BOOTSTRAP_SEED)
    n = len(diffs)
    means = sorted(sum(rng.choices(diffs, k=n)) / n for _ in range(BOOTSTRAP_ROUNDS))
    return means[int(0.025 * BOOTSTRAP_ROUNDS)], means[int(0.975 * BOOTSTRAP_ROUNDS) - 1]


def _intervals(per_query: PerQuery, gen: Json, name: str, suite: str) -> str:
    """`; a..b` for a held-out cell whose dumps match the summary, else ''."""
    runs = per_query.get(suite, {})
    row, base = runs.get(name), runs.get(SHIPPED)
    shipped = _value(gen, SHIPPED, suite)
    if not row or not base or len(row) != len(base) or shipped is None:
        return ""
    if abs(sum(base) / len(base) - shipped) > 5e-4:  # the dumps of another run
        return ""
    lo, hi = paired_interval(row, base)
    return f"; {lo:+.3f}..{hi:+.3f}"


def _value(summary: Json, name: str, suite: str) -> float | None:
    entry = summary["systems"].get(name, {}).get(suite)
    return None if not isinstance(entry, dict) or entry.get("all") is None else float(entry["all"])


def _run_line(label: str, summary: Json) -> str:
    m = summary["machine"]
    load = "/".join(f"{x:.2f}" for x in m.get("load", ()))
    dirty = " plus uncommitted changes" if m.get("dirty") else ""
    return (
        f"- {label}: run {m['date']} at commit `{m['commit']}`{dirty}; nproc {m['nproc']}, "
        f"{m['mem_gib']:.1f} GiB, {m['cpu']}; load average {load} at start."
    )


def ablation_section(dev: Json, gen: Json, per_query: PerQuery | None = None) -> str:
    names = [n for n in gen["systems"] if n in dev["systems"]]
    columns = [(s, dev) for s in DEV_SUITES] + [(s, gen) for s in GEN_SUITES]
    lines = [
        f"<!-- {SECTION}:begin -->",
        "## Every rule on the three measuring sticks (`bench/ablation_table.py`)",
        "",
        _run_line("dev sets", dev),
        _run_line("generated set", gen),
        "",
        "NDCG@10 without vectors; in brackets the difference from the shipped row. `gen`: "
        "the generated set of bench/docset.py (train: what bench/fit_ranking.py fitted "
        "on; held-out: never read by any tuning; `short`: its 3-4 word questions; `by "
        "file`: the same results graded by file, as the dev sets grade theirs: a "
        "question's target files, any result of the file a hit, where the other columns "
        "grade by the definition's lines). In the held-out columns, after the difference: "
        f"its 95% interval, a paired bootstrap over the split's questions ({BOOTSTRAP_ROUNDS} "
        "resamples, from the per-query dumps of the same run): an interval that holds 0 "
        "is a difference the split cannot tell from chance.",
        "",
        "| configuration | " + " | ".join(s for s, _ in columns) + " |",
        "|---|" + "---|" * len(columns),
    ]
    for name in names:
        cells: list[str] = []
        for suite, summary in columns:
            value = _value(summary, name, suite)
            base = _value(summary, SHIPPED, suite)
            if value is None:
                cells.append("-")
            elif name == SHIPPED or base is None:
                cells.append(f"**{value:.3f}**")
            else:
                interval = (
                    _intervals(per_query, gen, name, suite)
                    if per_query and summary is gen and suite.startswith(HELD_OUT)
                    else ""
                )
                cells.append(f"{value:.3f} ({value - base:+.3f}{interval})")
        label = f"**{name}**" if name == SHIPPED else name
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines.append(f"<!-- {SECTION}:end -->")
    return "\n".join(lines) + "\n"


def write_section(out: Path, section: str) -> None:
    text = out.read_text(encoding="utf-8") if out.exists() else "# Benchmark results\n"
    pattern = re.compile(rf"<!-- {SECTION}:begin -->.*?<!-- {SECTION}:end -->\n?", re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _: section, text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    out.write_text(text, encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--dev", type=Path, default=DATA_DIR / "quality-last.json")
    parser.add_argument("--gen", type=Path, default=DATA_DIR / "quality-gen-last.json")
    parser.add_argument(
        "--dumps",
        type=Path,
        default=DATA_DIR,
        help="folder of the generated set's per-query dumps (quality-<corpus>.jsonl)",
    )
    parser.add_argument("--write", action="store_true", help=f"replace the {SECTION} section")
    parser.add_argument("--out", type=Path, default=BENCH_DIR / "RESULTS.md")
    args = parser.parse_args(argv)
    dev = json.loads(args.dev.read_text(encoding="utf-8"))
    gen = json.loads(args.gen.read_text(encoding="utf-8"))
    section = ablation_section(dev, gen, read_dumps(gen, args.dumps))
    print(section)
    if args.write:
        write_section(args.out, section)
        from runinfo import markdown_tables, write_results

        write_results(SECTION, {"tables": markdown_tables(section)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
