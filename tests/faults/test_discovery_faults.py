"""Discovery faults: an uninitialised git submodule made discovery list its folder
again and again (inside it `git ls-files` prints "./"), so `codesift index` never
ended and its queue grew without bound."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from codesift.config import IndexSettings
from codesift.workspace import discover_files, discover_paths
from codesift.workspace import discovery as discovery_module
from codesift.workspace import git_files as git_files_module

# Far more `git ls-files` calls than any of these repositories needs; the bug made
# discovery call it forever, so reaching this is the failure.
MAX_GIT_LISTINGS = 25
FAKE_SHA = "1234567890abcdef1234567890abcdef12345678"


@pytest.fixture(autouse=True)
def isolated_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{name}_NAME", "Test")
        monkeypatch.setenv(f"GIT_{name}_EMAIL", "test@example.com")


@pytest.fixture
def bounded_git(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Counts discovery's `git ls-files` calls and fails past MAX_GIT_LISTINGS."""
    calls: list[Path] = []
    real = discovery_module._ls_files

    def counted(directory: Path, pathspecs: Sequence[str] | None = None) -> list[str] | None:
        calls.append(directory)
        if len(calls) > MAX_GIT_LISTINGS:
            raise AssertionError(f"discovery keeps listing folders: {calls[-3:]}")
        return real(directory, pathspecs)

    # Listed from discovery itself and from git mode's submodule and path loops.
    monkeypatch.setattr(discovery_module, "_ls_files", counted)
    monkeypatch.setattr(git_files_module, "_ls_files", counted)
    return calls


def git(cwd: Path, *args: str) -> str:
    result = subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True)
    return result.stdout


def repo_with_uninitialised_submodule(root: Path) -> Path:
    """A repository whose `test_lib/dep` is a gitlink over an empty folder, as a
    clone without `--recurse-submodules` leaves it."""
    root.mkdir(parents=True)
    git(root, "init", "-q")
    (root / "app.py").write_text("def main():\n    return 1\n", encoding="utf-8")
    git(root, "add", "app.py")
    git(root, "commit", "-q", "-m", "app")
    git(root, "update-index", "--add", "--cacheinfo", f"160000,{FAKE_SHA},test_lib/dep")
    (root / "test_lib" / "dep").mkdir(parents=True)
    git(root, "commit", "-q", "-m", "submodule")
    return root


def test_uninitialised_submodule_is_skipped_once(tmp_path: Path, bounded_git: list[Path]) -> None:
    root = repo_with_uninitialised_submodule(tmp_path / "repo")

    result = discover_files(root, IndexSettings())

    assert [f.path for f in result.files] == ["app.py"]
    assert [(s.path, s.reason) for s in result.skipped] == [
        ("test_lib/dep", "submodule not checked out")
    ]
    assert len(bounded_git) == 1  # the root only


def test_uninitialised_submodule_folder_with_stray_files_is_skipped(
    tmp_path: Path, bounded_git: list[Path]
) -> None:
    root = repo_with_uninitialised_submodule(tmp_path / "repo")
    (root / "test_lib" / "dep" / "left_over.py").write_text("x = 1\n", encoding="utf-8")

    result = discover_files(root, IndexSettings())

    assert [f.path for f in result.files] == ["app.py"]
    assert {s.path: s.reason for s in result.skipped} == {
        "test_lib/dep": "submodule not checked out"
    }


def test_folder_listing_itself_is_not_listed_again(tmp_path: Path, bounded_git: list[Path]) -> None:
    # An empty `.git` folder is no repository: git inside falls back to the
    # enclosing one, which lists the folder as "./" again. The queue must not.
    root = repo_with_uninitialised_submodule(tmp_path / "repo")
    (root / "test_lib" / "dep" / ".git").mkdir()

    result = discover_files(root, IndexSettings())

    assert [f.path for f in result.files] == ["app.py"]
    assert len(bounded_git) == 2  # the root, then the folder once


def test_discover_paths_in_uninitialised_submodule(tmp_path: Path, bounded_git: list[Path]) -> None:
    root = repo_with_uninitialised_submodule(tmp_path / "repo")
    (root / "test_lib" / "dep" / "x.py").write_text("x = 1\n", encoding="utf-8")
    (root / "new.py").write_text("y = 2\n", encoding="utf-8")

    result = discover_paths(root, IndexSettings(), ["test_lib/dep/x.py", "new.py", "app.py"])

    assert [f.path for f in result.files] == ["app.py", "new.py"]
    assert result.skipped == []


def test_discover_paths_in_folder_listing_itself(tmp_path: Path, bounded_git: list[Path]) -> None:
    root = repo_with_uninitialised_submodule(tmp_path / "repo")
    (root / "test_lib" / "dep" / ".git").mkdir()
    (root / "test_lib" / "dep" / "x.py").write_text("x = 1\n", encoding="utf-8")

    result = discover_paths(root, IndexSettings(), ["test_lib/dep/x.py", "app.py"])

    assert [f.path for f in result.files] == ["app.py"]


def test_initialised_submodule_files_are_still_listed(
    tmp_path: Path, bounded_git: list[Path]
) -> None:
    upstream = tmp_path / "upstream"
    upstream.mkdir()
    git(upstream, "init", "-q")
    (upstream / "lib.py").write_text("def helper():\n    return 2\n", encoding="utf-8")
    git(upstream, "add", "lib.py")
    git(upstream, "commit", "-q", "-m", "lib")
    root = repo_with_uninitialised_submodule(tmp_path / "repo")
    git(root, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(upstream), "ext")
    git(root, "commit", "-q", "-m", "ext")

    result = discover_files(root, IndexSettings())
    asked = discover_paths(root, IndexSettings(), ["ext/lib.py", "test_lib/dep/x.py"])

    assert [f.path for f in result.files] == [".gitmodules", "app.py", "ext/lib.py"]
    assert {s.path: s.reason for s in result.skipped} == {
        "test_lib/dep": "submodule not checked out"
    }
    assert [f.path for f in asked.files] == ["ext/lib.py"]


def test_codesift_index_ends_with_uninitialised_submodule(tmp_path: Path) -> None:
    root = repo_with_uninitialised_submodule(tmp_path / "repo")
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}

    # Before the fix this never ended (and grew to gigabytes): the timeout is the failure.
    done = subprocess.run(
        [sys.executable, "-m", "codesift.cli", "index", "--no-embed", str(root)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr

    found = subprocess.run(
        [sys.executable, "-m", "codesift.cli", "symbols", "main", "--json", "--root", str(root)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert found.returncode == 0, found.stderr
    assert "app.py" in found.stdout
