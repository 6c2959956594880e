"""The headline table of bench/README.md, built from bench/results/*.json.

Each benchmark script writes its latest run to bench/results/<name>.json (with
--write, beside its section of bench/RESULTS.md); this script picks the headline
figures out of those files and rewrites the block between
`<!-- headline:begin -->` and `<!-- headline:end -->` in bench/README.md. Nothing
in that block is typed by hand.

    python bench/headline.py            # rewrite the table
    python bench/headline.py --check    # exit 1 when the table is stale
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["ROWS", "HeadlineError", "build_table", "main", "render_readme"]

BENCH_DIR = Path(__file__).resolve().parent
RESULTS_DIR = BENCH_DIR / "results"
README = BENCH_DIR / "README.md"
BEGIN = "<!-- headline:begin -->"
END = "<!-- headline:end -->"

Run = dict[str, Any]


class HeadlineError(Exception):
    """A results file or a figure in it that the headline needs is missing."""


def _plain(cell: str) -> str:
    return cell.replace("**", "").replace("`", "").strip()


def cell(run: Run, heading: str, row: str, column: str, *, prefix: bool = False) -> str:
    """The cell of `run`'s table under `heading` whose first column is `row` (or
    starts with it, with `prefix`) and whose column is (or starts with) `column`.
    Bold and code marks are left out."""
    tables = run["figures"].get("tables", {})
    found = [t for h, ts in tables.items() if _plain(h) == heading for t in ts]
    for table in found:
        columns = [_plain(c) for c in table["columns"]]
        index = next((i for i, c in enumerate(columns) if c.startswith(column)), None)
        if index is None:
            continue
        for cells in table["rows"]:
            first = _plain(cells[0])
            if first == row or (prefix and first.startswith(row)):
                return _plain(cells[index])
    raise HeadlineError(f"{run['benchmark']}: no cell {row!r} / {column!r} under {heading!r}")


def figure(run: Run, *path: str) -> Any:
    """The structured figure at `path` under the run's figures."""
    value: Any = run["figures"]
    for key in path:
        if not isinstance(value, dict) or key not in value:
            raise HeadlineError(f"{run['benchmark']}: no figure {'/'.join(path)}")
        value = value[key]
    return value


def _quality(name: str) -> Callable[[Run], str]:
    def value(run: Run) -> str:
        heading = "NDCG@10 by system" if name == "codesift" else "NDCG@10, overall and by category"
        return " / ".join(
            cell(run, heading, name, suite, prefix=True)
            for suite in ("set 1 (", "set 2 long (", "set 2 short (")
        )

    return value


GEN_SUITES = ("gen held-out (", "gen held-out short (", "gen train (", "gen train short (")


def _generated(name: str) -> Callable[[Run], str]:
    """The generated set's held-out split, then its train split (sentence and symbol
    questions / 3-4 word questions), for `name`'s row."""

    def value(run: Run) -> str:
        heading = "NDCG@10 by system" if name == "codesift" else "NDCG@10, overall and by category"
        held, held_short, train, train_short = (
            cell(run, heading, name, suite, prefix=True) for suite in GEN_SUITES
        )
        return f"held-out {held} / {held_short}; train {train} / {train_short}"

    return value


def _no_hit(run: Run) -> str:
    misses, total = cell(run, "NDCG@10 by system", "codesift", "no hit").split("/")
    return f"{misses} of {total}"


def _query_speed(run: Run) -> str:
    heading = "Query speed (bench/query_speed.py)"
    p50, p95 = (cell(run, heading, "server", c) for c in ("p50 ms", "p95 ms"))
    return f"{p50} / {p95} ms"


def _cli(run: Run) -> str:
    heading = "One-shot CLI search (bench/cli_latency.py)"
    served = cell(run, heading, "a codesift mcp serves", "p50", prefix=True)
    alone = cell(run, heading, "no server", "p50", prefix=True)
    return f"{served} / {alone} ms"


def _lsp(row: str, part: int) -> Callable[[Run], str]:
    def value(run: Run) -> str:
        text = cell(run, "Language server (bench/lsp_latency.py)", row, "value", prefix=True)
        return f"{text.split(' ms')[0].split(' / ')[part]} ms"

    return value


def _indexing(mode: str) -> Callable[[Run], str]:
    def value(run: Run) -> str:
        ours = float(figure(run, "corpora", "python-stdlib", mode, "wall"))
        peer = float(figure(run, "corpora", "python-stdlib", "peer", "wall"))
        return f"{ours:.1f} s ({ours / peer:.2f}x the peer)"

    return value


def _history(run: Run) -> str:
    history = float(figure(run, "deep", "history_s"))
    first = float(figure(run, "deep", "first_answer_s"))
    return f"{history:.1f} s (first answer {first:.1f} s)"


