from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import replace
from pathlib import Path

import pytest

from codesift.config import IndexSettings
from codesift.errors import WorkspaceError
from codesift.workspace import Discovery, SourceFile, discover_files

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
    write(root, "build/gen.py")
    write(root, "third_party/lib.py")
    custom = replace(settings, excluded_dirs=("third_party",))

    result = discover_files(root, custom)

    assert paths(result) == ["build/gen.py"]
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


def test_symlink_to_file_inside_root_is_kept(tmp_path: Path, settings: IndexSettings) -> None:
    root = tmp_path / "ws"
    write(root, "real/impl.py", "def f():\n    pass\n")
    (root / "alias.py").symlink_to("real/impl.py")

    result = discover_files(root, settings)

    assert paths(result) == ["alias.py", "real/impl.py"]
    alias = result.files[0]
    assert alias.abs_path == root / "alias.py"
    assert alias.size == len("def f():\n    pass\n")  # the target's size, not the link's


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

    assert paths(result) == ["a.py", "b.py"]
    assert result.files[0].abs_path == via / "a.py"


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
