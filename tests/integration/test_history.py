"""Git time: created / last-changed times from line history, and the as_of /
since / until filters in every stream, on repositories with commits at
controlled dates."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import apsw
import numpy as np
import pytest

from codesift.cli import main
from codesift.config import load_settings
from codesift.errors import QueryError
from codesift.history.records import node_history
from codesift.history.update import update_history
from codesift.indexer import Indexer, IndexSummary
from codesift.retrieval import Searcher, SearchRequest
from codesift.retrieval.query import analyze_query
from codesift.retrieval.streams import (
    StreamFilters,
    lexical_doc_stream,
    lexical_stream,
    resident_vector_stream,
    symbol_stream,
    vector_stream,
)
from codesift.retrieval.vector_index import VectorIndex
from codesift.store.database import open_database
from codesift.store.sqlite.search import SqliteSearchStore
from codesift.timespec import UNCOMMITTED_TIME, TimeFilter, parse_time_spec

pytestmark = pytest.mark.usefixtures("git_isolation")

MakeRepo = Callable[..., Path]
IndexWorkspace = Callable[..., tuple[apsw.Connection, IndexSummary]]

T1 = "2024-01-10T12:00:00Z"
T2 = "2024-02-10T12:00:00Z"
T3 = "2024-03-10T12:00:00Z"
T4 = "2024-04-10T12:00:00Z"


def ts(text: str) -> int:
    return int(parse_time_spec(text))


def git(root: Path, *args: str, when: str | None = None) -> str:
    env = dict(os.environ)
    if when is not None:
        env["GIT_AUTHOR_DATE"] = when
        env["GIT_COMMITTER_DATE"] = when
    result = subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True, env=env
    )
    return result.stdout


def commit_at(root: Path, when: str, message: str) -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "--allow-empty", "-m", message, when=when)


def fn(name: str, body: str = "return ledger") -> str:
    return f"def {name}(ledger):\n    # {name} updates the ledger\n    {body}\n\n\n"


BILLING_V1 = (
    fn("charge", "total = ledger.sum()\n    return total")
    + fn("refund")
    + fn("audit", "first = ledger.first()\n    second = ledger.second()\n    return first")
    + fn("legacy")
)
BILLING_V2 = (
    fn("charge", "total = ledger.sum()\n    return total")
    + fn("refund", "return -ledger")
    + fn("audit", "first = ledger.first()\n    second = ledger.second()\n    return first")
    + fn("legacy")
    + fn("invoice")
)
# charge moves to the end of the file; legacy is deleted
BILLING_V3 = (
    fn("refund", "return -ledger")
    + fn("audit", "first = ledger.first()\n    second = ledger.second()\n    return first")
    + fn("invoice")
    + fn("charge", "total = ledger.sum()\n    return total")
)
# only a deletion inside audit
BILLING_V4 = BILLING_V3.replace("    second = ledger.second()\n", "")
GUIDE_V1 = "# Guide\n\n## Setup\n\nInstall the ledger.\n\n## Billing\n\nThe ledger bills.\n"
GUIDE_V3 = GUIDE_V1.replace("The ledger bills.", "The ledger bills monthly.")


@pytest.fixture
def history_repo(make_repo: MakeRepo) -> Path:
    root = make_repo({}, commit=False)
    (root / "billing.py").write_text(BILLING_V1)
    (root / "util.py").write_text(fn("helper"))
    (root / "docs").mkdir()
    (root / "docs" / "guide.md").write_text(GUIDE_V1)
    commit_at(root, T1, "first: billing, util, guide")
    (root / "billing.py").write_text(BILLING_V2)
    commit_at(root, T2, "add invoice, refund returns a credit")
    (root / "billing.py").write_text(BILLING_V3)
    (root / "docs" / "guide.md").write_text(GUIDE_V3)
    commit_at(root, T3, "move charge down, drop legacy")
    (root / "billing.py").write_text(BILLING_V4)
    commit_at(root, T4, "audit reads one entry")
    # uncommitted: helper changes, draft is new
    (root / "util.py").write_text(fn("helper", "return ledger + 1") + fn("draft"))
    return root


def node_times(conn: apsw.Connection) -> dict[str, tuple[int, int]]:
    return {
        str(name): (int(created), int(changed))
        for name, created, changed in conn.execute(
            "SELECT name, created, changed FROM nodes WHERE kind = 'function'"
        )
    }


def test_node_times_follow_their_own_lines(
    history_repo: Path, index_workspace: IndexWorkspace
) -> None:
    conn, _ = index_workspace(history_repo)
    times = node_times(conn)
    assert times["refund"] == (ts(T1), ts(T2))  # changed in T2
    assert times["invoice"] == (ts(T2), ts(T2))  # added in T2
    assert times["charge"] == (ts(T1), ts(T3))  # moved within the file in T3
    assert times["audit"] == (ts(T1), ts(T4))  # a line deleted in T4
    assert "legacy" not in times  # deleted in T3
    assert times["helper"] == (ts(T1), UNCOMMITTED_TIME)  # edited, not committed
    assert times["draft"] == (UNCOMMITTED_TIME, UNCOMMITTED_TIME)  # new, not committed
    sections = {
        str(title): (int(created), int(changed))
        for title, created, changed in conn.execute(
            "SELECT title, created, changed FROM chunks WHERE layer = 'doc'"
        )
    }
    billing = next(v for k, v in sections.items() if k.endswith("Billing"))
    setup = next(v for k, v in sections.items() if k.endswith("Setup"))
    assert billing[1] == ts(T3)
    assert setup == (ts(T1), ts(T1))
    # every chunk of a node carries the node's times
    mismatched = conn.execute(
        "SELECT count(*) FROM chunks c JOIN nodes n ON n.id = c.node_id"
        " WHERE c.changed IS NOT n.changed OR c.created IS NOT n.created"
    ).fetchone()[0]
    assert mismatched == 0


def test_commit_of_the_last_change_is_reported(
    history_repo: Path, index_workspace: IndexWorkspace
) -> None:
    conn, _ = index_workspace(history_repo)
    ids = {str(n): int(i) for i, n in conn.execute("SELECT id, name FROM nodes")}
    info = node_history(conn, [ids["refund"], ids["helper"]])
    refund = info[ids["refund"]]
    assert refund.subject == "add invoice, refund returns a credit"
    assert refund.changed == "2024-02-10T12:00:00Z"
    assert refund.created == "2024-01-10T12:00:00Z"
    head_of_t2 = git(history_repo, "rev-parse", "HEAD~2").strip()
    assert refund.commit == head_of_t2[:10]
    assert info[ids["helper"]].source == "uncommitted"
    assert info[ids["helper"]].commit is None


def names_found(searcher: Searcher, query: str, **times: Any) -> set[str]:
    response = searcher.search(
        SearchRequest(query=query, top_k=50, layers=("code", "doc"), **times)
    )
    return {r.qualified_name.split(".")[-1] for r in response.results}


@pytest.fixture
def searcher(history_repo: Path, index_workspace: IndexWorkspace) -> Searcher:
    conn, _ = index_workspace(history_repo)
    return Searcher(conn)


FUNCTIONS = {"charge", "refund", "audit", "invoice", "helper", "draft"}


def test_since_keeps_what_changed_after(searcher: Searcher) -> None:
    found = names_found(searcher, "ledger", since="2024-03-01")
    assert found & FUNCTIONS == {"charge", "audit", "helper", "draft"}
    assert any("Billing" in name for name in found)  # doc section changed in T3
    assert not any("Setup" in name for name in found)


def test_until_keeps_what_last_changed_before(searcher: Searcher) -> None:
    found = names_found(searcher, "ledger", until="2024-02-15")
    assert found & FUNCTIONS == {"refund", "invoice"}
    # uncommitted changes happened "now": an until in the future keeps them
    found = names_found(searcher, "ledger", until="2999-01-01")
    assert {"helper", "draft"} <= found


def test_as_of_keeps_what_existed(searcher: Searcher) -> None:
    found = names_found(searcher, "ledger", as_of="2024-01-15")
    assert found & FUNCTIONS == {"charge", "refund", "audit", "helper"}
    assert names_found(searcher, "ledger", as_of=T2) & FUNCTIONS == FUNCTIONS - {"draft"}
    assert "draft" in names_found(searcher, "ledger", as_of="now")


def test_since_and_until_together(searcher: Searcher) -> None:
    found = names_found(searcher, "ledger", since="2024-02-01", until="2024-03-31")
    assert found & FUNCTIONS == {"refund", "invoice", "charge"}


def test_git_revision_as_a_time(searcher: Searcher, history_repo: Path) -> None:
    git(history_repo, "tag", "v1.0", "HEAD~2")  # the T2 commit
    found = names_found(searcher, "ledger", since="v1.0")
    assert found & FUNCTIONS == {"refund", "invoice", "charge", "audit", "helper", "draft"}
    found = names_found(searcher, "ledger", as_of="v1.0")
    assert found & FUNCTIONS == {"charge", "refund", "audit", "invoice", "helper"}


def test_filters_apply_inside_every_stream_before_the_cap(searcher: Searcher) -> None:
    conn = searcher.conn
    window = TimeFilter(since=ts("2024-03-01"))
    filters = StreamFilters(("code", "ast", "summary", "doc"), times=window)
    allowed = {
        int(r[0])
        for r in conn.execute("SELECT id FROM chunks WHERE changed >= ?", (ts("2024-03-01"),))
    }
    analysis = analyze_query("ledger")
    store = SqliteSearchStore(conn)
    # cap 2: the two best candidates that pass, not two that are then dropped
    ranked = lexical_stream(store, analysis, filters, 2)
    assert len(ranked) == 2 and {cid for cid, _ in ranked} <= allowed
    # of the two sections about the ledger only Billing changed after March
    ranked = lexical_doc_stream(store, analysis, filters, 2)
    assert len(ranked) == 1 and {cid for cid, _ in ranked} <= allowed
    assert len(lexical_doc_stream(store, analysis, replace(filters, times=TimeFilter()), 2)) == 2
    ranked = symbol_stream(store, analyze_query("refund"), filters, 10)
    assert ranked == []
    ranked = symbol_stream(store, analyze_query("charge"), filters, 10)
    assert ranked and {cid for cid, _ in ranked} <= allowed


def test_vector_stream_filters_inside_the_knn(searcher: Searcher) -> None:
    conn = searcher.conn
    rng = np.random.default_rng(7)
    rows = conn.execute(
        "SELECT id, layer, text_hash FROM chunks WHERE layer IN ('code','summary','doc')"
    ).fetchall()
    with conn:
        for cid, layer, text_hash in rows:
            vector = rng.integers(-127, 127, 384, dtype=np.int8).tobytes()
            conn.execute(
                "INSERT INTO chunk_vectors (chunk_id, layer, embedding) VALUES (?, ?, vec_int8(?))",
                (cid, layer, vector),
            )
            conn.execute(
                "INSERT INTO embedded (chunk_id, text_hash) VALUES (?, ?)", (cid, text_hash)
            )
    query = rng.integers(-127, 127, 384, dtype=np.int8).tobytes()
    window = TimeFilter(until=ts("2024-02-15"))
    allowed = {
        int(r[0])
        for r in conn.execute(
            "SELECT id FROM chunks WHERE changed <= ? AND layer IN ('code','summary')",
            (ts("2024-02-15"),),
        )
    }
    filters = StreamFilters(("code", "summary"), times=window)
    ranked = vector_stream(SqliteSearchStore(conn), query, filters, 3)
    assert len(ranked) == 3 == min(3, len(allowed))
    assert {cid for cid, _ in ranked} <= allowed
    # The in-memory copy applies the same filter and finds the same nearest chunks.
    resident = resident_vector_stream(
        SqliteSearchStore(conn),
        VectorIndex(),
        np.frombuffer(query, np.int8).astype(np.float32),
        filters,
        3,
    )
    assert [cid for cid, _ in resident] == [cid for cid, _ in ranked]


def test_incremental_updates_equal_a_full_pass(
    make_repo: MakeRepo, index_workspace: IndexWorkspace, tmp_path: Path
) -> None:
    root = make_repo({}, commit=False)
    steps = [
        (T1, {"billing.py": BILLING_V1, "docs/guide.md": GUIDE_V1}),
        (T2, {"billing.py": BILLING_V2}),
        (T3, {"billing.py": BILLING_V3, "docs/guide.md": GUIDE_V3}),
        (T4, {"billing.py": BILLING_V4, "pay.py": BILLING_V1.replace("legacy", "older")}),
    ]
    conn = None
    for when, files in steps:
        for path, text in files.items():
            (root / path).parent.mkdir(parents=True, exist_ok=True)
            (root / path).write_text(text)
        commit_at(root, when, f"at {when}")
        conn, _ = index_workspace(root)  # incremental: one more commit each time
    assert conn is not None
    full = open_database(tmp_path / "full.db")
    Indexer(root, load_settings(root), full).run()
    update_history(full, root)

    def snapshot(c: apsw.Connection) -> tuple[list[Any], list[Any], list[Any]]:
        return (
            # Ids depend on the order rows were written in: compare by what they are.
            c.execute(
                "SELECT f.path, n.kind, n.qualified_name, n.start_line, n.created,"
                " n.created_commit, n.changed, n.changed_commit FROM nodes n"
                " JOIN files f ON f.id = n.file_id ORDER BY 1, 2, 3, 4"
            ).fetchall(),
            c.execute(
                "SELECT f.path, c.layer, c.part, c.start_line, c.title, c.created, c.changed,"
                " c.changed_commit FROM chunks c JOIN files f ON f.id = c.file_id"
                " ORDER BY 1, 2, 3, 4, 5"
            ).fetchall(),
            c.execute("SELECT path, lines FROM history_files ORDER BY path").fetchall(),
        )

    assert snapshot(conn) == snapshot(full)
    assert conn.execute("SELECT count(*) FROM history_commits").fetchone()[0] == 4
    full.close()


def test_only_new_commits_are_walked(history_repo: Path, index_workspace: IndexWorkspace) -> None:
    conn, _ = index_workspace(history_repo)
    stats = update_history(conn, history_repo)
    # no new commit and no file changed: nothing is timed again, and the file with
    # uncommitted edits is still known as such
    assert stats.commits == 0 and stats.files_timed == 0
    assert stats.uncommitted_files == 1
    (history_repo / "util.py").write_text(fn("helper"))  # revert the working tree
    commit_at(history_repo, "2024-05-10T12:00:00Z", "util: nothing new")
    (history_repo / "extra.py").write_text(fn("extra"))
    commit_at(history_repo, "2024-05-11T12:00:00Z", "add extra")
    conn, _ = index_workspace(history_repo)
    times = node_times(conn)
    assert times["extra"] == (ts("2024-05-11T12:00:00Z"),) * 2
    assert times["helper"] == (ts(T1), ts(T1))  # no longer uncommitted
    assert "draft" not in times
    stats = update_history(conn, history_repo)
    assert stats.commits == 0


def test_a_rewritten_history_is_walked_again(
    history_repo: Path, index_workspace: IndexWorkspace
) -> None:
    conn, _ = index_workspace(history_repo)
    git(history_repo, "checkout", "-q", "--", "util.py")
    git(history_repo, "clean", "-qfd")
    git(history_repo, "reset", "-q", "--hard", "HEAD~2")  # back to T2
    (history_repo / "util.py").write_text(fn("helper") + fn("late"))
    commit_at(history_repo, "2024-06-01T12:00:00Z", "late helper")
    conn, _ = index_workspace(history_repo)
    times = node_times(conn)
    assert times["late"] == (ts("2024-06-01T12:00:00Z"),) * 2
    assert times["charge"] == (ts(T1), ts(T1))  # the T3 move is gone
    assert times["invoice"] == (ts(T2), ts(T2))
    assert conn.execute("SELECT count(*) FROM history_commits").fetchone()[0] == 3


def test_renamed_file_keeps_its_history(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    root = make_repo({}, commit=False)
    (root / "old_name.py").write_text(BILLING_V1)
    commit_at(root, T1, "first")
    git(root, "mv", "old_name.py", "new_name.py")
    (root / "new_name.py").write_text(BILLING_V1.replace("return ledger", "return ledger * 2", 1))
    commit_at(root, T2, "rename")
    conn, _ = index_workspace(root)
    times = node_times(conn)
    assert times["charge"] == (ts(T1), ts(T1))
    assert times["refund"] == (ts(T1), ts(T2))


def test_a_folder_its_repository_ignores_is_timed_by_modification_times(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    # A checkout kept inside another repository that ignores it: git knows nothing of
    # its files, so they are walked and dated like files outside git (not "now").
    repo = make_repo({".gitignore": "vendored/\n", "app.py": fn("app")})
    vendored = repo / "vendored"
    vendored.mkdir()
    (vendored / "lib.py").write_text(fn("helper"))
    os.utime(vendored / "lib.py", (ts(T1), ts(T1)))
    conn, summary = index_workspace(vendored)
    assert summary.files == 1
    assert node_times(conn) == {"helper": (ts(T1), ts(T1))}
    ids = {str(n): int(i) for i, n in conn.execute("SELECT id, name FROM nodes")}
    assert node_history(conn, [ids["helper"]])[ids["helper"]].source == "mtime"
    assert update_history(conn, vendored).source == "mtime"


def test_outside_git_times_are_file_modification_times(
    tmp_path: Path, index_workspace: IndexWorkspace
) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    (root / "old.py").write_text(fn("ancient"))
    (root / "new.py").write_text(fn("recent"))
    os.utime(root / "old.py", (ts(T1), ts(T1)))
    os.utime(root / "new.py", (ts(T3), ts(T3)))
    conn, _ = index_workspace(root)
    assert node_times(conn) == {"ancient": (ts(T1), ts(T1)), "recent": (ts(T3), ts(T3))}
    searcher = Searcher(conn)
    assert names_found(searcher, "ledger", since="2024-02-01") == {"recent"}
    assert names_found(searcher, "ledger", as_of="2024-02-01") == {"ancient"}
    ids = {str(n): int(i) for i, n in conn.execute("SELECT id, name FROM nodes")}
    assert node_history(conn, [ids["recent"]])[ids["recent"]].source == "mtime"
    # The rows were dated as they were written: no second pass is left to do.
    assert update_history(conn, root).files_timed == 0
    (root / "old.py").write_text(fn("ancient") + fn("younger"))
    os.utime(root / "old.py", (ts(T2), ts(T2)))
    index_workspace(root)
    assert node_times(conn)["younger"] == (ts(T2), ts(T2))
    assert node_times(conn)["ancient"] == (ts(T2), ts(T2))  # a file time dates all its lines


@pytest.mark.parametrize(
    "options",
    [
        {"since": "last tuesday-ish"},
        {"until": "2024-13-45"},
        {"as_of": "2024-02-30T10:00"},
        {"since": ""},
        {"since": "2024-05-01", "until": "2024-01-01"},
        {"since": "v9.9.9"},
    ],
)
def test_malformed_times_are_query_errors(searcher: Searcher, options: dict[str, str]) -> None:
    with pytest.raises(QueryError):
        searcher.search(SearchRequest(query="ledger", **options))  # type: ignore[arg-type]


@pytest.fixture
def in_repo(history_repo: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.chdir(history_repo)
    yield history_repo


def test_cli_filters_and_shows_the_last_change(
    in_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    assert (
        main(["search", "ledger", "--no-embed", "--since", "2024-03-01", "--json", "-k", "50"]) == 0
    )
    data = json.loads(capsys.readouterr().out)
    names = {r["qualified_name"].split(".")[-1] for r in data["results"]}
    assert {"charge", "audit"} <= names and not {"refund", "invoice"} & names
    audit = next(r for r in data["results"] if r["qualified_name"].endswith("audit"))
    assert audit["history"]["subject"] == "audit reads one entry"
    assert audit["history"]["changed"] == "2024-04-10T12:00:00Z"

    assert main(["search", "refund", "--no-embed", "--until", "2024-02-15"]) == 0
    out = capsys.readouterr().out
    assert "changed 2024-02-10" in out and "add invoice" in out

    assert main(["search", "ledger", "--no-embed", "--since", "52w", "--json"]) == 0
    assert main(["search", "ledger", "--no-embed", "--since", "3 days ago", "--json"]) == 0
    capsys.readouterr()
    assert main(["symbols", "refund", "--since", "2024-03-01", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["exact"] == []
    assert main(["symbols", "refund", "--as-of", "2024-01-15", "--json"]) == 0
    exact = json.loads(capsys.readouterr().out)["exact"]
    assert exact and exact[0]["history"]["changed"] == "2024-02-10T12:00:00Z"
    assert main(["callers", "charge", "--until", "2024-01-01", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["nodes"] == []


def test_cli_rejects_a_malformed_time(in_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "ledger", "--no-embed", "--since", "soonish"]) == 2
    assert "cannot read since 'soonish'" in " ".join(capsys.readouterr().err.split())


def test_a_workspace_inside_a_repository_uses_its_history(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    root = make_repo({}, commit=False)
    (root / "service").mkdir()
    (root / "service" / "billing.py").write_text(BILLING_V1)
    (root / "other.py").write_text(fn("outside"))
    commit_at(root, T1, "first")
    (root / "service" / "billing.py").write_text(BILLING_V2)
    commit_at(root, T2, "second")
    conn, _ = index_workspace(root / "service")
    times = node_times(conn)
    assert "outside" not in times
    assert times["invoice"] == (ts(T2), ts(T2))
    assert times["charge"] == (ts(T1), ts(T1))
    paths = [str(r[0]) for r in conn.execute("SELECT path FROM history_files")]
    assert paths == ["service/billing.py"]


def test_cli_reads_unix_seconds_as_the_servers_do(
    in_repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The CLI takes the Unix seconds the language server and MCP take for a time."""
    import json
    from datetime import UTC, datetime

    def names(*options: str) -> set[str]:
        assert main(["search", "ledger", "--no-embed", "--json", "-k", "50", *options]) == 0
        data = json.loads(capsys.readouterr().out)
        return {r["qualified_name"].split(".")[-1] for r in data["results"]}

    march = datetime(2024, 3, 1, tzinfo=UTC).timestamp()
    by_date = names("--since", "2024-03-01T00:00:00Z")
    assert by_date and names("--since", str(int(march))) == by_date
    assert names("--since", f"@{int(march)}") == by_date
    assert names("--since", f"{march:.1f}") == by_date
