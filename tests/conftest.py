"""Shared fixtures: real git repositories and real indexes under tmp_path.

make_repo(files, name="repo", commit=True) -> Path
    A git repository at tmp_path/<name> holding `files` ({relative path: text
    or bytes}), committed unless commit=False.
index_workspace(root, **index_overrides) -> (conn, summary)
    Index `root` with the Indexer into a database outside the workspace
    (one per root, reused by later calls so runs are incremental). Keyword
    arguments override `[index]` settings, e.g. exclude=["*.gen.py"].
git_isolation
    Keeps the developer's git config and any repository above tmp_path out
    of a test (use it with `pytest.mark.usefixtures`).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import apsw
import pytest

from codesift.config import load_settings
from codesift.embedding import Embedder
from codesift.indexer import Indexer, IndexSummary
from codesift.store.database import open_database

FileContents = Mapping[str, str | bytes]
MakeRepo = Callable[..., Path]
IndexWorkspace = Callable[..., tuple[apsw.Connection, IndexSummary]]


def write_files(root: Path, files: FileContents) -> None:
    """Write each relative path under `root`, creating folders as needed."""
    for relpath, content in files.items():
        path = root / relpath
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")


def run_git(root: Path, *args: str) -> str:
    result = subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True)
    return result.stdout


def commit_all(root: Path, message: str = "snapshot") -> None:
    run_git(root, "add", "-A")
    run_git(root, "commit", "-q", "--allow-empty", "-m", message)


@pytest.fixture
def git_isolation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


@pytest.fixture
def make_repo(tmp_path: Path) -> MakeRepo:
    def make(files: FileContents, *, name: str = "repo", commit: bool = True) -> Path:
        root = tmp_path / name
        root.mkdir(parents=True, exist_ok=True)
        run_git(root, "init", "-q")
        run_git(root, "config", "user.name", "Test")
        run_git(root, "config", "user.email", "test@example.com")
        run_git(root, "config", "commit.gpgsign", "false")
        write_files(root, files)
        if commit:
            commit_all(root, "initial")
        return root

    return make


@pytest.fixture
def index_workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[IndexWorkspace]:
    connections: dict[Path, apsw.Connection] = {}

    def index(root: Path, **overrides: Any) -> tuple[apsw.Connection, IndexSummary]:
        root = root.resolve()
        settings = load_settings(root, {"index": overrides} if overrides else None)
        conn = connections.get(root)
        if conn is None:
            if "db_path" in overrides:
                db_path = root / settings.index.db_path  # an absolute path replaces root
            else:
                # Outside the workspace, so it is never a candidate file itself.
                db_path = tmp_path_factory.mktemp("index") / "index.db"
            conn = connections[root] = open_database(db_path)
        summary = Indexer(root, settings, conn).run()
        return conn, summary

    yield index
    for conn in connections.values():
        conn.close()


@pytest.fixture(scope="session")
def embedder(tmp_path_factory: pytest.TempPathFactory) -> Embedder:
    """The real on-device model (offline), loaded once for the whole run."""
    return Embedder(tmp_path_factory.mktemp("model-cache"), max_tokens=128)
