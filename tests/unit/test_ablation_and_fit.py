"""bench/ablation_table.py and bench/fit_ranking.py: the pure parts."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _load(name: str) -> ModuleType:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


MACHINE = {"date": "d", "commit": "c", "nproc": "2", "mem_gib": 1.0, "cpu": "x", "load": [1.0]}


def _summary(values: dict[str, dict[str, float]]) -> dict[str, Any]:
    systems = {name: {s: {"all": v} for s, v in suites.items()} for name, suites in values.items()}
    return {"machine": MACHINE, "systems": systems}


def test_ablation_rows_show_each_rule_against_the_shipped_row() -> None:
    table = _load("ablation_table")
    dev = _summary({"codesift": {"set 1": 0.75}, "- tests prior": {"set 1": 0.70}})
    gen = _summary({"codesift": {"gen held-out": 0.74}, "- tests prior": {"gen held-out": 0.75}})
    section = table.ablation_section(dev, gen)
    row = next(line for line in section.splitlines() if line.startswith("| - tests prior"))
    assert "0.700 (-0.050)" in row
    assert "0.750 (+0.010)" in row
    assert section.startswith("<!-- ablation:begin -->")


def test_fit_objective_weighs_every_language_the_same() -> None:
    fit = _load("fit_ranking")
    quality = sys.modules["quality"]

    def run(language: str, ndcg: float) -> Any:
        query = quality.DevQuery("c", "q", "semantic", (), 3, language)
        return quality.QueryRun(query, [], quality.QueryScore(ndcg, 0.0, 0.0, None, ()), 0.0)

    runs = [run("go", 1.0), run("go", 1.0), run("go", 1.0), run("c", 0.0)]
    assert fit.language_mean(runs) == 0.5
