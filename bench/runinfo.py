"""Which code a benchmark measured: the commit and uncommitted changes to server/."""

from __future__ import annotations

import subprocess
from pathlib import Path

__all__ = ["head_commit", "server_changes"]

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
