"""The call pass after the first answer: a large index run leaves its calls to
the pass (a new index without their call sites, one with vectors with their names
but no targets), the pass writes them and ends with the rows (and static vectors)
an ordinary run writes, it goes on after being cancelled or killed, and the command
line answers searches before it while callers wait for it.

A generated project of real Python files (more than DEFER_CALLS_MIN_FILES, with
relative imports, methods and module-qualified calls), real SQLite files, real
worker processes and the real `codesift` command in subprocesses.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import apsw
import pytest
from vector_workspace import stored_vectors

from call_project import MODULES, write_project
from codesift import call_pass
from codesift.call_pass import CallPassProgress, resolve_pending_calls
from codesift.config import load_settings
from codesift.engine.access import update_index
from codesift.engine.call_phase import TASK_FILES
from codesift.engine.listener import EngineListener
from codesift.engine.session import embed
from codesift.engine.workspace import Workspace
from codesift.indexer import Indexer
from codesift.store.call_targets import calls_owed, calls_pending_count, targets_pending_count
from codesift.store.database import open_database
from codesift.store.locks import IndexLock

DEADLINE = 180.0
# The modules and the package's __init__.py: a run without call sites cannot tell
# which files make calls, so the pass looks at every file a grammar parses.
CODE_FILES = MODULES + 1
SERVER_DIR = Path(call_pass.__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_project(tmp_path_factory.mktemp("calls") / "project")


def index(root: Path, db: Path, *, defer: bool, static: bool = False) -> apsw.Connection:
    """`static`: with the static vectors the index workers compute with the rows."""
    conn = open_database(db)
    Indexer(root, load_settings(root), conn, defer_calls=defer, static_vectors=static).run()
    return conn


def snapshot(conn: apsw.Connection) -> dict[str, Any]:
    """Every edge and chunk by what it is (not by row ids)."""
    return {
        "edges": conn.execute(
            "SELECT f.path, s.qualified_name, e.kind, e.dst_name, d.qualified_name,"
            " e.dst_hint, e.line, e.resolution FROM edges e JOIN nodes s ON s.id = e.src_id"
            " JOIN files f ON f.id = s.file_id LEFT JOIN nodes d ON d.id = e.dst_id"
            " ORDER BY 1, 2, 3, 4"
        ).fetchall(),
        "chunks": conn.execute(
            "SELECT f.path, c.layer, c.part, c.start_line, c.text_hash FROM chunks c"
            " JOIN files f ON f.id = c.file_id ORDER BY 1, 2, 3, 4"
        ).fetchall(),
    }


@pytest.fixture(scope="module")
def inline(project: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    conn = index(project, tmp_path_factory.mktemp("inline") / "inline.db", defer=False)
    try:
        assert calls_pending_count(conn) == 0 and not calls_owed(conn)
        return snapshot(conn)
    finally:
        conn.close()


def resolved_calls(conn: apsw.Connection) -> int:
    return int(
        conn.execute(
            "SELECT count(*) FROM edges WHERE kind = 'calls' AND dst_id IS NOT NULL"
        ).fetchone()[0]
    )


def calls_edges(conn: apsw.Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM edges WHERE kind = 'calls'").fetchone()[0])


def test_a_deferred_run_ends_with_the_rows_of_an_ordinary_one(
    project: Path, tmp_path: Path, inline: dict[str, Any]
) -> None:
    conn = index(project, tmp_path / "deferred.db", defer=True)
    try:
        before = snapshot(conn)
        # Searchable at once: every chunk but the summaries that name calls is the
        # ordinary run's; a new index has no call sites yet at all.
        assert calls_edges(conn) == 0
        assert calls_pending_count(conn) == CODE_FILES and calls_owed(conn)
        differ = set(before["chunks"]) ^ set(inline["chunks"])
        assert differ and {row[1] for row in differ} == {"summary"}
        # The other edges are there, to be resolved across files after the pass.
        assert [e[:4] + e[5:7] for e in before["edges"]] == [
            e[:4] + e[5:7] for e in inline["edges"] if e[2] != "calls"
        ]
        seen: list[CallPassProgress] = []
        stats = resolve_pending_calls(project, load_settings(project), conn, progress=seen.append)
        files = CODE_FILES
        assert stats.complete and stats.files == files and stats.changed == 0
        assert stats.summaries == len(differ) // 2 and stats.vectors == 0  # none had one
        assert seen[-1] == CallPassProgress("resolving", files, files)
        assert CallPassProgress("files", files, files) in seen
        assert not calls_owed(conn)
        assert snapshot(conn) == inline
        assert resolved_calls(conn) > MODULES  # it resolved something, across files too
    finally:
        conn.close()


def stale_vectors(conn: apsw.Connection) -> int:
    return int(
        conn.execute(
            "SELECT count(*) FROM chunks c JOIN embedded e ON e.chunk_id = c.id"
            " WHERE e.text_hash != c.text_hash"
        ).fetchone()[0]
    )


def test_the_pass_gives_the_summaries_that_gain_their_calls_new_static_vectors(
    project: Path, tmp_path: Path
) -> None:
    ordinary = index(project, tmp_path / "ordinary.db", defer=False, static=True)
    conn = index(project, tmp_path / "deferred.db", defer=True, static=True)
    try:
        expected = stored_vectors(ordinary)
        before = stored_vectors(conn)
        assert len(before) == len(expected) and before != expected
        stats = resolve_pending_calls(project, load_settings(project), conn)
        assert stats.complete and stats.vectors == stats.summaries > 0
        # Byte for byte the vectors an ordinary run computes, none left stale.
        assert stored_vectors(conn) == expected and stale_vectors(conn) == 0
    finally:
        ordinary.close()
        conn.close()


def test_an_index_with_vectors_keeps_its_summaries_until_the_pass(tmp_path: Path) -> None:
    """A large run over an index that has vectors (MiniLM's would take minutes to
    compute again) writes the calls' names: its summaries are final at once."""
    root = write_project(tmp_path / "embedded")
    conn = index(root, tmp_path / "embedded.db", defer=True, static=True)
    try:
        assert resolve_pending_calls(root, load_settings(root), conn).complete
        for path in sorted((root / "app").glob("m*.py")):
            with path.open("a") as module:  # every module changes: a large run again
                module.write(f"\n\ndef more_{path.stem}(item):\n    return check(item)\n")
        Indexer(root, load_settings(root), conn, defer_calls=True, static_vectors=True).run()
        assert calls_owed(conn) and resolved_calls(conn) < calls_edges(conn)
        assert stale_vectors(conn) == 0
        before = snapshot(conn)
        stats = resolve_pending_calls(root, load_settings(root), conn)
        assert stats.complete and stats.summaries == 0
        after = snapshot(conn)
        assert after["chunks"] == before["chunks"]
        inline = index(root, tmp_path / "inline.db", defer=False)
        try:
            assert after == snapshot(inline)
        finally:
            inline.close()
    finally:
        conn.close()


