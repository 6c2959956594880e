#!/usr/bin/env python3
"""Every ranking rule on all three measuring sticks: one table from two quality.py runs.

Run by hand from the repository root, after a dev-set run and a generated-set run of
bench/quality.py with the same rows (its `--config` / `--setting` names):

    PYTHONPATH=server python bench/ablation_table.py [--dev bench/.data/quality-last.json]
        [--gen bench/.data/quality-gen-last.json] [--write] [--out bench/RESULTS.md]

Each row is a configuration (the shipped Searcher, a rule left out or added, a setting
changed) with its NDCG@10 on dev set 1, dev set 2 (long and short), and the generated
set's train and held-out splits (sentence and symbol questions; 3-4 word questions),
and the held-out split graded by file as well, each with its difference from the
shipped row. With --write, the section between
`<!-- ablation:begin -->` and `<!-- ablation:end -->` of --out is replaced (added at the
end when missing).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
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


def ablation_section(dev: Json, gen: Json) -> str:
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
        "grade by the definition's lines).",
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
                cells.append(f"{value:.3f} ({value - base:+.3f})")
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
    parser.add_argument("--write", action="store_true", help=f"replace the {SECTION} section")
    parser.add_argument("--out", type=Path, default=BENCH_DIR / "RESULTS.md")
    args = parser.parse_args(argv)
    dev = json.loads(args.dev.read_text(encoding="utf-8"))
    gen = json.loads(args.gen.read_text(encoding="utf-8"))
    section = ablation_section(dev, gen)
    print(section)
    if args.write:
        write_section(args.out, section)
        from runinfo import markdown_tables, write_results

        write_results(SECTION, {"tables": markdown_tables(section)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