def _history_label(runs: dict[str, Run]) -> str:
    run = runs.get("history_deep")
    if run is None:
        return "git history pass, deep history"
    commits, files = figure(run, "repo_commits"), figure(run, "repo_files")
    return f"git history pass, {commits:,} commits over {files:,} files"


def _routing(run: Run) -> str:
    heading = "Source routing (bench/route_quality.py)"
    return " / ".join(cell(run, heading, "all", c) for c in ("top-1", "top-3"))


def _graph(heading: str) -> Callable[[Run], str]:
    """Callers / callees F1 of one language's table (bench/graph_accuracy.py)."""

    def value(run: Run) -> str:
        return " / ".join(
            cell(run, heading, "all", f"{side} P / R / F1").split(" / ")[2]
            for side in ("callers", "callees")
        )

    return value


def _callers(run: Run) -> str:
    heading = "One-shot codesift callers (bench/callers_latency.py)"
    served = cell(run, heading, "a server keeps the index", "p50 ms", prefix=True)
    alone = cell(run, heading, "no server", "p50 ms", prefix=True)
    cpu = cell(run, heading, "no server", "CPU ms", prefix=True)
    return f"{served} / {alone} ms (CPU {cpu} ms)"


HTTP = "HTTP API and console (bench/http_latency.py)"


def _http_cpu(run: Run, row: str) -> str:
    """`; 15.1 CPU-ms a request at load 10.1` (the steadier figure on a shared
    machine), or nothing for a run that did not measure it."""
    try:
        cpu = cell(run, HTTP, row, "CPU-ms", prefix=True)
        load = cell(run, HTTP, row, "load", prefix=True).split("/")[0]
    except HeadlineError:
        return ""
    return f"; {cpu} CPU-ms a request at load {load}"


def _http_rows(run: Run, start: str) -> list[str]:
    """The first cells of the HTTP table's rows that start with `start` (one per
    answer-cache setting the run measured, in its order)."""
    tables = run["figures"].get("tables", {})
    found = [t for h, ts in tables.items() if _plain(h) == HTTP for t in ts]
    return [
        _plain(cells[0]) for t in found for cells in t["rows"] if _plain(cells[0]).startswith(start)
    ]


def _uncached(row: str) -> str:
    return " without the answer cache" if row.endswith("(no answer cache)") else ""


def _http_one(run: Run) -> str:
    parts = []
    for row in _http_rows(run, "one client") or ["one client"]:
        p50, p95 = (cell(run, HTTP, row, c, prefix=True) for c in ("p50", "p95"))
        parts.append(f"{p50} / {p95} ms{_uncached(row)}{_http_cpu(run, row)}")
    return "; ".join(parts)


def _http_many(run: Run) -> str:
    parts = []
    for row in _http_rows(run, "16 clients") or ["16 clients"]:
        p95 = float(cell(run, HTTP, row, "p95", prefix=True))
        errors = cell(run, HTTP, row, "errors", prefix=True)
        parts.append(f"{p95:.0f} ms, {errors} errors{_uncached(row)}{_http_cpu(run, row)}")
    return "; ".join(parts)


def _console(run: Run) -> str:
    return f"{float(cell(run, HTTP, 'console', 'p95', prefix=True)):.0f} ms"


@dataclass(frozen=True)
class Row:
    """One headline figure: its label, the results file it comes from, how to
    read it, and the target it is held to ('' for none)."""

    figure: str | Callable[[dict[str, Run]], str]
    source: str
    value: Callable[[Run], str]
    target: str = ""