def test_a_small_run_resolves_at_once(tmp_path: Path) -> None:
    root = tmp_path / "small"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text("def helper():\n    return 1\n")
    (root / "pkg" / "b.py").write_text("from pkg.a import helper\n\ndef run():\n    helper()\n")
    conn = index(root, tmp_path / "small.db", defer=True)
    try:
        assert not calls_owed(conn)
        assert resolved_calls(conn) == 1
    finally:
        conn.close()


def test_a_cancelled_pass_goes_on_and_a_changed_file_waits_for_its_index(
    project: Path, tmp_path: Path, inline: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(call_pass, "BATCH_FILES", 25)
    conn = index(project, tmp_path / "cancelled.db", defer=True)
    cancel = threading.Event()

    def progress(event: CallPassProgress) -> None:
        if event.phase == "files" and event.done >= 50:
            cancel.set()

    try:
        stats = resolve_pending_calls(
            project, load_settings(project), conn, progress=progress, cancel=cancel
        )
        assert not stats.complete
        left = targets_pending_count(conn)
        assert 0 < left < MODULES and calls_owed(conn)
        assert calls_pending_count(conn) == CODE_FILES  # none complete before the last
        rest = resolve_pending_calls(project, load_settings(project), conn)
        assert rest.complete and rest.files == left
        assert snapshot(conn) == inline
    finally:
        conn.close()


def test_a_file_changed_before_the_pass_is_left_to_the_next_index_run(
    tmp_path: Path, inline: dict[str, Any]
) -> None:
    root = write_project(tmp_path / "changing")
    conn = index(root, tmp_path / "changing.db", defer=True)
    target = root / "app" / "m7.py"
    original = target.read_text()
    try:
        target.write_text(original + "\n\ndef added():\n    return work_7(1)\n")
        stats = resolve_pending_calls(root, load_settings(root), conn)
        assert stats.complete and stats.changed == 1 and stats.files == CODE_FILES - 1
        target.write_text(original)  # the next run parses it whole (its mtime moved)
        Indexer(root, load_settings(root), conn, defer_calls=True).run()
        assert not calls_owed(conn)
        assert snapshot(conn) == inline
    finally:
        conn.close()


KILLED_PASS = """
import contextlib, sys
from pathlib import Path
from codesift import call_pass
from codesift.config import load_settings
from codesift.store.database import open_database

call_pass.BATCH_FILES = 20
steps = 0

@contextlib.contextmanager
def step():
    global steps
    steps += 1
    if steps == 4:
        print("ready", flush=True)
        sys.stdin.read()  # killed here, before this batch's transaction
    yield True

root = Path(sys.argv[2])
conn = open_database(Path(sys.argv[1]))
call_pass.resolve_pending_calls(root, load_settings(root), conn, batch_guard=step)
print("finished", flush=True)
"""


def test_a_killed_pass_resumes_and_ends_with_the_same_rows(
    project: Path, tmp_path: Path, inline: dict[str, Any]
) -> None:
    db = tmp_path / "killed.db"
    index(project, db, defer=True).close()
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED_PASS, str(db), str(project)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(SERVER_DIR)},
    )
    assert child.stdout is not None
    try:
        assert child.stdout.readline().strip() == "ready"
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    conn = open_database(db)
    try:
        left = targets_pending_count(conn)
        assert 0 < left <= MODULES - 3  # three batches (of at most 20) were written
        rest = resolve_pending_calls(project, load_settings(project), conn)
        assert rest.complete and rest.files == left
        assert snapshot(conn) == inline
    finally:
        conn.close()


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


