"""The one-shot freshness check (engine/freshness.py).

`index_is_current` must say True only when an index run would find nothing to
do, so each test compares it with what the indexer then does.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codesift.engine import EngineListener, Workspace, reindex
from codesift.engine.freshness import HISTORY_META_KEYS, git_head, index_is_current
from codesift.store.database import open_database
from conftest import MakeRepo, commit_all, run_git, write_files

FILES = {
    ".codesift.toml": "[embedding]\nenabled = false\n",
    "shop/orders.py": "def place_order(order):\n    return charge_card(order.total)\n",
    "shop/payments.py": "def charge_card(amount):\n    return amount > 0\n",
    "README.md": "# Shop\n\nOrders and payments.\n",
    "logo.png": b"\x89PNG\r\n\x1a\n\x00\x00",  # skipped by name: never in the index
}


def current(root: Path) -> bool:
    ws = Workspace.at(root.resolve())
    conn = open_database(ws.db_path, create=False)
    try:
        return index_is_current(ws.root, ws.settings.index, conn)
    finally:
        conn.close()


def index(root: Path) -> int:
    """Files the run (re)indexed or removed."""
    report, _, conn = reindex(Workspace.at(root.resolve()), EngineListener(), quiet=True)
    conn.close()
    return report.summary.indexed + report.summary.deleted


def test_meta_keys_are_the_history_updates() -> None:
    from codesift.history import update

    assert HISTORY_META_KEYS == (
        "history_head",
        "history_prefix",
        update._FAILURE_KEY,
        update._UNREADABLE_KEY,
        "history_dirty",
    )
    # The keys are spelled where the history pass and its state live.
    source = "".join(
        (Path(update.__file__).parent / name).read_text(encoding="utf-8")
        for name in ("update.py", "state.py")
    )
    for key in HISTORY_META_KEYS:
        assert f'"{key}"' in source


def test_outside_git_a_change_is_seen_and_an_unchanged_index_is_current(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    write_files(root, FILES)
    index(root)
    assert current(root)

    (root / "shop/orders.py").write_text("def place_order(order):\n    return None\n")
    assert not current(root)
    assert index(root) == 1 and current(root)

    write_files(root, {"shop/refunds.py": "def refund(order):\n    return order\n"})
    assert not current(root)
    assert index(root) == 1 and current(root)

    (root / "shop/refunds.py").unlink()
    assert not current(root)
    assert index(root) == 1 and current(root)

    os.utime(root / "README.md", ns=(1, 1))  # a touch: same content, new time
    assert not current(root)
    index(root)
    assert current(root)


def test_a_file_skipped_for_its_content_stays_current(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    write_files(root, {**FILES, "data/blob.txt": b"\x00\x01\x02binary\x00" * 50})
    index(root)
    assert current(root)  # the skipped file is remembered with its stamp
    (root / "data/blob.txt").write_bytes(b"\x00changed\x00" * 50)
    assert not current(root)


@pytest.mark.usefixtures("git_isolation")
def test_in_git_a_new_commit_makes_the_history_stale(make_repo: MakeRepo) -> None:
    root = make_repo(FILES)
    assert index(root) > 0
    assert current(root)

    commit_all(root, "nothing changed on disk")  # --allow-empty: HEAD moves
    assert not current(root)
    assert index(root) == 0  # no file changed; the history walked the new commit
    assert current(root)

    (root / "shop/payments.py").write_text("def charge_card(amount):\n    return False\n")
    assert not current(root)
    index(root)
    assert current(root)


@pytest.mark.usefixtures("git_isolation")
def test_a_subfolder_workspace_of_a_repository(make_repo: MakeRepo) -> None:
    repo = make_repo({"shop/" + path: text for path, text in FILES.items()})
    root = repo / "shop"
    index(root)
    assert current(root)
    commit_all(repo, "elsewhere")
    assert not current(root)


@pytest.mark.usefixtures("git_isolation")
def test_a_folder_its_repository_ignores_is_outside_git_for_the_check_too(
    make_repo: MakeRepo,
) -> None:
    # A workspace in a folder the enclosing repository ignores (a dotfiles repo, a
    # vendored or generated folder) is walked and timed by modification times: an
    # unchanged index is current whatever the enclosing repository's HEAD does
    # (before, the check compared that HEAD with none and loaded the indexer for
    # every one-shot search).
    repo = make_repo({".gitignore": "scratch/\n", "app.py": "x = 1\n"})
    root = repo / "scratch" / "shop"
    write_files(root, FILES)
    assert index(root) > 0
    assert current(root)
    commit_all(repo, "the enclosing repository moves on")
    assert current(root)
    (root / "shop/orders.py").write_text("def place_order(order):\n    return None\n")
    assert not current(root)
    assert index(root) == 1 and current(root)
    # No longer ignored: git lists it and times it now, so the index is stale.
    (repo / ".gitignore").write_text("", encoding="utf-8")
    commit_all(repo, "track scratch/")
    assert not current(root)
    index(root)
    assert current(root)


@pytest.mark.usefixtures("git_isolation")
def test_git_head_reads_loose_packed_detached_and_linked_work_trees(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    root = make_repo(FILES)
    head = run_git(root, "rev-parse", "HEAD").strip()
    assert git_head(str(root)) == head
    run_git(root, "pack-refs", "--all")
    assert not (root / ".git/refs/heads/main").exists()
    assert not (root / ".git/refs/heads/master").exists()
    assert git_head(str(root)) == head
    commit_all(root, "second")
    second = run_git(root, "rev-parse", "HEAD").strip()
    assert git_head(str(root)) == second  # the loose ref wins over the packed one
    run_git(root, "checkout", "-q", "--detach", head)
    assert git_head(str(root)) == head
    linked = tmp_path / "linked"
    run_git(root, "worktree", "add", "-q", "--detach", str(linked), second)
    assert (linked / ".git").is_file()
    assert git_head(str(linked)) == second
    unborn = make_repo({}, name="unborn", commit=False)
    assert git_head(str(unborn)) is None
