"""History faults: git history that cannot be read (a damaged, shallow or partial
clone lacks objects) was walked again by every index run and every CLI search,
each time failing with "object not found", and left every node undated. Now the
failure is recorded with its HEAD, the files it concerns are dated by their
modification time, and the walk is retried only once HEAD moves."""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest

import codesift.history.update as history_update
from codesift.config import load_settings
from codesift.history.gitlog import CommitDiff
from codesift.history.update import HistoryStatus, history_failure, history_status
from codesift.indexer import Indexer, IndexSummary
from codesift.store.database import open_database

pytestmark = pytest.mark.usefixtures("git_isolation")

OLD = "2024-01-10T12:00:00Z"
NEW = "2024-02-10T12:00:00Z"
OLD_TS = 1704888000
NEW_TS = 1707566400
CHANGE_WARNING = "git history cannot be read"


def git(root: Path, *args: str, when: str | None = None) -> str:
    env = dict(os.environ)
    if when is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = when
    result = subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True, env=env
    )
    return result.stdout.strip()


def fn(name: str, value: int) -> str:
    return f"def {name}():\n    return {value}\n"


def object_file(root: Path, oid: str) -> Path:
    return root / ".git" / "objects" / oid[:2] / oid[2:]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """Two commits in loose objects: a.py changes in the second, b.py does not.
    Old file modification times, so a modification-time date is recognisable."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    git(root, "config", "user.name", "Test")
    git(root, "config", "user.email", "test@example.com")
    (root / "a.py").write_text(fn("alpha", 1))
    (root / "b.py").write_text(fn("beta", 1))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "first", when=OLD)
    (root / "a.py").write_text(fn("alpha", 2))
    git(root, "commit", "-q", "-am", "second", when=NEW)
    mtime = 1_600_000_000  # 2020-09-13, before both commits
    for name in ("a.py", "b.py"):
        os.utime(root / name, (mtime, mtime))
    return root


@pytest.fixture
def index(tmp_path: Path) -> Iterator[tuple[apsw.Connection, Indexer]]:
    conn = open_database(tmp_path / "index" / "index.db")
    yield conn, Indexer(tmp_path / "repo", load_settings(tmp_path / "repo"), conn)
    conn.close()


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The commits the history walk applies, counted at its entry point, once each
    (git's reader stops at a missing object and libgit2's reads the same commits
    again, file by file)."""
    seen: list[str] = []
    real = history_update._apply_commit

    def counted(diff: CommitDiff, *args: object) -> set[str]:
        if diff.oid not in seen:
            seen.append(diff.oid)
        return real(diff, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(history_update, "_apply_commit", counted)
    return seen


def run(indexer: Indexer) -> IndexSummary:
    """An index run and the history pass that follows it (engine/history.py)."""
    summary = indexer.run()
    history_update.update_history(indexer.conn, indexer.root)
    return summary


def times(conn: apsw.Connection) -> dict[str, tuple[int, int, int]]:
    return {
        str(name): (int(created), int(changed), int(commit))
        for name, created, changed, commit in conn.execute(
            "SELECT name, created, changed, changed_commit FROM nodes WHERE kind = 'function'"
        )
    }


def history_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def meta(conn: apsw.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def test_missing_blob_is_recorded_once_and_not_walked_again(
    repo: Path,
    index: tuple[apsw.Connection, Indexer],
    walks: list[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    conn, indexer = index
    old_blob = git(repo, "rev-parse", "HEAD~1:a.py")
    object_file(repo, old_blob).unlink()  # the first version of a.py is gone
    head = git(repo, "rev-parse", "HEAD")
    caplog.set_level(logging.WARNING)

    run(indexer)

    warnings = history_warnings(caplog)
    assert len(warnings) == 1 and CHANGE_WARNING in warnings[0]
    assert "object not found" in warnings[0]
    failure = history_failure(conn)
    assert failure is not None
    assert (failure.head, failure.files) == (head, 1)
    assert "object not found" in failure.error
    assert history_status(conn) == HistoryStatus("git", False, failure.error, head, 1)
    # a.py's history cannot be read: its modification time; b.py's history can.
    assert times(conn) == {"alpha": (1_600_000_000, 1_600_000_000, 0), "beta": (OLD_TS,) * 2 + (1,)}
    assert len(walks) == 2
    recorded = meta(conn, "history_error")

    caplog.clear()
    walks.clear()
    run(indexer)
    (repo / "b.py").write_text(fn("beta", 1) + fn("gamma", 3))  # uncommitted: re-indexed
    run(indexer)

    assert walks == []  # not walked again at the same HEAD
    assert history_warnings(caplog) == []
    assert meta(conn, "history_error") == recorded
    assert times(conn)["alpha"] == (1_600_000_000, 1_600_000_000, 0)
    assert times(conn)["gamma"][2] == -1  # uncommitted lines are still seen


def test_history_is_read_again_when_head_moves(
    repo: Path,
    index: tuple[apsw.Connection, Indexer],
    walks: list[str],
    caplog: pytest.LogCaptureFixture,
    tmp_path: Path,
) -> None:
    conn, indexer = index
    old_blob = object_file(repo, git(repo, "rev-parse", "HEAD~1:a.py"))
    kept = tmp_path / "kept-object"
    shutil.move(old_blob, kept)
    run(indexer)
    assert history_failure(conn) is not None

    # Still missing after a new commit: tried again, and recorded at the new HEAD.
    (repo / "c.py").write_text(fn("gamma", 3))
    git(repo, "add", "c.py")
    git(repo, "commit", "-q", "-m", "third", when=NEW)
    walks.clear()
    caplog.clear()
    caplog.set_level(logging.WARNING)
    run(indexer)
    assert len(walks) == 3  # read again from the first commit
    assert len(history_warnings(caplog)) == 1
    failure = history_failure(conn)
    assert failure is not None and failure.head == git(repo, "rev-parse", "HEAD")

    # The object is back (say, fetched) and HEAD moves: the history is whole again.
    shutil.move(kept, old_blob)
    git(repo, "commit", "-q", "--allow-empty", "-m", "fourth", when=NEW)
    run(indexer)
    assert history_failure(conn) is None
    assert meta(conn, "history_unreadable") is None
    assert times(conn)["alpha"] == (OLD_TS, NEW_TS, 2)


def test_missing_tree_dates_every_file_by_modification_time(
    repo: Path,
    index: tuple[apsw.Connection, Indexer],
    walks: list[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    conn, indexer = index
    object_file(repo, git(repo, "rev-parse", "HEAD~1^{tree}")).unlink()
    caplog.set_level(logging.WARNING)

    summary = run(indexer)

    assert summary.files == 2
    failure = history_failure(conn)
    assert failure is not None and failure.files is None  # no file's history is known
    assert history_status(conn).mtime_files == 2
    assert len(history_warnings(caplog)) == 1
    assert times(conn) == {
        "alpha": (1_600_000_000, 1_600_000_000, 0),
        "beta": (1_600_000_000, 1_600_000_000, 0),
    }
    walks.clear()
    caplog.clear()
    run(indexer)
    assert walks == [] and history_warnings(caplog) == []


def test_shallow_clone_is_indexed_with_times(
    repo: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{repo}", str(clone))
    conn = open_database(tmp_path / "shallow-index" / "index.db")
    caplog.set_level(logging.WARNING)
    try:
        summary = run(Indexer(clone, load_settings(clone), conn))
        assert summary.files == 2
        assert history_warnings(caplog) == []
        assert history_failure(conn) is None
        assert history_status(conn).available
        # The one commit the clone has dates everything it holds.
        assert times(conn) == {"alpha": (NEW_TS, NEW_TS, 1), "beta": (NEW_TS, NEW_TS, 1)}
    finally:
        conn.close()


def test_no_op_run_with_recorded_failure_writes_nothing(
    repo: Path, index: tuple[apsw.Connection, Indexer]
) -> None:
    conn, indexer = index
    object_file(repo, git(repo, "rev-parse", "HEAD~1:a.py")).unlink()
    run(indexer)
    assert history_failure(conn) is not None
    before = conn.total_changes()

    conn.execute("PRAGMA query_only = 1")  # any write now raises ReadOnlyError
    try:
        summary = run(indexer)
    finally:
        conn.execute("PRAGMA query_only = 0")

    assert summary.files == 2 and summary.indexed == 0
    assert conn.total_changes() == before


def test_blobless_clone_dates_unreadable_files_by_modification_time(
    repo: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    git(repo, "config", "uploadpack.allowFilter", "true")
    clone = tmp_path / "blobless"
    git(tmp_path, "clone", "-q", "--filter=blob:none", f"file://{repo}", str(clone))
    mtime = 1_600_000_000
    os.utime(clone / "a.py", (mtime, mtime))
    conn = open_database(tmp_path / "blobless-index" / "index.db")
    caplog.set_level(logging.WARNING)
    try:
        run(Indexer(clone, load_settings(clone), conn))
        run(Indexer(clone, load_settings(clone), conn))
        assert len(history_warnings(caplog)) == 1
        failure = history_failure(conn)
        assert failure is not None and failure.files == 1
        # a.py's first version was never fetched; b.py's only version is checked out.
        assert times(conn) == {"alpha": (mtime, mtime, 0), "beta": (OLD_TS, OLD_TS, 1)}
    finally:
        conn.close()
