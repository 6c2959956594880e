from __future__ import annotations

import inspect
import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from codesift.config import IndexSettings
from codesift.errors import WorkspaceError
from codesift.workspace import Discovery, SkippedFile, SourceFile, discover_files, discover_paths
from codesift.workspace import discovery as discovery_module
from codesift.workspace import git_files as git_files_module

if TYPE_CHECKING:
    from conftest import Unprivileged  # tests/conftest.py

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.fixture(autouse=True)
def isolated_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Keep the developer's git config and any repo above tmp_path out of the tests.
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path.parent))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{name}_NAME", "Test")
        monkeypatch.setenv(f"GIT_{name}_EMAIL", "test@example.com")


@pytest.fixture
def settings() -> IndexSettings:
    return IndexSettings()


def write(root: Path, relpath: str, content: str | bytes = "x = 1\n") -> Path:
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def init_repo(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q")
    return root


def commit_all(root: Path) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "snapshot")


def paths(discovery: Discovery) -> list[str]:
    return [f.path for f in discovery.files]


def reasons(discovery: Discovery) -> dict[str, str]:
    return {s.path: s.reason for s in discovery.skipped}


# --- root validation -------------------------------------------------------------------


def test_missing_root_raises_workspace_error(tmp_path: Path, settings: IndexSettings) -> None:
    with pytest.raises(WorkspaceError, match="does not exist"):
        discover_files(tmp_path / "nope", settings)


def test_file_root_raises_workspace_error(tmp_path: Path, settings: IndexSettings) -> None:
    file_root = write(tmp_path, "file.py")
    with pytest.raises(WorkspaceError, match="not a folder"):
        discover_files(file_root, settings)


def test_empty_folder_has_no_files(tmp_path: Path, settings: IndexSettings) -> None:
    (tmp_path / "ws" / "empty" / "deeper").mkdir(parents=True)
    result = discover_files(tmp_path / "ws", settings)
    assert result.files == []
    assert result.skipped == []


# --- git mode --------------------------------------------------------------------------


@needs_git
def test_git_lists_tracked_and_untracked_but_not_ignored(
    tmp_path: Path, settings: IndexSettings
) -> None:
    repo = init_repo(tmp_path / "repo")
    write(repo, ".gitignore", "*.log\nsecret/\n")
    write(repo, "pkg/mod.py")
    write(repo, "README.md", "# hi\n")
    commit_all(repo)
    write(repo, "pkg/new.py")  # untracked, not ignored
    write(repo, "debug.log", "noise\n")  # ignored
    write(repo, "secret/keys.py")  # ignored folder

    result = discover_files(repo, settings)

    assert paths(result) == [".gitignore", "README.md", "pkg/mod.py", "pkg/new.py"]
    assert result.skipped == []
    mod = next(f for f in result.files if f.path == "pkg/mod.py")
    assert mod.abs_path == repo / "pkg" / "mod.py"
    assert mod.abs_path.is_absolute()
    assert mod.language == "python"
    assert mod.size == len("x = 1\n")
    assert mod.mtime_ns == (repo / "pkg" / "mod.py").stat().st_mtime_ns
    assert next(f for f in result.files if f.path == "README.md").language == "markdown"


@needs_git
def test_git_tracked_file_matching_gitignore_is_still_listed(
    tmp_path: Path, settings: IndexSettings
) -> None:
    repo = init_repo(tmp_path / "repo")
    write(repo, "gen/api.py")
    commit_all(repo)
    write(repo, ".gitignore", "gen/\n")  # ignoring after the fact does not untrack

    assert "gen/api.py" in paths(discover_files(repo, settings))


@needs_git
def test_git_subfolder_root_lists_only_its_subtree_relative_to_it(
    tmp_path: Path, settings: IndexSettings
) -> None:
    repo = init_repo(tmp_path / "repo")
    write(repo, ".gitignore", "*.tmp\n")
    write(repo, "top.py")
    write(repo, "app/main.py")
    write(repo, "app/core/util.py")
    commit_all(repo)
    write(repo, "app/fresh.py")
    write(repo, "app/scratch.tmp")  # ignored by the repo's root .gitignore

    result = discover_files(repo / "app", settings)

    assert paths(result) == ["core/util.py", "fresh.py", "main.py"]
    assert result.files[0].abs_path == repo / "app" / "core" / "util.py"


@needs_git
def test_git_subfolder_ignored_by_its_repo_is_walked(
    tmp_path: Path, settings: IndexSettings
) -> None:
    repo = init_repo(tmp_path / "repo")
    write(repo, ".gitignore", "scratch/\n")
    write(repo, "main.py")
    commit_all(repo)
    write(repo, "scratch/idea.py")

    # The user opened the ignored folder on purpose: it must not come back empty.
    assert paths(discover_files(repo / "scratch", settings)) == ["idea.py"]


@needs_git
def test_git_excluded_dir_is_skipped_even_when_tracked(
    tmp_path: Path, settings: IndexSettings
) -> None:
    repo = init_repo(tmp_path / "repo")
    write(repo, "main.go", "package main\n")
    write(repo, "vendor/lib/a.go", "package lib\n")
    write(repo, "vendor/lib/b.go", "package lib\n")
    write(repo, "web/node_modules/x/index.js", "module.exports = 1\n")
    commit_all(repo)

    result = discover_files(repo, settings)

    assert paths(result) == ["main.go"]
    # One entry per excluded folder, not one per file inside it.
    assert reasons(result) == {
        "vendor": "excluded folder",
        "web/node_modules": "excluded folder",
    }


