"""tools/train_static_model.py: a rebuild refuses to train on fewer sources than the
recipe names (another table), and says which are missing."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from script_module import load_script

TOOL = Path(__file__).resolve().parents[2] / "tools" / "train_static_model.py"


def _tool() -> ModuleType:
    return load_script(TOOL, "train_static_model")


def test_a_missing_source_stops_the_rebuild_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tool = _tool()
    present = tmp_path / "present"
    present.mkdir()
    monkeypatch.setattr(
        tool,
        "SOURCES",
        (("python", present, (".py",), 1), ("go", tmp_path / "no-gocode", (".go",), 1)),
    )
    monkeypatch.setattr(tool, "JAVA_SRC_ZIP", tmp_path / "no-src.zip")
    assert tool.missing_sources() == [
        f"go ({tmp_path / 'no-gocode'})",
        f"java ({tmp_path / 'no-src.zip'})",
    ]
    assert tool.main(["--check"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "training sources missing here: go" in err and "--allow-missing" in err


def test_corpus_counts_are_compared_with_the_shipped_manifest() -> None:
    tool = _tool()
    manifest = tool.json.loads((tool.STATIC_DIR / "static.json").read_text(encoding="utf-8"))
    shipped: dict[str, int] = manifest["corpus"]["files"]
    assert tool.corpus_differences(dict(shipped)) == []
    assert tool.corpus_differences({**shipped, "go": 0}) == [f"go {shipped['go']} -> 0"]
