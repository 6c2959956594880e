"""The history pass after the first answer: its two readers agree, it resumes
after being killed or cancelled half-way, it walks only the indexed folder's
commits, and one-shot commands answer before it (a time filter waits for it).

Real git repositories with generated histories (tests/deep_history.py), real
SQLite files, the real `codesift` command in subprocesses.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import apsw
import pytest

from codesift.config import load_settings
from codesift.history import gitlog
from codesift.history import update as history_update
from codesift.history.update import history_pending, update_history
from codesift.indexer import Indexer
from codesift.store.database import open_database
from codesift.store.locks import IndexLock
from deep_history import make_deep_history

pytestmark = pytest.mark.usefixtures("git_isolation")

DEADLINE = 120.0
SERVER_DIR = Path(history_update.__file__).resolve().parents[2]


def indexed(root: Path, db: Path) -> apsw.Connection:
    """The folder indexed into `db`, with no history pass yet."""
    conn = open_database(db)
    Indexer(root, load_settings(root), conn).run()
    return conn


def snapshot(conn: apsw.Connection) -> dict[str, Any]:
    """What the history pass wrote, by what it is (not by row ids)."""
    return {
        "commits": conn.execute(
            "SELECT id, oid, time, subject FROM history_commits ORDER BY id"
        ).fetchall(),
        "lines": conn.execute("SELECT path, lines FROM history_files ORDER BY path").fetchall(),
        "nodes": conn.execute(
            "SELECT f.path, n.qualified_name, n.start_line, n.created, n.changed, h.oid"
            " FROM nodes n JOIN files f ON f.id = n.file_id"
            " LEFT JOIN history_commits h ON h.id = n.changed_commit ORDER BY 1, 2, 3"
        ).fetchall(),
        "chunks": conn.execute(
            "SELECT f.path, c.layer, c.start_line, c.created, c.changed FROM chunks c"
            " JOIN files f ON f.id = c.file_id ORDER BY 1, 2, 3"
        ).fetchall(),
        "head": conn.execute("SELECT value FROM meta WHERE key = 'history_head'").fetchall(),
    }


@pytest.fixture(scope="module")
def deep_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_deep_history(tmp_path_factory.mktemp("deep") / "repo", commits=1500)


@pytest.fixture
def full_pass(deep_repo: Path, tmp_path: Path) -> dict[str, Any]:
    conn = indexed(deep_repo, tmp_path / "full.db")
    try:
        stats = update_history(conn, deep_repo)
        assert stats.complete and stats.commits > 1000
        return snapshot(conn)
    finally:
        conn.close()


def test_git_and_libgit2_readers_write_the_same_history(
    deep_repo: Path, tmp_path: Path, full_pass: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert gitlog.git_program() is not None  # the first pass read `git log`
    monkeypatch.setattr(history_update, "git_program", lambda: None)
    conn = indexed(deep_repo, tmp_path / "libgit2.db")
    try:
        assert update_history(conn, deep_repo).complete
        assert snapshot(conn) == full_pass
    finally:
        conn.close()


def test_a_cancelled_pass_goes_on_from_its_last_step(
    deep_repo: Path, tmp_path: Path, full_pass: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(history_update, "PROGRESS_SECONDS", 0.0)  # a report per commit
    conn = indexed(deep_repo, tmp_path / "cancelled.db")
    cancel = threading.Event()
    seen: list[history_update.HistoryProgress] = []

    def progress(event: history_update.HistoryProgress) -> None:
        seen.append(event)
        if event.phase == "walking" and event.done >= 300:
            cancel.set()

    try:
        stats = update_history(conn, deep_repo, progress=progress, cancel=cancel)
        assert not stats.complete
        left = history_pending(conn, deep_repo)
        assert left.pending and 300 <= left.commits_done < left.commits_total
        assert seen[-1] == history_update.HistoryProgress(
            "walking", left.commits_done, left.commits_total
        )
        walked: list[int] = []
        rest = update_history(
            conn,
            deep_repo,
            progress=lambda e: walked.append(e.done) if e.phase == "walking" else None,
        )
        assert rest.complete and rest.commits == left.commits_total - left.commits_done
        assert not history_pending(conn, deep_repo).pending
        assert snapshot(conn) == full_pass
    finally:
        conn.close()


KILLED_PASS = """
import contextlib, sys, time
from pathlib import Path
from codesift.history import update
from codesift.store.database import open_database

update.CHECKPOINT_SECONDS = 0.0
steps = 0

@contextlib.contextmanager
def step():
    global steps
    steps += 1
    if steps == 400:
        print("ready", flush=True)
        time.sleep(600)  # killed here, before this step's transaction
    yield True