@needs_git
def test_git_honours_codesiftignore_and_exclude_setting(
    tmp_path: Path, settings: IndexSettings
) -> None:
    repo = init_repo(tmp_path / "repo")
    write(repo, ".codesiftignore", "fixtures/\n*.snap\n")
    write(repo, "src/.codesiftignore", "/local.py\n")
    write(repo, "src/local.py")
    write(repo, "src/deep/local.py")  # `/local.py` is anchored at src/
    write(repo, "fixtures/big.py")
    write(repo, "tests/out.snap", "snapshot\n")
    write(repo, "docs/generated/api.md", "# api\n")
    write(repo, "docs/guide.md", "# guide\n")
    commit_all(repo)
    custom = replace(settings, exclude=("docs/generated/",))

    result = discover_files(repo, custom)

    assert paths(result) == [
        ".codesiftignore",
        "docs/guide.md",
        "src/.codesiftignore",
        "src/deep/local.py",
    ]
    assert result.skipped == []


@needs_git
def test_git_deleted_tracked_file_is_skipped_as_vanished(
    tmp_path: Path, settings: IndexSettings
) -> None:
    repo = init_repo(tmp_path / "repo")
    write(repo, "keep.py")
    gone = write(repo, "gone.py")
    commit_all(repo)
    gone.unlink()

    result = discover_files(repo, settings)

    assert paths(result) == ["keep.py"]
    assert reasons(result) == {"gone.py": "vanished"}


@needs_git
def test_git_nested_repository_is_listed_with_its_own_ignores(
    tmp_path: Path, settings: IndexSettings
) -> None:
    repo = init_repo(tmp_path / "repo")
    write(repo, "main.py")
    commit_all(repo)
    nested = init_repo(repo / "tools")
    write(nested, ".gitignore", "*.cache\n")
    write(nested, "tool.py")
    write(nested, "data.cache", "junk\n")

    result = discover_files(repo, settings)

    assert paths(result) == ["main.py", "tools/.gitignore", "tools/tool.py"]


@needs_git
def test_git_submodule_files_are_listed(tmp_path: Path, settings: IndexSettings) -> None:
    upstream = init_repo(tmp_path / "upstream")
    write(upstream, "lib.py")
    commit_all(upstream)
    repo = init_repo(tmp_path / "repo")
    write(repo, "main.py")
    commit_all(repo)
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(upstream), "ext")
    commit_all(repo)

    result = discover_files(repo, settings)

    assert paths(result) == [".gitmodules", "ext/lib.py", "main.py"]


@needs_git
def test_git_submodule_under_excluded_dir_is_not_listed(
    tmp_path: Path, settings: IndexSettings
) -> None:
    upstream = init_repo(tmp_path / "upstream")
    write(upstream, "lib.py")
    commit_all(upstream)
    repo = init_repo(tmp_path / "repo")
    write(repo, "main.py")
    commit_all(repo)
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(upstream), "vendor")

    result = discover_files(repo, settings)

    assert paths(result) == [".gitmodules", "main.py"]
    assert reasons(result) == {"vendor": "excluded folder"}


@needs_git
def test_git_symlink_to_folder_is_skipped(tmp_path: Path, settings: IndexSettings) -> None:
    repo = init_repo(tmp_path / "repo")
    write(repo, "src/a.py")
    (repo / "alias").symlink_to("src", target_is_directory=True)
    commit_all(repo)

    result = discover_files(repo, settings)

    assert paths(result) == ["src/a.py"]
    assert reasons(result) == {"alias": "symlink to a folder"}


def test_missing_git_falls_back_to_walk_with_gitignore(
    tmp_path: Path, settings: IndexSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)  # looks like a repo, but git cannot run
    write(root, ".git/config", "[core]\n")
    write(root, ".gitignore", "*.log\n")
    write(root, "app.py")
    write(root, "run.log", "noise\n")
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))

    result = discover_files(root, settings)

    assert paths(result) == [".gitignore", "app.py"]
    assert result.skipped == []  # .git is left out silently


# --- walk mode: ignore files -----------------------------------------------------------


def test_walk_nested_gitignore_anchoring_and_negation(
    tmp_path: Path, settings: IndexSettings
) -> None:
    root = tmp_path / "ws"
    write(root, ".gitignore", "/top.txt\n*.log\n!keep.log\n*.tmp\nout/\n")
    write(root, "top.txt", "anchored at root\n")
    write(root, "sub/top.txt", "not matched by /top.txt\n")
    write(root, "a.log", "x\n")
    write(root, "keep.log", "x\n")
    write(root, "out/gen.py")
    write(root, "sub/out/gen.py")  # `out/` has no slash before it: matches at any depth
    write(root, "sub/.gitignore", "/local.py\n*.gen\n!special.tmp\n")
    write(root, "sub/local.py")
    write(root, "sub/deeper/local.py")  # `/local.py` is anchored at sub/
    write(root, "sub/code.gen", "x\n")
    write(root, "other/code.gen", "x\n")  # sub/.gitignore does not reach here
    write(root, "sub/special.tmp", "x\n")  # the deeper file's negation wins
    write(root, "other/plain.tmp", "x\n")

    result = discover_files(root, settings)

    assert paths(result) == [
        ".gitignore",
        "keep.log",
        "other/code.gen",
        "sub/.gitignore",
        "sub/deeper/local.py",
        "sub/special.tmp",
        "sub/top.txt",
    ]
    assert result.skipped == []


