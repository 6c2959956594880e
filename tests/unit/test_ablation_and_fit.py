"""bench/ablation_table.py and bench/fit_ranking.py: the pure parts."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from script_module import load_script

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _load(name: str) -> ModuleType:
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    return load_script(BENCH / f"{name}.py", name)


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


def test_the_held_out_split_graded_by_file_has_its_own_columns() -> None:
    table = _load("ablation_table")
    dev = _summary({"codesift": {"set 1": 0.75}, "- file diversity": {"set 1": 0.68}})
    gen = _summary(
        {
            "codesift": {"gen held-out": 0.87, "gen held-out by file": 0.93},
            "- file diversity": {"gen held-out": 0.88, "gen held-out by file": 0.91},
        }
    )
    section = table.ablation_section(dev, gen)
    header = next(line for line in section.splitlines() if line.startswith("| configuration"))
    assert header.endswith("| gen held-out by file | gen held-out short by file |")
    row = next(line for line in section.splitlines() if line.startswith("| - file diversity"))
    assert "0.880 (+0.010)" in row
    assert "0.910 (-0.020)" in row


def test_held_out_differences_carry_a_paired_bootstrap_interval() -> None:
    table = _load("ablation_table")
    records = [
        {
            "suite": "gen held-out",
            "ndcg_by_system": {"codesift": base, "- rule": base + delta},
            "ndcg_by_file_by_system": {"codesift": 1.0, "- rule": 1.0},
        }
        for base, delta in [(0.5, 0.1), (0.6, 0.1), (0.4, 0.1), (0.7, 0.1)] * 10
    ]
    records.append({"suite": "gen train", "ndcg_by_system": {"codesift": 0.0, "- rule": 1.0}})
    per_query = table.per_query_ndcg(records)
    assert set(per_query) == {"gen held-out", "gen held-out by file"}
    assert len(per_query["gen held-out"]["- rule"]) == 40
    lo, hi = table.paired_interval(
        per_query["gen held-out"]["- rule"], per_query["gen held-out"]["codesift"]
    )
    assert 0.0999 < lo <= hi < 0.1001  # every question differs by the same 0.1
    dev = _summary({"codesift": {"set 1": 0.75}, "- rule": {"set 1": 0.75}})
    gen = _summary(
        {
            "codesift": {"gen held-out": 0.55, "gen held-out by file": 1.0},
            "- rule": {"gen held-out": 0.65, "gen held-out by file": 1.0},
        }
    )
    row = next(
        line
        for line in table.ablation_section(dev, gen, per_query).splitlines()
        if line.startswith("| - rule")
    )
    assert "0.650 (+0.100; +0.100..+0.100)" in row
    assert "1.000 (+0.000; +0.000..+0.000)" in row
    # Dumps of another run (their shipped mean is not the summary's): no interval.
    stale = _summary({"codesift": {"gen held-out": 0.9}, "- rule": {"gen held-out": 0.65}})
    assert ";" not in table.ablation_section(dev, stale, per_query).split("| - rule")[1]


def test_a_generated_question_graded_by_file_counts_any_result_of_its_file() -> None:
    _load("fit_ranking")  # imports quality
    quality = sys.modules["quality"]
    targets = (quality.Target("a.py", 10, 20), quality.Target("a.py", 40, 50))
    assert quality.file_targets(targets) == (quality.Target("a.py"),)
    query = quality.DevQuery("c", "q", "semantic", targets, quality.GENERATED, "python")
    neighbour = quality.RankedChunk("a.py", 60, 70)  # same file, neither definition
    results = [quality.RankedChunk("b.py", 1, 5), neighbour]
    run = quality.QueryRun(query, results, quality.score_results(results, targets, 10), 0.0)
    assert run.score.ndcg == 0.0
    assert quality.by_file_ndcg([run], 10) == 1 / math.log2(3)


def _held_out_question() -> tuple[Any, Any, Any]:
    """quality.py (loaded), a corpus `py-x` and one generated held-out question of it
    whose target is a.py:10-20."""
    _load("fit_ranking")  # imports quality and corpora
    quality = sys.modules["quality"]
    corpus = sys.modules["corpora"].Corpus("py-x", Path("root"), Path("q.json"), ())
    target = (quality.Target("a.py", 10, 20),)
    gen = quality.DevQuery(
        "py-x", "q", "semantic", target, quality.GENERATED, "python", "long", "held-out"
    )
    return quality, corpus, gen


def test_the_summary_grades_generated_suites_by_file_too() -> None:
    quality, corpus, gen = _held_out_question()
    dev = quality.DevQuery("py-x", "d", "semantic", gen.targets, 2, "python")
    page = [quality.RankedChunk("a.py", 60, 70)]  # the target's file, not its lines
    runs = [
        quality.QueryRun(q, page, quality.score_results(page, q.targets, 10), 1.0)
        for q in (gen, dev)
    ]
    result = quality.CorpusResult(
        corpus,
        [gen, dev],
        quality.IndexReport(Path()),
        [quality.SystemRun("codesift", "py-x", runs)],
    )
    systems = quality.result_json([result], {}, 10)["systems"]["codesift"]
    assert systems["gen held-out"]["all"] == 0.0
    by_file = systems["gen held-out by file"]
    assert by_file["all"] == 1.0 and by_file["lang:python"] == 1.0 and by_file["py-x"] == 1.0
    assert "set 2 long by file" not in systems  # the dev sets grade by file already


def test_the_peer_page_takes_codesifts_by_file_figures_from_the_summary(tmp_path: Path) -> None:
    peer = _load("peer_baseline")
    quality, corpus, gen = _held_out_question()
    figures = {"all": 0.9, "semantic": 0.9, "lang:python": 0.9, "py-x": 0.9}
    summary = {
        "k": 10,
        "machine": {"date": "d", "commit": "c"},
        "systems": {"codesift": {"gen held-out": figures, "gen held-out by file": figures}},
    }
    path = tmp_path / "quality-gen-last.json"
    path.write_text(json.dumps(summary), encoding="utf-8")
    suites = ["gen held-out", "gen held-out by file"]
    mine, notes = peer.codesift_figures(quality, path, [(corpus, [gen])], suites, 10)
    assert set(mine) == set(suites)
    assert mine["gen held-out by file"]["all"] == 0.9
    assert "gen held-out by file" in notes[0]


def test_fit_objective_weighs_every_language_the_same() -> None:
    fit = _load("fit_ranking")
    quality = sys.modules["quality"]

    def run(language: str, ndcg: float) -> Any:
        query = quality.DevQuery("c", "q", "semantic", (), 3, language)
        return quality.QueryRun(query, [], quality.QueryScore(ndcg, 0.0, 0.0, None, ()), 0.0)

    runs = [run("go", 1.0), run("go", 1.0), run("go", 1.0), run("c", 0.0)]
    assert fit.language_mean(runs) == 0.5
