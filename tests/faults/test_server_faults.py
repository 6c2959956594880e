"""Language-server faults, each against the real server over stdio on a real git
repository: another process writing the index (the server waits for the write
lock, then indexes), a work item that fails and later succeeds (the folder
leaves `error` by itself), shutdown + exit while the writer waits on a lock, and
an index deleted while the server runs (it is rebuilt)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lsp"))

from harness import (
    DEADLINE,
    WORKSPACE,
    LspSession,
    make_workspace,
    plain,
    poll,
    server_env,
)

# Holds one of the index's locks (store/locks.py) until a line arrives on stdin.
HOLD_LOCK = """
import sys
from pathlib import Path
from codesift.store.locks import IndexLock
lock = IndexLock(Path(sys.argv[1]), sys.argv[2], purpose="codesift index (fault test)")
assert lock.try_acquire()
print("held", flush=True)
sys.stdin.readline()
lock.release()
"""

# Holds SQLite's own write lock (an exclusive transaction) until a line arrives:
# any other writer gets `database is locked` once its busy timeout passes.
HOLD_TRANSACTION = """
import sys
from pathlib import Path
from codesift.store.database import open_database
conn = open_database(Path(sys.argv[1]))
conn.execute("BEGIN EXCLUSIVE")
print("held", flush=True)
sys.stdin.readline()
conn.execute("COMMIT")
conn.close()
"""

# Holds the embed lock until a line arrives, then computes the index's vectors
# itself (as `codesift embed` does: each batch under the write lock) and ends.
HOLD_AND_EMBED = """
import sys
from pathlib import Path
from codesift.config import EmbeddingSettings
from codesift.embedding import Embedder, fill_vectors
from codesift.store.database import open_database
from codesift.store.locks import IndexLock, writer_lock
db = Path(sys.argv[1])
lock = IndexLock(db, "embed", purpose="codesift embed (fault test)")
assert lock.try_acquire()
print("held", flush=True)
sys.stdin.readline()
conn = open_database(db)
guard = lambda: writer_lock(db, "codesift embed (fault test)")
layers = EmbeddingSettings().layers
assert fill_vectors(conn, Embedder(Path(sys.argv[2])), layers=layers, batch_guard=guard) > 0
conn.close()
lock.release()
"""


class Holder:
    """A process holding something on an index until `release`."""

    def __init__(self, script: str, *args: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", script, *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=server_env(),
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline().strip()
        assert line == "held", line

    @property
    def pid(self) -> int:
        return self.process.pid

    def release(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.write("\n")
            self.process.stdin.close()
        assert self.process.wait(DEADLINE) == 0


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = make_workspace(tmp_path / "billing", WORKSPACE)
    (root / ".codesift").mkdir()
    return root


@pytest.fixture
def holders() -> Iterator[list[Holder]]:
    """Holders started by a test; released (or killed) when it ends."""
    started: list[Holder] = []
    yield started
    for holder in started:
        if holder.process.poll() is None:
            holder.process.kill()
            holder.process.wait()


def db_of(root: Path) -> Path:
    return root / ".codesift" / "index.db"


def statuses(lsp: LspSession) -> list[dict[str, Any]]:
    return lsp.messages("codesift/indexStatus")


def saw_state(state: str) -> Callable[[list[tuple[str, Any]]], bool]:
    return lambda notes: any(
        m == "codesift/indexStatus" and plain(p)["state"] == state for m, p in notes
    )


def found(lsp: LspSession, name: str) -> bool:
    reply = lsp.request("codesift/search", {"query": name})
    return any(r["qualified_name"].endswith(name) for r in reply["results"])


def test_server_waits_for_another_writer_then_indexes(
    repo: Path, tmp_path: Path, holders: list[Holder]
) -> None:
    holder = Holder(HOLD_LOCK, str(db_of(repo)), "write")
    holders.append(holder)
    log = tmp_path / "server.log"
    with LspSession([repo], {"embeddings": False}, log_file=log) as lsp:
        lsp.wait_for(saw_state("waiting"), DEADLINE)
        waiting = next(s for s in statuses(lsp) if s["state"] == "waiting")
        assert f"pid {holder.pid}" in waiting["waiting_for"]
        assert "fault test" in waiting["waiting_for"]
        status = lsp.request("codesift/status")["folders"][0]
        assert status["state"] == "waiting" and status["complete"] is False
        assert f"pid {holder.pid}" in status["waiting_for"]
        assert lsp.request("codesift/search", {"query": "retry_failed_charge"})["results"] == []

        holder.release()
        lsp.wait_ready(DEADLINE)
        assert found(lsp, "retry_failed_charge")
        status = lsp.request("codesift/status")["folders"][0]
        assert status["state"] == "ready" and status["waiting_for"] is None
        assert status["files"] >= 3
    assert lsp.returncode == 0
    assert "Traceback" not in log.read_text()


def test_a_failing_work_item_is_retried_until_it_succeeds(
    repo: Path, tmp_path: Path, holders: list[Holder], monkeypatch: pytest.MonkeyPatch
) -> None:
    # SQLite's busy timeout, shortened so that the first attempt fails soon.
    monkeypatch.setenv("CODESIFT_TEST_BUSY_TIMEOUT_MS", "200")
    holder = Holder(HOLD_TRANSACTION, str(db_of(repo)))
    holders.append(holder)
    log = tmp_path / "server.log"
    with LspSession([repo], {"embeddings": False}, log_file=log) as lsp:
        lsp.wait_for(saw_state("error"), DEADLINE)
        status = lsp.request("codesift/status")["folders"][0]
        assert status["state"] == "error" and status["complete"] is False

        holder.release()
        lsp.wait_for(saw_state("ready"), DEADLINE)  # by itself: no request asks for it
        lsp.wait_ready(DEADLINE)
        assert found(lsp, "retry_failed_charge")
        status = lsp.request("codesift/status")["folders"][0]
        assert status["state"] == "ready" and status["error"] is None
        assert not [w for w in status["warnings"] if "failed" in w], status["warnings"]
        # While it failed, the folder said why and that it would try again.
        failed = next(s for s in statuses(lsp) if s["state"] == "error")
        assert "locked" in failed["error"] or "busy" in failed["error"], failed
        assert "retrying" in failed["error"]
    assert lsp.returncode == 0
    assert "Traceback" not in log.read_text()


def test_shutdown_and_exit_end_a_server_whose_writer_waits(
    repo: Path, tmp_path: Path, holders: list[Holder]
) -> None:
    holders.append(Holder(HOLD_LOCK, str(db_of(repo)), "write"))
    log = tmp_path / "server.log"
    lsp = LspSession([repo], {"embeddings": False}, log_file=log)
    lsp.start()
    try:
        lsp.wait_for(saw_state("waiting"), DEADLINE)
        # The writer is blocked on the lock another process holds; a reindex
        # waiting for it is in flight too.
        lsp.request_future("codesift/reindex", {"wait": True}, "pending-reindex")
    finally:
        # shutdown + exit, then wait for the process: the deadline passing (and
        # the process being killed) is the failure.
        code = lsp.close(timeout=DEADLINE)
    assert code == 0, log.read_text()
    assert "Traceback" not in log.read_text()


def test_exit_ends_a_server_whose_writer_is_stuck_inside_sqlite(
    repo: Path, tmp_path: Path, holders: list[Holder], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The writer's first write waits in SQLite's busy handler for far longer than
    # any deadline here, behind another process's transaction: work that the stop
    # request cannot interrupt.
    monkeypatch.setenv("CODESIFT_TEST_BUSY_TIMEOUT_MS", str(int(20 * DEADLINE * 1000)))
    holders.append(Holder(HOLD_TRANSACTION, str(db_of(repo))))
    log = tmp_path / "server.log"
    lsp = LspSession([repo], {"embeddings": False}, log_file=log)
    lsp.start()
    try:
        lsp.wait_for(saw_state("indexing"), DEADLINE)
    finally:
        code = lsp.close(timeout=DEADLINE)  # the deadline passing is the failure
    assert code == 0, log.read_text()
    assert "Traceback" not in log.read_text()


def test_vectors_are_left_to_another_embedder(
    repo: Path, tmp_path: Path, holders: list[Holder]
) -> None:
    cache = os.environ.get("CODESIFT_TEST_MODEL_CACHE") or str(tmp_path / "model-cache")
    holder = Holder(HOLD_AND_EMBED, str(db_of(repo)), cache)
    holders.append(holder)
    log = tmp_path / "server.log"
    options = {"embeddings": True, "embedding": {"cache_dir": cache}}
    with LspSession([repo], options, log_file=log) as lsp:
        lsp.wait_ready(DEADLINE)

        def vectors() -> dict[str, Any]:
            current: dict[str, Any] = lsp.request("codesift/status")["folders"][0]["vectors"]
            return current

        seen = poll(vectors, lambda v: bool(v["elsewhere"]), "the other embedder noticed")
        assert f"pid {holder.pid}" in seen["elsewhere"]
        assert seen["embedded"] == 0 < seen["embeddable"]

        holder.release()  # it computes the vectors now, and ends
        done = poll(
            vectors,
            lambda v: (
                v["elsewhere"] is None
                and v["embedded"] == v["embeddable"]
                and v["in_memory"] == v["embedded"]
            ),
            "the other process's vectors loaded",
        )
        assert done["embedded"] == seen["embeddable"]
        # The server computed none of them itself.
        assert not [s for s in statuses(lsp) if s["state"] == "embedding"]
        reply = lsp.request("codesift/search", {"query": "try a declined payment again"})
        assert any(p["stream"] == "vector" for r in reply["results"] for p in r["provenance"])
    assert lsp.returncode == 0
    assert "Traceback" not in log.read_text()


def test_an_index_deleted_while_serving_is_rebuilt(repo: Path, tmp_path: Path) -> None:
    log = tmp_path / "server.log"

    def delete_index() -> None:
        for path in db_of(repo).parent.glob("index.db*"):
            path.unlink()
        assert not db_of(repo).exists()

    with LspSession([repo], {"embeddings": False}, log_file=log) as lsp:
        lsp.wait_ready(DEADLINE)
        assert found(lsp, "retry_failed_charge")

        # 1. noticed by a request: status never claims `ready` without an index
        delete_index()
        status = lsp.request("codesift/status")["folders"][0]
        assert not [w for w in status["warnings"] if "cannot read the index" in w], status
        assert status["state"] != "ready" or status["files"] >= 3, status
        reply = lsp.request("codesift/reindex", {"wait": True, "timeout_ms": 60_000}, DEADLINE)
        assert reply["done"] is True
        assert db_of(repo).exists()
        assert found(lsp, "retry_failed_charge")
        status = lsp.request("codesift/status")["folders"][0]
        assert status["state"] == "ready" and status["files"] >= 3, status
        shown = " | ".join(p.message for p in lsp.messages("window/showMessage"))
        assert "was deleted; rebuilding" in shown

        # 2. noticed by a search
        delete_index()
        poll(lambda: found(lsp, "retry_failed_charge"), bool, "search after the 2nd deletion")

        # 3. noticed by the idle writer, without any request
        delete_index()
        poll(db_of(repo).exists, bool, "the index recreated by the writer")
        lsp.wait_ready(DEADLINE)
        assert found(lsp, "monthly_report")
    assert lsp.returncode == 0
    assert "Traceback" not in log.read_text()