def test_walk_file_in_ignored_folder_cannot_be_reincluded(
    tmp_path: Path, settings: IndexSettings
) -> None:
    root = tmp_path / "ws"
    write(root, ".gitignore", "gen/\n!gen/keep.py\n")
    write(root, "gen/keep.py")
    write(root, "main.py")

    # Same as git: a file inside an excluded folder stays excluded.
    assert paths(discover_files(root, settings)) == [".gitignore", "main.py"]


def test_walk_codesiftignore_root_and_nested(tmp_path: Path, settings: IndexSettings) -> None:
    root = tmp_path / "ws"
    write(root, ".gitignore", "*.log\n")
    write(root, ".codesiftignore", "*.snap\nbig_fixtures/\n!*.log\n")
    write(root, "pkg/.codesiftignore", "/gen.py\n")
    write(root, "pkg/gen.py")
    write(root, "pkg/inner/gen.py")
    write(root, "pkg/mod.py")
    write(root, "tests/a.snap", "x\n")
    write(root, "big_fixtures/data.py")
    write(root, "trace.log", "x\n")  # a .codesiftignore negation does not undo .gitignore

    result = discover_files(root, settings)

    assert paths(result) == [
        ".codesiftignore",
        ".gitignore",
        "pkg/.codesiftignore",
        "pkg/inner/gen.py",
        "pkg/mod.py",
    ]


def test_walk_exclude_setting_is_relative_to_root(tmp_path: Path, settings: IndexSettings) -> None:
    root = tmp_path / "ws"
    write(root, "docs/api/index.md", "# api\n")
    write(root, "docs/guide.md", "# guide\n")
    write(root, "src/docs/api/x.py")  # "/docs/api/" is anchored at the root
    write(root, "src/a_test.py")
    write(root, "src/b.py")
    custom = replace(settings, exclude=("/docs/api/", "*_test.py"))

    assert paths(discover_files(root, custom)) == ["docs/guide.md", "src/b.py", "src/docs/api/x.py"]


def test_walk_excluded_dirs_at_any_depth(tmp_path: Path, settings: IndexSettings) -> None:
    root = tmp_path / "ws"
    write(root, "main.py")
    write(root, "node_modules/x/index.js", "1\n")
    write(root, "web/app/node_modules/y/index.js", "1\n")
    write(root, "py/.venv/lib/site.py")
    write(root, "build", "#!/bin/sh\n")  # a file named like an excluded folder is kept
    (root / ".git").mkdir()
    write(root, ".git/HEAD", "ref: refs/heads/main\n")

    result = discover_files(root, settings)

    assert paths(result) == ["build", "main.py"]
    assert reasons(result) == {
        "node_modules": "excluded folder",
        "py/.venv": "excluded folder",
        "web/app/node_modules": "excluded folder",
    }


def test_walk_gitignored_excluded_dir_is_not_reported(
    tmp_path: Path, settings: IndexSettings
) -> None:
    root = tmp_path / "ws"
    write(root, ".gitignore", "node_modules/\n")
    write(root, "node_modules/x/index.js", "1\n")

    result = discover_files(root, settings)

    assert paths(result) == [".gitignore"]
    assert result.skipped == []


def test_custom_excluded_dirs_replace_defaults(tmp_path: Path, settings: IndexSettings) -> None:
    root = tmp_path / "ws"
    write(root, "node_modules/gen.py")
    write(root, "third_party/lib.py")
    custom = replace(settings, excluded_dirs=("third_party",))

    result = discover_files(root, custom)

    assert paths(result) == ["node_modules/gen.py"]
    assert reasons(result) == {"third_party": "excluded folder"}


# --- cheap per-file skips --------------------------------------------------------------


def test_size_limit(tmp_path: Path, settings: IndexSettings) -> None:
    root = tmp_path / "ws"
    write(root, "small.py", "a" * 100)
    write(root, "exact.py", "a" * 128)
    write(root, "big.py", "a" * 129)
    custom = replace(settings, max_file_bytes=128)

    result = discover_files(root, custom)

    assert paths(result) == ["exact.py", "small.py"]
    assert reasons(result) == {"big.py": "larger than 128 bytes"}


def test_binary_minified_and_lock_files_skipped_by_name(
    tmp_path: Path, settings: IndexSettings
) -> None:
    root = tmp_path / "ws"
    for name in (
        "logo.PNG",
        "pkg/mod.cpython-311.pyc",
        "lib/native.so",
        "fonts/a.woff2",
        "data/app.sqlite3",
        "dist.tar.gz",
        "doc.pdf",
    ):
        write(root, name, b"\x89binary")
    for name in ("static/app.min.js", "static/site.min.css", "static/app.js.map", "x.bundle.js"):
        write(root, name, "var a=1;\n")
    for name in ("package-lock.json", "web/yarn.lock", "Cargo.lock", "poetry.lock"):
        write(root, name, "{}\n")
    write(root, "static/app.js", "export const a = 1;\n")
    write(root, "Cargo.toml", "[package]\n")

    result = discover_files(root, settings)

    assert paths(result) == ["Cargo.toml", "static/app.js"]
    got = reasons(result)
    assert got["logo.PNG"] == "binary file type"
    assert got["pkg/mod.cpython-311.pyc"] == "binary file type"
    assert got["dist.tar.gz"] == "binary file type"
    assert got["static/app.min.js"] == "minified bundle or source map"
    assert got["static/app.js.map"] == "minified bundle or source map"
    assert got["web/yarn.lock"] == "lock file"
    assert len(got) == 15


