"""The extractor's output on the language fixtures is pinned by a committed golden file.

Every node, edge and chunk that parsing makes of tests/fixtures/languages (one file
per grammar) and tests/fixtures/extractor_golden_sample.py is compared with
tests/fixtures/extractor_golden.json, so a refactoring of parsing/extractor.py that
changes anything shows up here. A deliberate change (a query file, a new rule)
regenerates the golden and the diff is reviewed with it:

    PYTHONPATH=server python bench/extraction_golden.py --root tests/fixtures \\
        --write tests/fixtures/extractor_golden.json languages extractor_golden_sample.py
"""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType

from script_module import load_script

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
GOLDEN = FIXTURES / "extractor_golden.json"
SCRIPT = FIXTURES.parents[1] / "bench" / "extraction_golden.py"
INPUTS = ["languages", "extractor_golden_sample.py"]


def _golden_script() -> ModuleType:
    return load_script(SCRIPT, "extraction_golden")


def test_extraction_matches_the_golden_file() -> None:
    script = _golden_script()
    paths = script.source_files(FIXTURES, INPUTS)
    actual = script.dump(FIXTURES, paths)
    expected = json.loads(GOLDEN.read_text("utf-8"))
    # Every grammar plus Python is covered, so a missing fixture cannot pass quietly.
    assert len({f["language"] for f in actual.values()}) == 20
    assert script.differences(expected, actual) == []
    assert actual == expected