ROWS: tuple[Row, ...] = (
    Row(
        "search quality, NDCG@10, dev set 1 / set 2 long / set 2 short (no vectors)",
        "quality",
        _quality("codesift"),
        "above the peer",
    ),
    Row(
        "the peer (semble 0.7.0, BM25 + ranking, no model), same sets",
        "peer",
        _quality("semble 0.7.0 (BM25"),
    ),
    Row(
        "search quality, NDCG@10, generated set (sentences / 3-4 words), no vectors",
        "quality-gen",
        _generated("codesift"),
        "held-out above the peer",
    ),
    Row(
        "the peer on the generated set, same splits",
        "peer-gen",
        _generated("semble 0.7.0 (BM25"),
    ),
    Row("queries with no target in the top 10 (no vectors)", "quality", _no_hit),
    Row(
        "search latency in the server (python stdlib, vectors in memory), p50 / p95",
        "query_speed",
        _query_speed,
        "p50 <= 10, p95 <= 60 ms",
    ),
    Row(
        "one-shot `codesift search`, a server keeps the index / no server, p50",
        "cli_latency",
        _cli,
        "<= 60 / <= 350 ms",
    ),
    Row(
        "saved file searchable in the language server (didSave), p95",
        "lsp_latency",
        _lsp("saved file searchable, lexical, with didSave", 1),
        "<= 300 ms",
    ),
    Row(
        "workspace/symbol in the language server, p50",
        "lsp_latency",
        _lsp("workspace/symbol", 0),
        "<= 16 ms",
    ),
    Row(
        "`codesift index --no-embed`, python stdlib, against the peer",
        "index_speed_side",
        _indexing("lexical"),
        "0.7x",
    ),
    Row(
        "the same until the call graph is complete (the call pass after it)",
        "index_speed_side",
        _indexing("calls"),
    ),
    Row("the same with the static vectors", "index_speed_side", _indexing("static"), "1.0x"),
    Row(_history_label, "history_deep", _history, "<= 30 s"),
    Row("routing a question to the right repository of 25, top-1 / top-3", "routing", _routing),
    Row(
        "call graph against jedi (rich, anyio, jsonschema), callers / callees F1",
        "graph_accuracy",
        _graph("Python: jedi"),
        ">= 0.95 / >= 0.95",
    ),
    Row(
        "call graph against the TypeScript language service (rxjs, mobx, immer),"
        " callers / callees F1",
        "graph_accuracy",
        _graph("TypeScript: the TypeScript language service"),
        "callers >= 0.90",
    ),
    Row(
        "call graph against go/types (cobra, gorilla/mux, chi), callers / callees F1",
        "graph_accuracy",
        _graph("Go: go/types"),
        "callers >= 0.90",
    ),
    Row(
        "call graph against clang (brotli, cmark-gfm, lz4), callers / callees F1",
        "graph_accuracy_c",
        _graph("C: clang"),
        "measured",
    ),
    Row(
        "one-shot `codesift callers`, a server keeps the index / no server, p50",
        "callers_latency",
        _callers,
        "<= 60 / <= 200 ms",
    ),
    Row(
        "`codesift web`: `POST /api/search`, one client, p50 / p95",
        "http_latency",
        _http_one,
        "<= 15 / <= 60 ms",
    ),
    Row(
        "`codesift web`: 16 clients for 5 min, p95, errors",
        "http_latency",
        _http_many,
        "<= 250 ms, 0 errors",
    ),
    Row(
        "the /search console, Enter -> first result, p95 (headless Chromium)",
        "http_latency",
        _console,
        "<= 300 ms",
    ),
)


def load_runs(results_dir: Path = RESULTS_DIR) -> dict[str, Run]:
    """Every bench/results/<name>.json by name."""
    return {
        path.stem: json.loads(path.read_text(encoding="utf-8"))
        for path in sorted(results_dir.glob("*.json"))
    }


def build_table(runs: dict[str, Run]) -> str:
    """The headline table (markdown) from the runs."""
    lines = [
        "| figure | value | target | commit | date |",
        "|---|---|---|---|---|",
    ]
    for row in ROWS:
        label = row.figure(runs) if callable(row.figure) else row.figure
        run = runs.get(row.source)
        if run is None:
            raise HeadlineError(f"bench/results/{row.source}.json is missing")
        commit = f"`{run['commit']}`" if run.get("commit") else "?"
        date = str(run.get("date", ""))[:10]
        lines.append(f"| {label} | {row.value(run)} | {row.target} | {commit} | {date} |")
    return "\n".join(lines) + "\n"


def render_readme(readme: str, table: str) -> str:
    """`readme` with the block between the headline markers replaced by `table`."""
    start, end = readme.find(BEGIN), readme.find(END)
    if start < 0 or end < start:
        raise HeadlineError(f"bench/README.md has no {BEGIN} ... {END} block")
    note = (
        "<!-- Generated by bench/headline.py from bench/results/*.json;"
        " edits here are overwritten. -->\n"
    )
    return readme[: start + len(BEGIN)] + "\n" + note + table + readme[end:]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--check", action="store_true", help="exit 1 when the table in README.md is stale"
    )
    parser.add_argument("--readme", type=Path, default=README)
    parser.add_argument("--results", type=Path, default=RESULTS_DIR)
    args = parser.parse_args(argv)
    current = args.readme.read_text(encoding="utf-8")
    try:
        wanted = render_readme(current, build_table(load_runs(args.results)))
    except HeadlineError as exc:
        print(f"headline: {exc}", file=sys.stderr)
        return 2
    if args.check:
        if wanted != current:
            print(
                "headline: bench/README.md's headline table is stale; run python bench/headline.py",
                file=sys.stderr,
            )
            return 1
        return 0
    if wanted != current:
        args.readme.write_text(wanted, encoding="utf-8")
        print(f"headline: rewrote the table in {args.readme}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
