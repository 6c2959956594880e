"""The git-history rows of an index (store/history.py) on a real index file: what
the history update writes and what a search reads back."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import apsw
import pytest

from codesift.indexer import IndexSummary
from codesift.store.history import HistoryRows, ids_in_time, time_rows
from codesift.timespec import TimeFilter

pytestmark = pytest.mark.usefixtures("git_isolation")

MakeRepo = Callable[..., Path]
IndexWorkspace = Callable[..., tuple[apsw.Connection, IndexSummary]]

APP_PY = '''\
def load(path: str) -> str:
    """Read a file."""
    return open(path).read()


class Cache:
    def get(self, key: str) -> str:
        return key
'''

WORKSPACE = {"app.py": APP_PY, "notes.md": "# Notes\n\nSome notes.\n"}


@pytest.fixture
def conn(make_repo: MakeRepo, index_workspace: IndexWorkspace) -> apsw.Connection:
    connection, _ = index_workspace(make_repo(WORKSPACE))
    return connection


def file_id(conn: apsw.Connection, path: str) -> int:
    (found,) = conn.execute("SELECT id FROM files WHERE path = ?", (path,))
    return int(found[0])


def test_meta_is_written_only_when_it_changes(conn: apsw.Connection) -> None:
    rows = HistoryRows(conn)
    with rows.transaction():
        rows.set_meta("history_test", "a")
    before = conn.total_changes()
    rows.set_meta("history_test", "a")  # already so: no write (a read-only index stays usable)
    assert conn.total_changes() == before
    rows.set_meta("history_test", None)
    assert rows.meta("history_test") is None


def test_line_histories_and_commits(conn: apsw.Connection) -> None:
    rows = HistoryRows(conn)
    walked = rows.last_commit_number()
    assert walked >= 1  # the repository's commit was walked when it was indexed
    assert [number for number, _ in rows.commit_times()] == list(range(1, walked + 1))
    with rows.transaction():
        rows.add_commits([(walked + 1, "ab" * 20, 1_700_000_000, "a subject")])
        rows.put_file_lines("x.py", b"\x01\x02")
        rows.put_file_lines("x.py", b"\x03")
    assert rows.last_commit_number() == walked + 1
    assert (walked + 1, 1_700_000_000) in rows.commit_times()
    assert rows.file_lines("x.py") == b"\x03"
    rows.put_file_lines("x.py", None)
    assert rows.file_lines("x.py") is None
    with rows.transaction():
        rows.forget_history()
    assert rows.last_commit_number() == 0 and rows.commit_times() == []
    assert all(t.history_at is None for t in rows.timing_states())


def test_a_failed_transaction_leaves_the_rows_as_they_were(conn: apsw.Connection) -> None:
    rows = HistoryRows(conn)
    walked = rows.last_commit_number()
    with pytest.raises(RuntimeError), rows.transaction():
        rows.forget_history()
        raise RuntimeError("the walk failed")
    assert rows.last_commit_number() == walked


def test_node_and_chunk_times_are_written_per_file(conn: apsw.Connection) -> None:
    rows = HistoryRows(conn)
    app = file_id(conn, "app.py")
    notes = file_id(conn, "notes.md")
    nodes = rows.node_spans(app)
    assert nodes and all(n.start_line <= n.end_line for n in nodes)
    assert rows.node_spans(notes) == []
    loose = rows.loose_chunk_spans(notes)
    assert loose  # the markdown sections belong to no node
    with rows.transaction():
        rows.set_node_times(app, [((100, 1, 200, 1), n.id) for n in nodes])
        rows.set_chunk_times([((300, 1, 400, 1), c.id) for c in loose])
        rows.mark_timed(app, 5.0)
    times = time_rows(conn, "nodes", [n.id for n in nodes])
    assert {(t.created, t.changed, t.commit_no) for t in times.values()} == {(100, 200, 1)}
    # The nodes' chunks (code, ast, summary) got the nodes' times.
    node_chunks = [
        int(r[0]) for r in conn.execute("SELECT id FROM chunks WHERE file_id = ?", (app,))
    ]
    assert {t.changed for t in time_rows(conn, "chunks", node_chunks).values()} == {200}
    assert {t.changed for t in time_rows(conn, "chunks", [c.id for c in loose]).values()} == {400}
    timing = {t.path: t for t in rows.timing_states()}
    assert timing["app.py"].history_at == 5.0 and timing["app.py"].id == app
    assert [(i, p) for i, p, _ in rows.file_stamps([app, notes])] == [
        (app, "app.py"),
        (notes, "notes.md"),
    ]
    assert rows.file_count() == 2
    every = [n.id for n in nodes]
    assert ids_in_time(conn, "nodes", every, TimeFilter(since=150.0)) == set(every)
    assert ids_in_time(conn, "nodes", every, TimeFilter(until=150.0)) == set()
    assert ids_in_time(conn, "nodes", every, TimeFilter()) == set(every)
