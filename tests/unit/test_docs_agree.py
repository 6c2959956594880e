"""The docs agree with each other and with the code where they state the same
fact in several places (figures, defaults, lists)."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PROSE = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_minilm_throughput_is_one_figure_everywhere() -> None:
    """MiniLM's chunks a second on 2 cores: the same range wherever it is given
    (the static model's thousands a second and the shared index's writes aside)."""
    figures: dict[str, set[str]] = {}
    for path in PROSE:
        text = " ".join(read(path).split())
        for match in re.finditer(r"~([\d,]+(?:-[\d,]+)?) chunks a second", text):
            figure = match.group(1)
            context = text[max(0, match.start() - 200) : match.end() + 40]
            if "static" in text[max(0, match.start() - 60) : match.start()]:
                continue  # the static model's figure
            if int(figure.split("-")[0].replace(",", "")) >= 1000:
                continue  # static model or shared-index writes: thousands a second
            figures.setdefault(figure, set()).add(f"{path.name}: ...{context[-120:]}")
    assert len(figures) == 1, figures


def test_the_server_memory_figure_is_the_measured_one() -> None:
    """The language server's memory is stated as measured (bench/RESULTS.md), not
    as the lexical index's peak alone."""
    readme = " ".join(read(REPO / "README.md").split())
    assert "staying at its lexical index's peak" not in readme
    results = read(REPO / "bench" / "RESULTS.md")
    assert "## Language server memory" in results
    peak = re.search(r"MiniLM fill complete .*?\| (\d+) MiB", results)
    assert peak, "no measured peak in bench/RESULTS.md"
    stated = re.search(r"peak of ~(\d+) MB at the end of the MiniLM fill", readme)
    assert stated, "README states no peak for the MiniLM fill"
    assert abs(int(stated.group(1)) - int(peak.group(1))) <= 10