def test_fifo_is_skipped_not_read(tmp_path: Path, settings: IndexSettings) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this platform")
    root = tmp_path / "ws"
    write(root, "a.py")
    os.mkfifo(root / "pipe.py")

    result = discover_files(root, settings)

    assert paths(result) == ["a.py"]
    assert reasons(result) == {"pipe.py": "not a regular file"}


# --- symlinks --------------------------------------------------------------------------


def test_symlink_to_an_indexed_file_is_indexed_once_under_the_target(
    tmp_path: Path, settings: IndexSettings
) -> None:
    root = tmp_path / "ws"
    write(root, "real/impl.py", "def f():\n    pass\n")
    (root / "alias.py").symlink_to("real/impl.py")
    (root / "real" / "again.py").symlink_to("impl.py")

    result = discover_files(root, settings)

    assert paths(result) == ["real/impl.py"]
    assert reasons(result) == {
        "alias.py": "symlink to real/impl.py (indexed there)",
        "real/again.py": "symlink to real/impl.py (indexed there)",
    }


def test_symlink_to_a_file_left_out_is_indexed_under_the_link(
    tmp_path: Path, settings: IndexSettings
) -> None:
    # The target is only reached through the link (its folder is excluded): the
    # link is kept, once, however many links point at the same file.
    root = tmp_path / "ws"
    write(root, "node_modules/lib/impl.py", "def f():\n    pass\n")
    (root / "alias.py").symlink_to("node_modules/lib/impl.py")
    (root / "zeta.py").symlink_to("node_modules/lib/impl.py")

    result = discover_files(root, settings)

    assert paths(result) == ["alias.py"]
    alias = result.files[0]
    assert alias.abs_path == root / "alias.py"
    assert alias.size == len("def f():\n    pass\n")  # the target's size, not the link's
    assert reasons(result)["zeta.py"] == "symlink to node_modules/lib/impl.py (indexed as alias.py)"


def test_git_symlink_to_a_tracked_file_is_indexed_once(
    tmp_path: Path, settings: IndexSettings
) -> None:
    root = init_repo(tmp_path / "repo")
    write(root, "real/impl.py", "def f():\n    pass\n")
    (root / "alias.py").symlink_to("real/impl.py")
    commit_all(root)

    result = discover_files(root, settings)

    assert paths(result) == ["real/impl.py"]
    assert reasons(result) == {"alias.py": "symlink to real/impl.py (indexed there)"}
    # The watcher's way (a few paths) gives the same verdict on the link.
    asked = discover_paths(root, settings, ["alias.py"])
    assert paths(asked) == []
    assert reasons(asked) == {"alias.py": "symlink to real/impl.py (indexed there)"}


def test_symlink_to_file_outside_root_is_skipped(tmp_path: Path, settings: IndexSettings) -> None:
    root = tmp_path / "ws"
    outside = write(tmp_path, "elsewhere/secret.py")
    write(root, "main.py")
    (root / "leak.py").symlink_to(outside)
    (root / "sneaky.py").symlink_to("../elsewhere/secret.py")

    result = discover_files(root, settings)

    assert paths(result) == ["main.py"]
    assert reasons(result) == {
        "leak.py": "symlink outside workspace",
        "sneaky.py": "symlink outside workspace",
    }


def test_root_reached_through_a_symlink_keeps_inner_links(
    tmp_path: Path, settings: IndexSettings
) -> None:
    real = tmp_path / "real-ws"
    write(real, "a.py")
    (real / "b.py").symlink_to(real / "a.py")  # absolute target under the real path
    via = tmp_path / "via"
    via.symlink_to(real, target_is_directory=True)

    result = discover_files(via, settings)

    assert paths(result) == ["a.py"]
    assert result.files[0].abs_path == via / "a.py"
    assert reasons(result) == {"b.py": "symlink to a.py (indexed there)"}


def test_directory_symlink_loop_is_not_followed(tmp_path: Path, settings: IndexSettings) -> None:
    root = tmp_path / "ws"
    write(root, "a.py")
    (root / "loop").symlink_to(".", target_is_directory=True)
    write(root, "sub/b.py")
    (root / "sub" / "up").symlink_to("..", target_is_directory=True)

    result = discover_files(root, settings)

    assert paths(result) == ["a.py", "sub/b.py"]
    assert reasons(result) == {"loop": "symlink to a folder", "sub/up": "symlink to a folder"}


def test_dangling_and_looping_file_symlinks_are_skipped(
    tmp_path: Path, settings: IndexSettings
) -> None:
    root = tmp_path / "ws"
    write(root, "a.py")
    (root / "dangling.py").symlink_to("missing.py")
    (root / "ping.py").symlink_to("pong.py")
    (root / "pong.py").symlink_to("ping.py")

    result = discover_files(root, settings)

    assert paths(result) == ["a.py"]
    got = reasons(result)
    assert got["dangling.py"] == "dangling symlink"
    assert got["ping.py"].startswith("broken symlink")
    assert got["pong.py"].startswith("broken symlink")


def test_results_are_sorted_and_typed(tmp_path: Path, settings: IndexSettings) -> None:
    root = tmp_path / "ws"
    for name in ("z.py", "a/b.rs", "a.md", "M/n.go"):
        write(root, name)

    result = discover_files(root, settings)

    assert paths(result) == sorted(["z.py", "a/b.rs", "a.md", "M/n.go"])
    assert all(isinstance(f, SourceFile) for f in result.files)
    assert {f.path: f.language for f in result.files} == {
        "M/n.go": "go",
        "a.md": "markdown",
        "a/b.rs": "rust",
        "z.py": "python",
    }


