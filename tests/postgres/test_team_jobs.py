"""Indexing jobs of the shared index that are safe to operate, against a real
PostgreSQL and real processes: batches committed as they go (a job killed with
SIGKILL keeps them, the next one resumes and `status` says interrupted),
repository ids drawn once and within bounds, rewritten history pruned, and two
jobs of one key from two checkouts serialised by the key's advisory lock."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from codesift.cli import main
from codesift.engine.postgres import connect
from codesift.store.postgres.mirror import FILES_PER_TRANSACTION
from codesift.store.postgres.schema import ID_SPAN

# Node and chunk ids are repository id * 2^40 + a local id, in a bigint.
MAX_REPO_ID = ((1 << 63) - 1) // ID_SPAN

pytestmark = pytest.mark.usefixtures("git_isolation")

DEADLINE_SECONDS = 180.0
NO_VECTORS = "[embedding]\nenabled = false\n"


def wait_for(
    what: str, check: Callable[[], bool], proc: subprocess.Popen[str] | None = None
) -> None:
    """Poll `check` until it holds (a generous deadline; the process, when given,
    must still run)."""
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not check():
        if proc is not None and proc.poll() is not None:
            _, err = proc.communicate()
            pytest.fail(f"the job ended (exit {proc.returncode}) before {what}: {err[-2000:]}")
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.02)


def one(dsn: str, sql: str, params: tuple[Any, ...] | None = None) -> Any:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(sql, params).fetchone()
    return None if row is None else row[0]


def job(root: Path, dsn: str, key: str) -> subprocess.Popen[str]:
    """`codesift index ROOT --db DSN --repo KEY` in a process of its own."""
    code = "import sys; from codesift.cli import main; sys.exit(main(sys.argv[1:]))"
    env = {**os.environ, "CODESIFT_NO_SERVER": "1"}
    argv = [sys.executable, "-c", code, "index", str(root), "--no-embed", "--quiet"]
    return subprocess.Popen(
        [*argv, "--db", dsn, "--repo", key],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    capsys.readouterr()
    code = main(list(argv))
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out.splitlines()[-1])


def many_files(count: int) -> dict[str, str]:
    files = {".codesift.toml": NO_VECTORS}
    for i in range(count):
        files[f"pkg/m{i:04d}.py"] = (
            f"def handler_{i}(request: dict) -> int:\n"
            f'    """Handle request number {i}."""\n'
            f"    return len(request) + {i}\n"
        )
    return files


def blocking_backends(dsn: str) -> int:
    """How many other sessions of the test's database wait for a lock."""
    return int(
        one(
            dsn,
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND pid <> pg_backend_pid() AND wait_event_type = 'Lock'",
        )
    )