def test_search_answers_before_the_call_pass_and_callers_wait_for_it(tmp_path: Path) -> None:
    root = write_project(tmp_path / "cli")
    db = root / ".codesift" / "index.db"
    # Another process's call pass, as long as this test holds its lock.
    other = IndexLock(db, "calls", purpose="test: a slow call pass")
    assert other.try_acquire()
    try:
        built = codesift("index", "--no-embed", "--json", cwd=root)
        assert built.returncode == 0, built.stderr
        assert json.loads(built.stdout)["indexed"] == MODULES + 1
        assert "is being resolved by another codesift process" in built.stderr
        status = json.loads(codesift("status", "--json", cwd=root).stdout)
        assert status["calls_pending"] == CODE_FILES
        found = codesift("search", "Keeps the items of part 42", "--json", "--no-embed", cwd=root)
        assert found.returncode == 0, found.stderr
        assert json.loads(found.stdout)["results"][0]["path"] == "app/m42.py"
        waiting = subprocess.Popen(
            [sys.executable, "-m", "codesift.cli", "callers", "work_41", "--json"],
            cwd=root,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(SERVER_DIR)},
        )
        lines: queue.Queue[str] = queue.Queue()
        assert waiting.stderr is not None
        threading.Thread(
            target=lambda: [lines.put(line) for line in iter(waiting.stderr.readline, "")],
            daemon=True,
        ).start()
        said = lines.get(timeout=DEADLINE)
        assert "the graph waits for the call pass" in said
        assert "test: a slow call pass" in said
        assert waiting.poll() is None  # still waiting while the lock is held
    finally:
        other.release()
    out, _ = waiting.communicate(timeout=DEADLINE)
    assert waiting.returncode == 0
    answer = json.loads(out)
    assert answer["calls_pending"] == 0
    callers = {
        entry["node"]["qualified_name"]
        for group in answer["nodes"]
        for entry in group["callers"]
        if entry["node"]
    }
    assert callers == {"app.m42.Store42.put_42"}
    status = json.loads(codesift("status", "--json", cwd=root).stdout)
    assert status["calls_pending"] == 0


def test_the_background_pass_is_given_the_runs_config(tmp_path: Path) -> None:
    """An index placed by `--config` alone: the background call pass the run starts
    is given the same file, finds that index and resolves it (without, it would
    look for an index in the folder and leave the calls pending)."""
    root = write_project(tmp_path / "configured")
    db = tmp_path / "elsewhere" / "index.db"
    settings = tmp_path / "settings.toml"
    settings.write_text(f'[index]\ndb_path = "{db}"\n', encoding="utf-8")
    built = codesift("index", "--no-embed", "--json", "--config", str(settings), cwd=root)
    assert built.returncode == 0, built.stderr
    assert db.exists() and not (root / ".codesift").exists()
    deadline = time.monotonic() + DEADLINE
    pending = -1
    while time.monotonic() < deadline:
        status = codesift("status", "--json", "--config", str(settings), cwd=root)
        pending = json.loads(status.stdout)["calls_pending"]
        if pending == 0:
            break
        time.sleep(0.2)  # polling the other process's progress
    assert pending == 0
    assert f"--config {settings}" in (db.parent / "resolve.log").read_text(encoding="utf-8")


class Tasks(EngineListener):
    def __init__(self) -> None:
        self.begun: list[str] = []

    def begin(self, task: str, total: int) -> None:
        self.begun.append(task)


def test_minilm_vectors_come_after_the_pass(tmp_path: Path) -> None:
    """MiniLM embeds the summaries, which name the calls once the pass has run:
    `codesift embed` (the background one too) finishes the pass first."""
    root = write_project(tmp_path / "minilm")
    ws = Workspace.at(root, {"embedding": {"model": "minilm"}})
    conn, _ = update_index(ws, EngineListener(), after=False)  # static vectors with the rows
    try:
        assert calls_owed(conn)
        listener = Tasks()
        report = embed(ws, listener)
        assert report.embedded > 0 and not calls_owed(conn)
        assert listener.begun.index(TASK_FILES) < listener.begun.index("embedding")
        models = conn.execute(
            "SELECT DISTINCT e.model FROM embedded e JOIN chunks c ON c.id = e.chunk_id"
            " WHERE c.layer = 'summary'"
        ).fetchall()
        assert len(models) == 1 and "MiniLM" in str(models[0][0])
        assert stale_vectors(conn) == 0
    finally:
        conn.close()