# --- discover_paths: the same verdict for a few paths ---------------------------------

# Excluded dirs, ignores, limits and name checks all in play at once.
MIXED_SETTINGS = IndexSettings(exclude=("docs/generated/", "*_test.py"), max_file_bytes=1000)

# Paths no tree below contains, asked about alongside the real ones.
MISSING_PATHS = (
    "missing.py",
    "gone.py",  # tracked, then deleted (git trees)
    "sub/missing.py",
    "nope/deeper/x.py",
    "dirlink/impl.py",  # through a symlinked folder, which the walk never enters
    "real/impl.py/x",  # below a file
    "ext/missing.py",
    "tools/missing.py",
)


def build_mixed(root: Path) -> None:
    """A tree exercising every rule discover_files applies to a file."""
    write(root, ".gitignore", "/top.txt\n*.log\n!keep.log\nout/\ngen/\n!gen/keep.py\n")
    for relpath in ("top.txt", "sub/top.txt", "a.log", "keep.log", "trace.log"):
        write(root, relpath, "text\n")
    write(root, "out/gen.py")
    write(root, "sub/out/gen.py")
    write(root, "gen/keep.py")  # inside an ignored folder: the negation cannot reach it
    write(root, "sub/.gitignore", "/local.py\n*.gen\n!special.log\n")
    write(root, "sub/local.py")
    write(root, "sub/deeper/local.py")
    write(root, "sub/code.gen", "x\n")
    write(root, "other/code.gen", "x\n")
    write(root, "sub/special.log", "x\n")
    write(root, ".codesiftignore", "*.snap\nfixtures/\n!*.log\n")
    write(root, "pkg/.codesiftignore", "/gen.py\n")
    write(root, "pkg/gen.py")
    write(root, "pkg/inner/gen.py")
    write(root, "pkg/mod.py")
    write(root, "tests/a.snap", "x\n")
    write(root, "fixtures/data.py")
    write(root, "node_modules/x/index.js", "1\n")
    write(root, "web/app/node_modules/y/index.js", "1\n")
    write(root, "py/.venv/lib/site.py")
    write(root, "vendor/lib/a.go", "package lib\n")
    write(root, "build", "#!/bin/sh\n")  # a file named like an excluded folder
    write(root, "docs/generated/api.md", "# api\n")
    write(root, "docs/guide.md", "# guide\n")
    write(root, "src/a_test.py")
    write(root, "src/b.py")
    write(root, "big.py", "a" * 1001)
    write(root, "exact.py", "a" * 1000)
    write(root, "logo.PNG", b"\x89PNG")
    write(root, "static/app.min.js", "var a=1;\n")
    write(root, "static/app.js", "export const a = 1;\n")
    write(root, "web/yarn.lock", "{}\n")
    write(root, "Cargo.lock", "{}\n")
    # Names that are globs or pathspec magic to git.
    for relpath in ("a[1].py", "a1.py", ":x.py", "x.py", "*.py", "sp ace/é.py"):
        write(root, relpath)
    write(root, "real/impl.py", "def f():\n    pass\n")
    (root / "alias.py").symlink_to("real/impl.py")
    (root / "dirlink").symlink_to("real", target_is_directory=True)
    (root / "dangling.py").symlink_to("missing.py")
    write(root.parent, "outside/secret.py")
    (root / "leak.py").symlink_to("../outside/secret.py")


def tree_paths(root: Path) -> list[str]:
    """Every file, folder and link under root, without git's own database."""
    found: list[str] = []
    for folder, dirs, names in os.walk(root):
        reldir = Path(folder).relative_to(root).as_posix()
        for name in [*dirs, *names]:
            relpath = name if reldir == "." else f"{reldir}/{name}"
            found.append(relpath)
        dirs[:] = [d for d in dirs if d != ".git"]
    return found


def filtered(full: Discovery, root: Path, asked: Iterable[str]) -> Discovery:
    """discover_files restricted to the asked paths, without folder-level entries."""
    wanted = set(asked)
    return Discovery(
        files=[f for f in full.files if f.path in wanted],
        skipped=[
            s
            for s in full.skipped
            if s.path in wanted
            and not ((root / s.path).is_dir() and not (root / s.path).is_symlink())
        ],
    )


def assert_paths_match_files(root: Path, settings: IndexSettings) -> Discovery:
    """discover_paths agrees with discover_files on every path, asked together or alone."""
    full = discover_files(root, settings)
    asked = [*tree_paths(root), *MISSING_PATHS]

    together = discover_paths(root, settings, asked)

    assert together == filtered(full, root, asked)
    for relpath in asked:
        assert discover_paths(root, settings, [relpath]) == filtered(full, root, [relpath]), relpath
    return together


