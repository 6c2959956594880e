"""bench/headline.py and bench/runinfo.py's results files: the headline table of
bench/README.md matches bench/results/*.json, and a results file is plain,
sorted, deterministic JSON."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from script_module import load_script

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _load(name: str) -> ModuleType:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return load_script(BENCH / f"{name}.py", name, register=True)


def test_committed_headline_table_is_current() -> None:
    """The committed table was built from the committed results files."""
    assert _load("headline").main(["--check"]) == 0


def test_check_fails_on_a_stale_table(tmp_path: Path) -> None:
    headline = _load("headline")
    readme = tmp_path / "README.md"
    text = (BENCH / "README.md").read_text(encoding="utf-8")
    readme.write_text(text.replace(" | 0.7x |", " | 0.6x |"), encoding="utf-8")
    assert headline.main(["--check", "--readme", str(readme)]) == 1
    assert headline.main(["--readme", str(readme)]) == 0
    assert readme.read_text(encoding="utf-8") == text


def test_every_results_file_names_its_run() -> None:
    for path in sorted((BENCH / "results").glob("*.json")):
        run = json.loads(path.read_text(encoding="utf-8"))
        assert run["benchmark"] == path.stem
        assert {"date", "commit", "machine", "server_changes", "figures"} <= set(run)


def test_results_json_is_sorted_plain_and_deterministic() -> None:
    runinfo = _load("runinfo")
    figures = {"b": float("nan"), "a": (1.234567891, 2), "worst": [1, 2, 3]}
    first = runinfo.results_json(
        "x", figures, machine_info={"nproc": 2}, commit="abc", changes=[], date="d", drop=["worst"]
    )
    again = runinfo.results_json(
        "x", figures, machine_info={"nproc": 2}, commit="abc", changes=[], date="d", drop=["worst"]
    )
    assert first == again
    run = json.loads(first)
    assert list(run) == sorted(run)
    assert run["figures"] == {"a": [1.23457, 2], "b": None}


def test_markdown_tables_by_heading() -> None:
    runinfo = _load("runinfo")
    text = "## Speed\n\n| mode | p50 |\n|---|---|\n| server | 11.3 |\n\ntext\n"
    assert runinfo.markdown_tables(text) == {
        "Speed": [{"columns": ["mode", "p50"], "rows": [["server", "11.3"]]}]
    }


def test_a_missing_figure_is_named() -> None:
    headline = _load("headline")
    run = {"benchmark": "quality", "figures": {"tables": {}}}
    with pytest.raises(headline.HeadlineError, match="quality"):
        headline.cell(run, "NDCG@10 by system", "codesift", "no hit")