def test_a_job_killed_mid_way_keeps_its_batches_and_the_next_one_resumes(
    pg_dsn: str, make_repo: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    total = FILES_PER_TRANSACTION * 5
    root: Path = make_repo(many_files(total), name="big")
    connect(pg_dsn).close()  # the schema
    proc = job(root, pg_dsn, "acme/big@main")
    try:
        # The first batch is visible while the job runs: it was committed.
        wait_for(
            "the first batch to be committed",
            lambda: (one(pg_dsn, "SELECT count(*) FROM files") or 0) >= FILES_PER_TRANSACTION,
            proc,
        )
        # Hold the later batches back (their chunks cannot be written while the
        # table is locked), then kill the job while it waits.
        with psycopg.connect(pg_dsn) as holder:
            holder.execute("LOCK TABLE chunks IN SHARE MODE")
            wait_for("the job to wait for its next batch", lambda: blocking_backends(pg_dsn) > 0)
            [running] = run_json(capsys, "status", "--db", pg_dsn, "--json")["repositories"]
            assert running["state"] == "indexing"
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            holder.rollback()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # The killed session's transaction goes with it; what it committed stays.
    wait_for(
        "the killed job's session to end",
        lambda: (
            one(
                pg_dsn,
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND pid <> pg_backend_pid() AND backend_type = 'client backend'",
            )
            == 0
        ),
    )
    kept = int(one(pg_dsn, "SELECT count(*) FROM files"))
    assert FILES_PER_TRANSACTION <= kept < total
    assert kept % FILES_PER_TRANSACTION == 0  # whole batches only

    [repo] = run_json(capsys, "status", "--db", pg_dsn, "--json")["repositories"]
    assert repo["state"] == "interrupted" and repo["job_started_at"] is not None
    assert repo["files"] == kept
    capsys.readouterr()
    assert main(["status", "--db", pg_dsn]) == 0
    out = capsys.readouterr().out
    assert "interrupted" in out and "not a git repository" not in out

    # The next job writes only what the killed one did not commit.
    again = run_json(
        capsys,
        "index",
        str(root),
        "--no-embed",
        "--json",
        "--db",
        pg_dsn,
        "--repo",
        "acme/big@main",
    )
    assert again["files_added"] == total - kept
    assert again["files_unchanged"] == kept
    [repo] = run_json(capsys, "status", "--db", pg_dsn, "--json")["repositories"]
    assert repo["state"] == "indexed" and repo["files"] == total
    assert repo["job_started_at"] is None
    found = run_json(
        capsys, "search", "handle request number 7", "--db", pg_dsn, "--no-embed", "--json"
    )
    assert found["results"]


def test_repository_ids_are_drawn_once_and_stay_in_bounds(
    pg_dsn: str, make_repo: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """A database whose identity sequence is at the end of the packable range (the
    state after millions of runs that each took a value) still takes new
    repositories; runs of a known key take no id."""
    app: Path = make_repo(many_files(3), name="app")
    lib: Path = make_repo(many_files(2), name="lib")
    index = ["index", "--no-embed", "--json", "--db", pg_dsn, "--repo"]
    run_json(capsys, *index[:1], str(app), *index[1:], "acme/app@main")
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute(f"ALTER TABLE repos ALTER COLUMN id RESTART WITH {MAX_REPO_ID}")
    first = one(pg_dsn, "SELECT id FROM repos WHERE key = 'acme/app@main'")
    for _ in range(3):  # unchanged runs
        run_json(capsys, *index[:1], str(app), *index[1:], "acme/app@main")
    assert one(pg_dsn, "SELECT id FROM repos WHERE key = 'acme/app@main'") == first
    run_json(capsys, *index[:1], str(lib), *index[1:], "acme/lib@main")
    ids = [r[0] for r in psycopg.connect(pg_dsn).execute("SELECT id FROM repos ORDER BY key")]
    assert len(ids) == 2 and all(1 <= i <= MAX_REPO_ID for i in ids)
    assert one(pg_dsn, "SELECT count(*) FROM files WHERE repo_id = %s", (ids[1],)) == 2
    assert one(pg_dsn, "SELECT max(id) FROM chunks") < (MAX_REPO_ID + 1) * ID_SPAN


def test_a_force_push_leaves_no_discarded_commit(
    pg_dsn: str, make_repo: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    root: Path = make_repo(
        {".codesift.toml": NO_VECTORS, "app.py": "def a() -> int:\n    return 1\n"}
    )
    git = ["git", "-C", str(root)]

    def commit(path: str, text: str, message: str, when: int) -> None:
        (root / path).write_text(text)
        date = {"GIT_AUTHOR_DATE": f"@{when} +0000", "GIT_COMMITTER_DATE": f"@{when} +0000"}
        env = {**os.environ, **date}
        subprocess.run([*git, "add", "-A"], check=True, capture_output=True)
        subprocess.run([*git, "commit", "-qm", message], check=True, capture_output=True, env=env)

    index = ["index", str(root), "--no-embed", "--json", "--db", pg_dsn, "--repo", "acme/app@main"]
    now = int(time.time())
    commit("b.py", "def discarded() -> int:\n    return 2\n", "also discarded", now + 150)
    commit("b.py", "def discarded() -> int:\n    return 3\n", "to be discarded", now + 200)
    run_json(capsys, *index)
    [repo] = run_json(capsys, "status", "--db", pg_dsn, "--json")["repositories"]
    assert repo["subject"] == "to be discarded"
    # Rewritten history: reset to the first commit, a new one on top (made
    # earlier than the one it replaces, as a rebased commit keeps its date).
    subprocess.run([*git, "reset", "-q", "--hard", "HEAD~2"], check=True, capture_output=True)
    commit("c.py", "def kept() -> int:\n    return 3\n", "the new head", now + 100)
    run_json(capsys, *index)
    [repo] = run_json(capsys, "status", "--db", pg_dsn, "--json")["repositories"]
    assert repo["subject"] == "the new head"
    head = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True)
    assert repo["commit"] == head.stdout.strip()
    assert one(pg_dsn, "SELECT count(*) FROM commits WHERE subject LIKE '%discarded'") == 0


def test_two_jobs_of_one_key_from_two_checkouts_run_one_after_the_other(
    pg_dsn: str, make_repo: Any, tmp_path: Path
) -> None:
    files = many_files(FILES_PER_TRANSACTION * 2)
    first: Path = make_repo(files, name="checkout-one")
    second: Path = make_repo(files, name="checkout-two")
    key = "acme/app@main"
    with psycopg.connect(pg_dsn) as holder:
        # The schema first (the jobs would otherwise wait on the lock below while
        # creating it), then hold every job's chunks back.
        connect(pg_dsn).close()
        holder.execute("LOCK TABLE chunks IN SHARE MODE")
        one_job = job(first, pg_dsn, key)
        wait_for("the first job to wait for its batch", lambda: blocking_backends(pg_dsn) == 1)
        two_job = job(second, pg_dsn, key)
        wait_for("the second job to wait for the first", lambda: blocking_backends(pg_dsn) == 2)
        holder.rollback()
    _, err1 = one_job.communicate(timeout=DEADLINE_SECONDS)
    _, err2 = two_job.communicate(timeout=DEADLINE_SECONDS)
    assert one_job.returncode == 0, err1
    assert two_job.returncode == 0, err2
    assert "duplicate key" not in err1 + err2
    # The second job said which job it waited for.
    assert "another indexing job is writing acme/app@main" in err2
    assert str(first) in err2
    # The repository is the last complete job's.
    assert one(pg_dsn, "SELECT root FROM repos WHERE key = %s", (key,)) == str(second)
    assert one(pg_dsn, "SELECT count(*) FROM files") == len(files) - 1  # no settings file
    assert one(pg_dsn, "SELECT job_started_at FROM repos") is None


def test_an_id_that_cannot_be_packed_is_refused_before_anything_is_written() -> None:
    from codesift.store.postgres.schema import IdRangeError, check_id_range

    check_id_range(MAX_REPO_ID, ID_SPAN - 1)  # the largest that fit
    for repo_id, local_id in ((0, 1), (MAX_REPO_ID + 1, 1), (1, ID_SPAN), (1, -1)):
        with pytest.raises(IdRangeError):
            check_id_range(repo_id, local_id)