def build_walk_tree(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    build_mixed(root)
    write(root, "hidden/.codesiftignore", "*.py\n")
    write(root, "hidden/a.py")
    write(root, "nested/.git/HEAD", "ref: refs/heads/main\n")  # not a repo: walked
    write(root, "nested/n.py")
    return root


def build_git_tree(tmp_path: Path) -> Path:
    upstream = init_repo(tmp_path / "upstream")
    write(upstream, "lib.py")
    write(upstream, ".codesiftignore", "skipped.py\n")
    write(upstream, "skipped.py")
    commit_all(upstream)
    repo = init_repo(tmp_path / "repo")
    build_mixed(repo)
    write(repo, "tracked/gen.py")
    gone = write(repo, "gone.py")
    commit_all(repo)
    gone.unlink()  # tracked but deleted: "vanished"
    ignores = (repo / ".gitignore").read_text(encoding="utf-8")
    write(repo, ".gitignore", ignores + "tracked/\nhidden/.codesiftignore\n")
    # A .codesiftignore git does not list is not applied in git mode.
    write(repo, "hidden/.codesiftignore", "*.py\n")
    write(repo, "hidden/a.py")
    write(repo, "fresh/new.py")  # untracked
    submodule = "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(upstream)
    git(repo, *submodule, "ext")
    git(repo, *submodule, "deps/vendor")  # inside an excluded folder
    tools = init_repo(repo / "tools")  # untracked nested repository
    write(tools, ".gitignore", "*.cache\n")
    write(tools, ".codesiftignore", "skip.py\n")
    write(tools, "tool.py")
    write(tools, "skip.py")
    write(tools, "data.cache", "junk\n")
    write(tools, "inner/deep.py")
    return repo


def test_paths_match_files_in_walk_mode(tmp_path: Path) -> None:
    root = build_walk_tree(tmp_path)

    result = assert_paths_match_files(root, MIXED_SETTINGS)

    # Guard against a vacuous match: the tree does exercise the rules.
    assert {"pkg/mod.py", "real/impl.py", "a[1].py", ":x.py", "nested/n.py"} <= set(paths(result))
    assert {"big.py", "leak.py", "dirlink", "dangling.py", "logo.PNG", "alias.py"} <= set(
        reasons(result)
    )
    assert "hidden/a.py" not in paths(result)


@needs_git
def test_paths_match_files_in_git_mode(tmp_path: Path) -> None:
    root = build_git_tree(tmp_path)

    result = assert_paths_match_files(root, MIXED_SETTINGS)

    found = set(paths(result))
    assert {"pkg/mod.py", "a[1].py", ":x.py", "fresh/new.py", "tracked/gen.py"} <= found
    assert {"ext/lib.py", "tools/tool.py", "tools/inner/deep.py", "hidden/a.py"} <= found
    assert not {"ext/skipped.py", "tools/skip.py", "tools/data.cache", "deps/vendor/lib.py"} & found
    assert reasons(result)["gone.py"] == "vanished"


@needs_git
def test_paths_match_files_in_git_subfolder_root(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    write(repo, ".gitignore", "*.tmp\n")
    write(repo, "top.py")
    build_mixed(repo / "app")
    write(repo, "app/scratch.tmp", "x\n")
    commit_all(repo)
    write(repo, "app/fresh.py")

    result = assert_paths_match_files(repo / "app", MIXED_SETTINGS)

    assert {"fresh.py", "pkg/mod.py"} <= set(paths(result))
    assert "scratch.tmp" not in paths(result)


@needs_git
def test_paths_match_files_in_git_subfolder_ignored_by_its_repo(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "repo")
    write(repo, ".gitignore", "scratch/\n")
    write(repo, "main.py")
    commit_all(repo)
    build_mixed(repo / "scratch")

    result = assert_paths_match_files(repo / "scratch", MIXED_SETTINGS)

    assert "pkg/mod.py" in paths(result)  # walked, not listed as empty


def test_paths_match_files_when_git_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "ws"
    build_mixed(root)
    write(root, ".git/config", "[core]\n")
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))

    result = assert_paths_match_files(root, MIXED_SETTINGS)

    assert "keep.log" in paths(result)
    assert "a.log" not in paths(result)


@needs_git
def test_paths_match_files_when_too_many_for_pathspecs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = build_git_tree(tmp_path)
    # Every call falls back to a full listing, filtered afterwards.
    monkeypatch.setattr(git_files_module, "_MAX_PATHSPECS", 1)

    assert_paths_match_files(root, MIXED_SETTINGS)


def spy_on_git(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, ...]]:
    calls: list[tuple[str, ...]] = []
    run_git = git_files_module._run_git

    def spy(directory: Path, *args: str) -> subprocess.CompletedProcess[bytes] | None:
        calls.append(args)
        return run_git(directory, *args)

    monkeypatch.setattr(git_files_module, "_run_git", spy)
    return calls


def refuse_full_listing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object) -> object:
        raise AssertionError("discover_paths walked the whole tree")

    monkeypatch.setattr(discovery_module, "_walk", refuse)


@needs_git
def test_git_mode_asks_git_about_the_paths_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = build_git_tree(tmp_path)
    calls = spy_on_git(monkeypatch)
    refuse_full_listing(monkeypatch)

    result = discover_paths(root, MIXED_SETTINGS, ["pkg/mod.py", "tools/tool.py"])

    assert paths(result) == ["pkg/mod.py", "tools/tool.py"]
    listings = [c for c in calls if "ls-files" in c]
    assert listings == [
        (
            "--literal-pathspecs", "ls-files", "-co", "--exclude-standard", "-z", "--",
            ".codesiftignore", "pkg/.codesiftignore", "pkg/mod.py", "tools",
        ),
        (
            "--literal-pathspecs", "ls-files", "-co", "--exclude-standard", "-z", "--",
            ".codesiftignore", "tool.py",
        ),
    ]  # fmt: skip