conn = open_database(Path(sys.argv[1]))
update.update_history(conn, Path(sys.argv[2]), batch_guard=step)
print("finished", flush=True)
"""


def test_a_killed_pass_resumes_and_ends_with_the_same_rows(
    deep_repo: Path, tmp_path: Path, full_pass: dict[str, Any]
) -> None:
    db = tmp_path / "killed.db"
    indexed(deep_repo, db).close()
    env = {**os.environ, "PYTHONPATH": str(SERVER_DIR)}
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED_PASS, str(db), str(deep_repo)],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert child.stdout is not None
    try:
        assert child.stdout.readline().strip() == "ready"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    conn = open_database(db)
    try:
        left = history_pending(conn, deep_repo)
        assert left.pending and 0 < left.commits_done < left.commits_total
        rest = update_history(conn, deep_repo)
        assert rest.complete and rest.commits == left.commits_total - left.commits_done
        assert snapshot(conn) == full_pass
    finally:
        conn.close()


def test_a_subfolder_walks_only_the_commits_that_touch_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_deep_history(tmp_path / "mono", commits=300)
    (repo / "other").mkdir()
    (repo / "other" / "tool.py").write_text("def tool():\n    return 1\n")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "other tool"], cwd=repo, check=True)
    for n in range(5):  # commits outside the indexed folder
        (repo / "other" / "tool.py").write_text(f"def tool():\n    return {n + 2}\n")
        subprocess.run(["git", "commit", "-qam", f"other {n}"], cwd=repo, check=True)
    sub = repo / "pkg"
    git_conn = indexed(sub, tmp_path / "sub-git.db")
    libgit2_conn = indexed(sub, tmp_path / "sub-libgit2.db")
    try:
        stats = update_history(git_conn, sub)
        touching = subprocess.run(
            ["git", "log", "--first-parent", "--format=%H", "--", "pkg"],
            cwd=repo,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        assert stats.commits == len(touching) > 250
        subjects = [row[0] for row in git_conn.execute("SELECT subject FROM history_commits")]
        assert not any(s.startswith("other") for s in subjects)
        monkeypatch.setattr(history_update, "git_program", lambda: None)
        assert update_history(libgit2_conn, sub).complete
        # The same times and commits for every node (commit numbers differ: libgit2
        # numbers every commit of the chain).
        assert snapshot(git_conn)["nodes"] == snapshot(libgit2_conn)["nodes"]
    finally:
        git_conn.close()
        libgit2_conn.close()


# -- the command line -----------------------------------------------------------------------


def codesift(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "codesift.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SERVER_DIR)},
        timeout=DEADLINE,
    )


def test_index_answers_before_the_history_and_a_time_filter_waits_for_it(
    tmp_path: Path,
) -> None:
    repo = make_deep_history(tmp_path / "repo", commits=400)
    db = repo / ".codesift" / "index.db"
    # Another process's history pass, as long as this test holds its lock.
    other = IndexLock(db, "history", purpose="test: a slow history pass")
    assert other.try_acquire()
    try:
        built = codesift("index", "--no-embed", "--json", cwd=repo)
        assert built.returncode == 0, built.stderr
        assert json.loads(built.stdout)["files"] == 12
        status = json.loads(codesift("status", "--json", cwd=repo).stdout)
        assert status["history"]["pending"] is True
        assert status["history"]["commits_total"] > 300
        # A search without a time filter answers now; its results have no times yet.
        found = codesift("search", "f3_1", "--json", "--no-embed", cwd=repo)
        assert found.returncode == 0, found.stderr
        results = json.loads(found.stdout)["results"]
        assert results and all(r["history"] is None for r in results)
        # With one, it waits for the other pass (and says so), then finishes it.
        waiting = subprocess.Popen(
            [
                *(sys.executable, "-m", "codesift.cli", "search", "f3_1"),
                *("--since", "2000-01-01", "--json", "--no-embed"),
            ],
            cwd=repo,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(SERVER_DIR)},
        )
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(
            target=lambda: [lines.put(line) for line in iter(waiting.stderr.readline, "")],
            daemon=True,
        ).start()
        said = lines.get(timeout=DEADLINE)
        assert "the time filter waits for the git history pass" in said
        assert "test: a slow history pass" in said
        assert waiting.poll() is None  # still waiting while the lock is held
    finally:
        other.release()
    out, _ = waiting.communicate(timeout=DEADLINE)
    assert waiting.returncode == 0
    timed = json.loads(out)["results"]
    assert timed and all(r["history"]["source"] == "git" for r in timed)
    status = json.loads(codesift("status", "--json", cwd=repo).stdout)
    assert status["history"]["pending"] is False
