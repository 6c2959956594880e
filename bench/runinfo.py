"""Which code a benchmark measured (the commit and uncommitted changes to server/),
on which machine, and where its figures go: a generated section of
bench/RESULTS.md (`write_section`) and the run's figures as
bench/results/<name>.json (`write_results`), which bench/headline.py reads."""

from __future__ import annotations

import json
import math
import os
import platform
import re
import subprocess
import time
from collections.abc import Collection
from pathlib import Path
from typing import Any

__all__ = [
    "RESULTS_DIR",
    "head_commit",
    "machine",
    "results_json",
    "server_changes",
    "write_results",
    "write_section",
]

REPO_DIR = Path(__file__).resolve().parent.parent
RESULTS_DIR = REPO_DIR / "bench" / "results"


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(REPO_DIR), *args], capture_output=True, text=True, check=False
    ).stdout


def head_commit() -> str:
    """The short id of HEAD ('' outside git)."""
    return _git("rev-parse", "--short", "HEAD").strip()


def server_changes() -> list[str]:
    """Paths under server/ that differ from HEAD."""
    return [
        line[3:]
        for line in _git("status", "--porcelain", "--", "server").splitlines()
        if line.strip()
    ]


def write_section(out: Path, body: str, begin: str, end: str) -> None:
    """Replace the text between the markers `begin` and `end` of `out` by `body`
    (added at the end when the markers are missing); the rest is kept."""
    section = f"{begin}\n{body.rstrip()}\n{end}\n"
    text = out.read_text() if out.exists() else "# Benchmark results\n"
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end) + r"\n?", re.DOTALL)
    if pattern.search(text):
        text = pattern.sub(lambda _m: section, text, count=1)
    else:
        text = text.rstrip() + "\n\n" + section
    out.write_text(text)


def machine() -> dict[str, Any]:
    """The machine a run measured on: cores, memory, CPU model, Python, OS, load."""
    mem_gib = 0.0
    cpu = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_gib = int(line.split()[1]) / 2**20
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "nproc": os.cpu_count(),
        "mem_gib": round(mem_gib, 1),
        "cpu": cpu,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": platform.platform(),
        "load": [round(x, 2) for x in os.getloadavg()],
    }


def _plain(value: Any, drop: Collection[str]) -> Any:
    """`value` as plain JSON: floats to 6 significant digits (NaN and infinities
    to null), tuples to lists, the keys in `drop` left out at every depth."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, float):
        return None if not math.isfinite(value) else float(f"{value:.6g}")
    if isinstance(value, dict):
        return {str(k): _plain(v, drop) for k, v in value.items() if str(k) not in drop}
    if isinstance(value, (list, tuple)):
        return [_plain(v, drop) for v in value]
    return str(value)


def results_json(
    name: str,
    figures: Any,
    *,
    machine_info: Any = None,
    commit: str | None = None,
    changes: list[str] | None = None,
    date: str | None = None,
    drop: Collection[str] = (),
) -> str:
    """The text of bench/results/<name>.json: the run's date, commit, uncommitted
    changes to server/ and machine, then its `figures` (summaries, not per-query
    dumps: the keys in `drop` are left out). Keys sorted, so a rerun with the same
    figures writes the same bytes."""
    if machine_info is None:
        machine_info = machine()
    if isinstance(machine_info, dict):  # some scripts keep the run's identity there
        machine_info = dict(machine_info)
        date = date or machine_info.pop("date", None)
        commit = commit if commit is not None else machine_info.pop("commit", None)
        changes = changes if changes is not None else machine_info.pop("dirty", None)
    run = {
        "benchmark": name,
        "date": date or time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "commit": head_commit() if commit is None else commit,
        "server_changes": server_changes() if changes is None else changes,
        "machine": machine_info,
        "figures": figures,
    }
    return json.dumps(_plain(run, set(drop)), indent=1, sort_keys=True, allow_nan=False) + "\n"


def write_results(name: str, figures: Any, **run: Any) -> Path:
    """Write bench/results/<name>.json (see `results_json`), then rebuild the
    headline table of bench/README.md from the results (bench/headline.py);
    returns the path written."""
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{name}.json"
    path.write_text(results_json(name, figures, **run), encoding="utf-8")
    import headline  # beside this file; it reads bench/results/, not this module

    if RESULTS_DIR == headline.RESULTS_DIR:
        headline.main([])  # says on stderr when a figure it needs is missing
    return path


def markdown_tables(text: str) -> dict[str, list[dict[str, Any]]]:
    """The figures of the markdown tables in `text`, by the heading above each:
    {heading: [{"columns": [...], "rows": [[cell, ...], ...]}, ...]}. For the
    scripts whose figures exist only as the tables they print."""
    tables: dict[str, list[dict[str, Any]]] = {}
    heading = ""
    current: dict[str, Any] | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            heading = stripped.lstrip("#").strip()
        if not (stripped.startswith("|") and stripped.endswith("|")):
            current = None
            continue
        cells = [c.strip() for c in stripped[1:-1].split("|")]
        if current is None:
            current = {"columns": cells, "rows": []}
            tables.setdefault(heading, []).append(current)
        elif not all(set(c) <= set("-: ") for c in cells):
            current["rows"].append(cells)
    return tables