def test_walk_mode_reads_only_ancestor_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = build_walk_tree(tmp_path)
    refuse_full_listing(monkeypatch)
    scanned: list[str] = []
    scandir = os.scandir

    def spy(path: Path) -> object:
        scanned.append(Path(path).relative_to(root).as_posix())
        return scandir(path)

    monkeypatch.setattr(os, "scandir", spy)

    result = discover_paths(root, MIXED_SETTINGS, ["pkg/inner/gen.py"])

    assert paths(result) == ["pkg/inner/gen.py"]
    assert scanned == [".", "pkg", "pkg/inner"]  # opened to check it is readable, not listed


# --- discover_paths: targeted cases -----------------------------------------------------


def both_modes(tmp_path: Path, build: Callable[[Path], None]) -> list[Path]:
    walked = tmp_path / "walked"
    build(walked)
    roots = [walked]
    if shutil.which("git") is not None:
        repo = init_repo(tmp_path / "repo")
        build(repo)
        commit_all(repo)
        roots.append(repo)
    return roots


def test_path_under_excluded_folder_is_neither_found_nor_reported(tmp_path: Path) -> None:
    def build(root: Path) -> None:
        write(root, "web/node_modules/x/index.js", "1\n")
        write(root, "web/app.js", "1\n")

    for root in both_modes(tmp_path, build):
        result = discover_paths(root, IndexSettings(), ["web/node_modules/x/index.js"])
        assert result == Discovery(files=[], skipped=[])
        assert paths(discover_paths(root, IndexSettings(), ["web/app.js"])) == ["web/app.js"]


def test_ignored_path_is_neither_found_nor_reported(tmp_path: Path) -> None:
    def build(root: Path) -> None:
        write(root, ".gitignore", "build_out/\n*.tmp\n")
        write(root, "build_out/a.py")
        write(root, "src/x.tmp", "x\n")
        write(root, ".codesiftignore", "gen_*.py\n")
        write(root, "src/gen_api.py")

    for root in both_modes(tmp_path, build):
        asked = ["build_out/a.py", "src/x.tmp", "src/gen_api.py"]
        assert discover_paths(root, IndexSettings(), asked) == Discovery(files=[], skipped=[])


def test_deleted_path(tmp_path: Path) -> None:
    def build(root: Path) -> None:
        write(root, "keep.py")
        write(root, "gone.py")

    roots = both_modes(tmp_path, build)
    for root in roots:
        (root / "gone.py").unlink()
    walked, *repos = roots

    assert discover_paths(walked, IndexSettings(), ["gone.py", "keep.py"]) == Discovery(
        files=discover_files(walked, IndexSettings()).files, skipped=[]
    )
    for repo in repos:
        # Still tracked: reported as vanished, as discover_files does.
        result = discover_paths(repo, IndexSettings(), ["gone.py"])
        assert result == Discovery(files=[], skipped=[SkippedFile("gone.py", "vanished")])


def test_glob_and_magic_characters_are_literal(tmp_path: Path) -> None:
    def build(root: Path) -> None:
        for name in ("a[1].py", "a1.py", ":x.py", "x.py", "*.py", "b?.py", "bc.py"):
            write(root, name)

    for root in both_modes(tmp_path, build):
        full = {f.path: f for f in discover_files(root, IndexSettings()).files}
        for name in ("a[1].py", ":x.py", "*.py", "b?.py"):
            assert discover_paths(root, IndexSettings(), [name]).files == [full[name]]


def test_paths_are_normalised_and_outside_paths_dropped(tmp_path: Path) -> None:
    def build(root: Path) -> None:
        write(root, "pkg/mod.py")
        write(root, "top.py")
        write(root.parent, "elsewhere.py")

    for root in both_modes(tmp_path, build):
        asked = [
            "./pkg/mod.py",
            "pkg//mod.py",
            str(root / "top.py"),  # absolute, inside the root
            "../elsewhere.py",
            "pkg/../../elsewhere.py",
            str(root.parent / "elsewhere.py"),
            "",
            ".",
            "pkg",  # a folder
        ]
        result = discover_paths(root, IndexSettings(), asked)
        assert paths(result) == ["pkg/mod.py", "top.py"]
        assert result.files[0].abs_path == root / "pkg" / "mod.py"
        assert result.skipped == []


def test_absolute_path_through_the_real_root_is_accepted(tmp_path: Path) -> None:
    real = tmp_path / "real-ws"
    write(real, "a.py")
    via = tmp_path / "via"
    via.symlink_to(real, target_is_directory=True)

    result = discover_paths(via, IndexSettings(), [str(real / "a.py")])

    assert result.files == discover_files(via, IndexSettings()).files


# Run as a user for whom permissions bind (root lists every folder): `filtered` is
# defined again in that process from this module's source.
UNREADABLE_FOLDER_CHECK = """
from __future__ import annotations
import json, sys
from collections.abc import Iterable
from pathlib import Path
from codesift.config import IndexSettings
from codesift.workspace import Discovery, discover_files, discover_paths
{filtered}
root, asked = Path(sys.argv[1]), sys.argv[2:]
full = discover_files(root, IndexSettings())
together = discover_paths(root, IndexSettings(), asked)
expected = filtered(full, root, asked)
print(json.dumps({{
    "equal": together == expected, "together": repr(together), "expected": repr(expected),
    "files": [f.path for f in full.files],
}}))
"""


