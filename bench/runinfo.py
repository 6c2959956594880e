"""Which code a benchmark measured (the commit and uncommitted changes to server/),
and where its figures go (a generated section of bench/RESULTS.md)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

__all__ = ["head_commit", "server_changes", "write_section"]

REPO_DIR = Path(__file__).resolve().parent.parent


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
