"""The code's static checks, run with the tests so that CI holds them: ruff's lint
and formatting over the server, the tests and the benchmarks, and mypy strict over
the server (pyproject.toml's [tool.ruff] and [tool.mypy])."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CHECKED = ("server", "tests", "bench")


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )


def test_ruff_finds_nothing() -> None:
    checked = _run("ruff", "check", "--no-cache", *CHECKED)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_code_is_formatted() -> None:
    checked = _run("ruff", "format", "--check", "--no-cache", *CHECKED)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_mypy_finds_nothing(tmp_path: Path) -> None:
    checked = _run("mypy", "--cache-dir", str(tmp_path / "mypy-cache"))
    assert checked.returncode == 0, checked.stdout + checked.stderr