def test_path_in_unreadable_folder_matches_files(unprivileged: Unprivileged) -> None:
    root = unprivileged.tmp_path / "ws"
    write(root, "ok/a.py")
    write(root, "locked/b.py")
    write(root, "locked/inner/c.py")
    (root / "locked").chmod(0)
    try:
        asked = ["ok/a.py", "locked/b.py", "locked/inner/c.py"]
        code = UNREADABLE_FOLDER_CHECK.format(filtered=inspect.getsource(filtered))
        result = unprivileged.python(code, root, *asked)
        assert result.returncode == 0, result.stderr
        outcome = json.loads(result.stdout)
        assert outcome["files"] == ["ok/a.py"]  # the locked folder cannot be listed
        assert outcome["equal"], (outcome["together"], outcome["expected"])
    finally:
        (root / "locked").chmod(0o755)


def test_discover_paths_checks_the_root(tmp_path: Path) -> None:
    with pytest.raises(WorkspaceError, match="does not exist"):
        discover_paths(tmp_path / "nope", IndexSettings(), ["a.py"])
    assert discover_paths(tmp_path, IndexSettings(), []) == Discovery(files=[], skipped=[])


def test_output_folders_are_skipped_only_where_a_build_puts_them(
    tmp_path: Path, settings: IndexSettings
) -> None:
    root = tmp_path / "ws"
    write(root, "main.go")
    write(root, "build/out.txt", "x\n")  # at the root: build output
    write(root, "web/package.json", "{}\n")
    write(root, "web/dist/app.js", "1\n")  # beside a manifest: build output
    write(root, "crate/Cargo.toml", "[package]\n")
    write(root, "crate/target/debug/x.rs", "fn x() {}\n")
    write(root, "go/build/build.go", "package build\n")  # a source package
    write(root, "lib/dist/dist.py", "x = 1\n")  # a module named dist

    result = discover_files(root, settings)

    assert paths(result) == [
        "crate/Cargo.toml",
        "go/build/build.go",
        "lib/dist/dist.py",
        "main.go",
        "web/package.json",
    ]
    assert reasons(result) == {
        "build": "excluded folder",
        "crate/target": "excluded folder",
        "web/dist": "excluded folder",
    }
    # An empty list keeps them everywhere.
    kept = discover_files(root, replace(settings, output_dirs=()))
    assert "build/out.txt" in paths(kept) and "web/dist/app.js" in paths(kept)


def test_the_index_folder_is_neither_indexed_nor_reported(
    tmp_path: Path, settings: IndexSettings
) -> None:
    root = tmp_path / "ws"
    write(root, "main.py")
    write(root, ".codesift/index.db", "SQLite format 3\x00")
    write(root, ".codesift/.gitignore", "*\n")
    result = discover_files(root, settings)
    assert paths(result) == ["main.py"]
    assert reasons(result) == {}


# --- stamps and the git probe ------------------------------------------------------------


def test_stamps_are_the_listed_files_size_and_time(tmp_path: Path, settings: IndexSettings) -> None:
    root = build_walk_tree(tmp_path)
    write(root, "big.py", "x" * (settings.max_file_bytes + 1))
    listed = discover_files(root, settings)
    stamps = discovery_module.discover_stamps(root, settings)
    assert stamps == {f.path: (f.size, f.mtime_ns) for f in listed.files}
    assert "big.py" not in stamps


def test_outside_git_no_git_process_is_started(
    tmp_path: Path, settings: IndexSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "plain"
    write(root, "a.py")
    write(root, "pkg/b.py")
    calls = spy_on_git(monkeypatch)
    assert paths(discover_files(root, settings)) == ["a.py", "pkg/b.py"]
    assert discovery_module.discover_stamps(root, settings).keys() == {"a.py", "pkg/b.py"}
    assert calls == []


@needs_git
def test_a_folder_inside_a_repository_still_asks_git(
    tmp_path: Path, settings: IndexSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = init_repo(tmp_path / "repo")
    write(repo, "sub/a.py")
    write(repo, "sub/.gitignore", "hidden.py\n")
    write(repo, "sub/hidden.py")
    commit_all(repo)
    link = tmp_path / "link"
    link.symlink_to(repo / "sub")  # a path whose own parents hold no .git
    calls = spy_on_git(monkeypatch)
    assert paths(discover_files(link, settings)) == [".gitignore", "a.py"]
    assert any("ls-files" in c for c in calls)


# --- a nested folder with its own index ------------------------------------------------


def test_a_nested_folder_with_its_own_index_is_left_to_that_index(
    tmp_path: Path, settings: IndexSettings
) -> None:
    root = tmp_path / "scratch"
    write(root, "notes.py")
    write(root, "tools/cli.py")
    write(root, "tools/.codesift/index.db", b"SQLite format 3\x00")
    write(root, "libs/fmt/fmt.py")
    write(root, "libs/fmt/.codesift/index.db", b"SQLite format 3\x00")

    result = discover_files(root, settings)

    assert paths(result) == ["notes.py"]
    own = "folder with its own codesift index"
    assert reasons(result) == {"tools": own, "libs/fmt": own}
    asked = discover_paths(root, settings, ["tools/cli.py", "notes.py"])
    assert paths(asked) == ["notes.py"]


@needs_git
def test_git_nested_folder_with_its_own_index_is_left_to_that_index(
    tmp_path: Path, settings: IndexSettings
) -> None:
    root = init_repo(tmp_path / "mono")
    write(root, "app.py")
    write(root, "svc/api.py")
    commit_all(root)
    write(root, "svc/.codesift/.gitignore", "*\n")
    write(root, "svc/.codesift/index.db", b"SQLite format 3\x00")

    result = discover_files(root, settings)

    assert paths(result) == ["app.py"]
    assert reasons(result) == {"svc": "folder with its own codesift index"}
