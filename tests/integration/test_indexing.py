"""End-to-end indexing on real files: real git repositories, real tree-sitter,
real SQLite through apsw. Each test builds its workspace under tmp_path."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import apsw
import pytest

import codesift
from codesift import indexer as indexer_module
from codesift import worker_pool
from codesift.config import Settings
from codesift.errors import CorruptIndexError, ForeignIndexError
from codesift.indexer import BULK_FILES, Indexer, IndexSummary
from codesift.store.database import APPLICATION_ID, move_aside, open_database

if TYPE_CHECKING:
    from conftest import Unprivileged  # tests/conftest.py

pytestmark = pytest.mark.usefixtures("git_isolation")

MakeRepo = Callable[..., Path]
IndexWorkspace = Callable[..., tuple[apsw.Connection, IndexSummary]]
SERVER_DIR = Path(codesift.__file__).resolve().parent.parent


# --- helpers ---------------------------------------------------------------------------


def write(root: Path, relpath: str, content: str | bytes) -> Path:
    path = root / relpath
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def scalar(conn: apsw.Connection, sql: str, params: tuple[Any, ...] = ()) -> Any:
    row = conn.execute(sql, params).fetchone()
    return row[0] if row else None


def file_paths(conn: apsw.Connection) -> set[str]:
    return {row[0] for row in conn.execute("SELECT path FROM files")}


def node_ids(conn: apsw.Connection, path: str) -> dict[str, int]:
    """qualified_name -> id of the nodes of one file."""
    return {
        row[0]: row[1]
        for row in conn.execute(
            "SELECT n.qualified_name, n.id FROM nodes n JOIN files f ON f.id = n.file_id"
            " WHERE f.path = ?",
            (path,),
        )
    }


def skipped_reasons(summary: IndexSummary) -> dict[str, str]:
    return dict(summary.skipped)


def fts_rowids(conn: apsw.Connection, table: str, term: str) -> set[int]:
    quoted = '"' + term.replace('"', '""') + '"'
    return {
        row[0]
        for row in conn.execute(f"SELECT rowid FROM {table} WHERE {table} MATCH ?", (quoted,))
    }


def names_matching(conn: apsw.Connection, substring: str) -> set[str]:
    """Node names whose trigrams all occur: how names_fts (detail=none) is queried."""
    lowered = substring.lower()
    grams = sorted({lowered[i : i + 3] for i in range(len(lowered) - 2)})
    query = " AND ".join('"' + g.replace('"', '""') + '"' for g in grams)
    return {
        row[0]
        for row in conn.execute(
            "SELECT n.name FROM names_fts JOIN nodes n ON n.id = names_fts.rowid"
            " WHERE names_fts MATCH ?",
            (query,),
        )
    }


def fts_orphans(conn: apsw.Connection) -> dict[str, int]:
    """FTS rows whose rowid has no chunk/node row of the right kind (should all be 0)."""
    return {
        "code_fts": scalar(
            conn,
            "SELECT count(*) FROM code_fts WHERE rowid NOT IN"
            " (SELECT id FROM chunks WHERE layer = 'code')",
        ),
        "ast_fts": scalar(
            conn,
            "SELECT count(*) FROM ast_fts WHERE rowid NOT IN"
            " (SELECT id FROM chunks WHERE layer = 'ast')",
        ),
        "doc_fts": scalar(
            conn,
            "SELECT count(*) FROM doc_fts WHERE rowid NOT IN"
            " (SELECT id FROM chunks WHERE layer = 'doc')",
        ),
        "names_fts": scalar(
            conn, "SELECT count(*) FROM names_fts WHERE rowid NOT IN (SELECT id FROM nodes)"
        ),
    }


DANGLING_EDGES = (
    "SELECT count(*) FROM all_edges WHERE dst_id IS NOT NULL"
    " AND dst_id NOT IN (SELECT id FROM nodes)"
)


def table_counts(conn: apsw.Connection) -> dict[str, int]:
    counts = {
        table: scalar(conn, f"SELECT count(*) FROM {table}")
        for table in (
            "files",
            "nodes",
            "edges",
            "chunks",
            "code_fts",
            "ast_fts",
            "doc_fts",
            "names_fts",
        )
    }
    for layer, count in conn.execute("SELECT layer, count(*) FROM chunks GROUP BY layer"):
        counts[f"chunks.{layer}"] = count
    return counts


def assert_fts_in_step(conn: apsw.Connection) -> None:
    """Every FTS table holds exactly one row per chunk/node it indexes."""
    assert fts_orphans(conn) == {"code_fts": 0, "ast_fts": 0, "doc_fts": 0, "names_fts": 0}
    assert scalar(conn, "SELECT count(*) FROM code_fts") == scalar(
        conn, "SELECT count(*) FROM chunks WHERE layer = 'code'"
    )
    assert scalar(conn, "SELECT count(*) FROM ast_fts") == scalar(
        conn, "SELECT count(*) FROM chunks WHERE layer = 'ast'"
    )
    assert scalar(conn, "SELECT count(*) FROM doc_fts") == scalar(
        conn, "SELECT count(*) FROM chunks WHERE layer = 'doc'"
    )
    assert scalar(conn, "SELECT count(*) FROM names_fts") == scalar(
        conn, "SELECT count(*) FROM nodes"
    )


# --- a multi-language workspace --------------------------------------------------------

A_PY = '''\
"""Greeting helpers."""
from b import helper


class Greeter:
    """Greets people by name."""

    def greet(self, name: str, punctuation: str = "!") -> str:
        """Return a greeting for name.

        Uses the shared helper.
        """
        return helper(name) + punctuation


def parseHTTPHeader(line):
    key, _, value = line.partition(":")
    return key.strip(), value.strip()
'''

B_PY = """\
def helper(name):
    return "hello " + name
"""

MAIN_GO = """\
package main

import "fmt"

// Add adds two ints.
func Add(a, b int) int {
\treturn a + b
}

func main() {
\tfmt.Println(Add(1, 2))
}
"""

UTIL_TS = """\
export function formatName(first: string, last: string): string {
  return `${first} ${last}`;
}

export class Box {
  open(): void {
    formatName("a", "b");
  }
}
"""

README_MD = """\
# Project

Intro text.

## Networking

The client will retry a failed request with exponential backoff.

## Storage

Data is kept in SQLite.
"""

# 50 lines with a paragraph break at line 35: two line windows, 1-34 and 36-50.
CONFIG_YAML = (
    "server:\n"
    + "".join(f"  option_{i}: value_{i}\n" for i in range(2, 35))
    + "\n"
    + "database:\n"
    + "".join(f"  setting_{i}: {i}\n" for i in range(37, 50))
    + "  retention_days: 30\n"
)

MULTI_LANGUAGE = {
    "a.py": A_PY,
    "b.py": B_PY,
    "main.go": MAIN_GO,
    "util.ts": UTIL_TS,
    "README.md": README_MD,
    "deploy/config.yaml": CONFIG_YAML,
}


@pytest.fixture
def multi(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> tuple[Path, apsw.Connection, IndexSummary]:
    root = make_repo(MULTI_LANGUAGE)
    conn, summary = index_workspace(root)
    return root, conn, summary


def test_multi_language_counts(multi: tuple[Path, apsw.Connection, IndexSummary]) -> None:
    _, conn, summary = multi

    assert summary.indexed == 6
    assert summary.files == 6
    assert summary.skipped == []
    languages = dict(conn.execute("SELECT path, language FROM files"))
    assert languages == {
        "a.py": "python",
        "b.py": "python",
        "main.go": "go",
        "util.ts": "typescript",
        "README.md": "markdown",
        "deploy/config.yaml": "text",
    }
    nodes_per_file = dict(
        conn.execute(
            "SELECT f.path, count(n.id) FROM files f LEFT JOIN nodes n ON n.file_id = f.id"
            " GROUP BY f.path"
        )
    )
    # Each code file has its module node; markdown and YAML have no definitions.
    assert nodes_per_file == {
        "a.py": 4,  # a, Greeter, greet, parseHTTPHeader
        "b.py": 2,  # b, helper
        "main.go": 3,  # main.go, Add, main
        "util.ts": 4,  # util.ts, formatName, Box, open
        "README.md": 0,
        "deploy/config.yaml": 0,
    }
    counts = table_counts(conn)
    # Every non-module node has one code, ast and summary chunk (9 nodes); module-level
    # lines give one more code chunk in a.py and main.go; the YAML gives two windows;
    # a.py describes itself (its docstring): a summary of the file.
    assert counts["chunks.code"] == 9 + 2 + 2
    assert counts["chunks.ast"] == 9
    assert counts["chunks.summary"] == 9 + 1
    assert counts["chunks.doc"] == 3
    assert counts["chunks"] == 13 + 9 + 10 + 3 == summary.chunks
    assert counts["nodes"] == 13 == summary.nodes
    assert counts["code_fts"] == 13
    assert counts["ast_fts"] == 9
    assert counts["doc_fts"] == 3
    assert counts["names_fts"] == 13
    assert_fts_in_step(conn)


def test_python_method_node_row(multi: tuple[Path, apsw.Connection, IndexSummary]) -> None:
    _, conn, _ = multi

    rows = conn.execute(
        "SELECT n.kind, n.name, n.start_line, n.end_line, n.signature, n.docstring,"
        " p.qualified_name FROM nodes n JOIN nodes p ON p.id = n.parent_id"
        " WHERE n.qualified_name = ?",
        ("a.Greeter.greet",),
    ).fetchall()

    assert rows == [
        (
            "method",
            "greet",
            8,  # 1-based, inclusive: from `def` to the return line
            13,
            'def greet(self, name: str, punctuation: str = "!") -> str',
            "Return a greeting for name.\n\nUses the shared helper.",
            "a.Greeter",
        )
    ]
    code = conn.execute(
        "SELECT c.start_line, c.end_line FROM chunks c JOIN nodes n ON n.id = c.node_id"
        " WHERE n.qualified_name = 'a.Greeter.greet' AND c.layer = 'code'"
    ).fetchall()
    assert code == [(8, 13)]


def test_contains_edges_in_all_edges_view(
    multi: tuple[Path, apsw.Connection, IndexSummary],
) -> None:
    _, conn, _ = multi

    contains = set(
        conn.execute(
            "SELECT s.qualified_name, d.qualified_name FROM all_edges e"
            " JOIN nodes s ON s.id = e.src_id JOIN nodes d ON d.id = e.dst_id"
            " WHERE e.kind = 'contains'"
        )
    )

    assert ("a", "a.Greeter") in contains
    assert ("a.Greeter", "a.Greeter.greet") in contains
    assert ("a", "a.parseHTTPHeader") in contains
    assert ("Box", "Box.open") in contains
    assert ("main.go", "main.Add") in contains
    # One contains edge per node that has a parent: every node but the 4 module nodes.
    assert len(contains) == 13 - 4
    # Containment lives in nodes.parent_id, not in the edges table.
    assert scalar(conn, "SELECT count(*) FROM edges WHERE kind = 'contains'") == 0


def test_cross_file_call_is_resolved(multi: tuple[Path, apsw.Connection, IndexSummary]) -> None:
    _, conn, _ = multi

    rows = conn.execute(
        "SELECT e.kind, e.dst_name, d.qualified_name, e.resolution, e.line FROM edges e"
        " JOIN nodes s ON s.id = e.src_id LEFT JOIN nodes d ON d.id = e.dst_id"
        " WHERE s.qualified_name = 'a.Greeter.greet'"
    ).fetchall()

    assert len(rows) == 1
    kind, dst_name, target, resolution, line = rows[0]
    assert (kind, dst_name, target, line) == ("calls", "helper", "b.helper", 13)
    assert resolution in ("import", "unique")
    # The import itself is an edge of the module node, resolved the same way.
    imports = conn.execute(
        "SELECT d.qualified_name FROM edges e JOIN nodes s ON s.id = e.src_id"
        " JOIN nodes d ON d.id = e.dst_id WHERE s.qualified_name = 'a' AND e.kind = 'imports'"
    ).fetchall()
    assert imports == [("b.helper",)]
    # A same-file call resolves locally.
    local = conn.execute(
        "SELECT d.qualified_name, e.resolution FROM edges e JOIN nodes s ON s.id = e.src_id"
        " JOIN nodes d ON d.id = e.dst_id WHERE s.qualified_name = 'main.main'"
    ).fetchall()
    assert local == [("main.Add", "scope")]


def test_markdown_sections_are_doc_chunks(
    multi: tuple[Path, apsw.Connection, IndexSummary],
) -> None:
    _, conn, _ = multi

    sections = conn.execute(
        "SELECT c.title, c.start_line, c.end_line, c.node_id FROM chunks c"
        " JOIN files f ON f.id = c.file_id WHERE f.path = 'README.md' ORDER BY c.start_line"
    ).fetchall()
    assert sections == [
        ("Project", 1, 3, None),
        ("Project > Networking", 5, 7, None),
        ("Project > Storage", 9, 11, None),
    ]
    storage = scalar(conn, "SELECT id FROM chunks WHERE title = 'Project > Storage'")
    assert fts_rowids(conn, "doc_fts", "sqlite") == {storage}
    # Markdown text is not in the code index.
    assert fts_rowids(conn, "code_fts", "sqlite") == set()


def test_yaml_is_indexed_as_code_line_windows(
    multi: tuple[Path, apsw.Connection, IndexSummary],
) -> None:
    _, conn, _ = multi

    windows = conn.execute(
        "SELECT c.id, c.layer, c.start_line, c.end_line, c.title, c.node_id FROM chunks c"
        " JOIN files f ON f.id = c.file_id WHERE f.path = 'deploy/config.yaml'"
        " ORDER BY c.start_line"
    ).fetchall()

    assert [w[1:] for w in windows] == [
        ("code", 1, 34, "deploy/config.yaml", None),
        ("code", 36, 50, "deploy/config.yaml", None),
    ]
    assert fts_rowids(conn, "code_fts", "retention_days") == {windows[1][0]}
    assert fts_rowids(conn, "code_fts", "option_2") == {windows[0][0]}
    assert fts_rowids(conn, "doc_fts", "retention_days") == set()


# --- full-text search ------------------------------------------------------------------


def test_code_fts_finds_identifier_parts_and_whole(
    multi: tuple[Path, apsw.Connection, IndexSummary],
) -> None:
    _, conn, _ = multi
    header_chunks = {
        row[0]
        for row in conn.execute(
            "SELECT c.id FROM chunks c JOIN nodes n ON n.id = c.node_id"
            " WHERE n.name = 'parseHTTPHeader' AND c.layer IN ('code', 'ast')"
        )
    }
    assert len(header_chunks) == 2

    def code_and_ast(term: str) -> set[int]:
        return fts_rowids(conn, "code_fts", term) | fts_rowids(conn, "ast_fts", term)

    for term in ("parse", "header", "http", "parsehttpheader", "parseHTTPHeader"):
        assert header_chunks <= code_and_ast(term), term
    # Only the function's own chunks (and the module outline never lists it).
    assert code_and_ast("parsehttpheader") == header_chunks
    # No stemming in the code index: "headers" is another word.
    assert fts_rowids(conn, "code_fts", "headers") == set()


def test_doc_fts_stems_words(multi: tuple[Path, apsw.Connection, IndexSummary]) -> None:
    _, conn, _ = multi
    networking = scalar(conn, "SELECT id FROM chunks WHERE title = 'Project > Networking'")

    # The text says "retry ... request"; the queries use other forms of the words.
    assert fts_rowids(conn, "doc_fts", "retries") == {networking}
    assert fts_rowids(conn, "doc_fts", "requests") == {networking}
    assert fts_rowids(conn, "doc_fts", "retrying") == {networking}


def test_names_fts_finds_node_by_substring(
    multi: tuple[Path, apsw.Connection, IndexSummary],
) -> None:
    _, conn, _ = multi

    assert names_matching(conn, "TTPHead") == {"parseHTTPHeader"}
    assert names_matching(conn, "ttp") == {"parseHTTPHeader"}
    assert names_matching(conn, "ormatNa") == {"formatName"}
    assert names_matching(conn, "reet") == {"Greeter", "greet"}
    assert names_matching(conn, "nothere") == set()


# --- incremental runs ------------------------------------------------------------------


def test_second_run_without_changes_indexes_nothing(
    multi: tuple[Path, apsw.Connection, IndexSummary], index_workspace: IndexWorkspace
) -> None:
    root, conn, _ = multi
    before = table_counts(conn)

    _, summary = index_workspace(root)

    assert (summary.indexed, summary.unchanged, summary.deleted) == (0, 6, 0)
    assert summary.files == 6
    assert table_counts(conn) == before


@pytest.mark.parametrize("in_git", [True, False], ids=["git", "no-git"])
def test_a_run_with_nothing_to_do_writes_nothing(
    in_git: bool, tmp_path: Path, make_repo: MakeRepo
) -> None:
    # An up-to-date index that codesift may not write (a read-only file, another
    # user's index) must still serve searches, which update the index first.
    files = {"a.py": "def alpha():\n    return 1\n", "b.py": "def beta():\n    return 2\n"}
    if in_git:
        root = make_repo(files)
        write(root, "b.py", "def beta():\n    return 3\n")  # uncommitted lines
    else:
        root = tmp_path / "plain"
        for relpath, text in files.items():
            write(root, relpath, text)
    conn = open_database(tmp_path / "index" / "index.db")
    try:
        Indexer(root, Settings(), conn).run()
        before = conn.total_changes()

        conn.execute("PRAGMA query_only = 1")  # any write now raises ReadOnlyError
        summary = Indexer(root, Settings(), conn).run()
        conn.execute("PRAGMA query_only = 0")

        assert (summary.indexed, summary.unchanged, summary.files) == (0, 2, 2)
        assert conn.total_changes() == before
    finally:
        conn.close()


def test_touched_mtime_rehashes_but_indexes_nothing(
    multi: tuple[Path, apsw.Connection, IndexSummary], index_workspace: IndexWorkspace
) -> None:
    root, conn, _ = multi
    stamp = conn.execute("SELECT mtime_ns, indexed_at FROM files WHERE path = 'b.py'").fetchone()
    assert stamp is not None
    old_mtime, indexed_at = stamp
    new_mtime = old_mtime + 5_000_000_000
    os.utime(root / "b.py", ns=(new_mtime, new_mtime))

    indexer = Indexer(root, Settings(), conn)
    plan = indexer.plan()
    assert [f.path for f in plan.to_index] == ["b.py"]  # a candidate by its stamp
    summary = indexer.apply(plan)

    assert summary.indexed == 0
    assert summary.unchanged == 6
    assert conn.execute(
        "SELECT mtime_ns, indexed_at FROM files WHERE path = 'b.py'"
    ).fetchone() == (new_mtime, indexed_at)
    # The new mtime was recorded: the next plan does not read the file again.
    assert Indexer(root, Settings(), conn).plan().to_index == []


def test_edited_file_is_reindexed_alone(
    multi: tuple[Path, apsw.Connection, IndexSummary], index_workspace: IndexWorkspace
) -> None:
    root, conn, _ = multi
    a_before = node_ids(conn, "a.py")
    others_before = {p: node_ids(conn, p) for p in ("b.py", "main.go", "util.ts")}
    write(root, "a.py", A_PY.replace("def parseHTTPHeader(line):", "def splitHeaderLine(line):"))

    _, summary = index_workspace(root)

    assert summary.indexed == 1
    assert summary.unchanged == 5
    after = node_ids(conn, "a.py")
    assert "a.parseHTTPHeader" not in after
    assert "a.splitHeaderLine" in after
    assert a_before["a.parseHTTPHeader"] not in set(after.values())
    assert scalar(conn, "SELECT count(*) FROM nodes WHERE name = 'parseHTTPHeader'") == 0
    assert {p: node_ids(conn, p) for p in others_before} == others_before
    assert fts_rowids(conn, "code_fts", "parsehttpheader") == set()
    assert fts_rowids(conn, "ast_fts", "parsehttpheader") == set()
    assert fts_rowids(conn, "code_fts", "splitheaderline")
    assert fts_rowids(conn, "ast_fts", "splitheaderline")
    assert names_matching(conn, "HTTPHead") == set()
    assert names_matching(conn, "HeaderLine") == {"splitHeaderLine"}
    assert_fts_in_step(conn)


def test_unchanged_function_keeps_its_id_in_an_edited_file(
    multi: tuple[Path, apsw.Connection, IndexSummary], index_workspace: IndexWorkspace
) -> None:
    root, conn, _ = multi
    before = node_ids(conn, "a.py")
    chunk_before = scalar(
        conn,
        "SELECT id FROM chunks WHERE node_id = ? AND layer = 'code'",
        (before["a.Greeter.greet"],),
    )
    # Edit another function of the file and shift greet down by two lines.
    edited = A_PY.replace('"""Greeting helpers."""\n', '"""Greeting helpers.\n\nMore.\n"""\n')
    edited = edited.replace('line.partition(":")', 'line.partition("=")')
    write(root, "a.py", edited)

    _, summary = index_workspace(root)

    assert summary.indexed == 1
    after = node_ids(conn, "a.py")
    assert after == before  # same qualified names, same ids
    assert conn.execute(
        "SELECT start_line, end_line FROM nodes WHERE id = ?", (after["a.Greeter.greet"],)
    ).fetchone() == (11, 16)
    assert (
        scalar(
            conn,
            "SELECT id FROM chunks WHERE node_id = ? AND layer = 'code'",
            (after["a.Greeter.greet"],),
        )
        == chunk_before
    )


def test_deleted_file_leaves_no_rows(
    multi: tuple[Path, apsw.Connection, IndexSummary], index_workspace: IndexWorkspace
) -> None:
    root, conn, _ = multi
    file_id = scalar(conn, "SELECT id FROM files WHERE path = 'a.py'")
    a_nodes = {row[0] for row in conn.execute("SELECT id FROM nodes WHERE file_id = ?", (file_id,))}
    a_chunks = {
        row[0] for row in conn.execute("SELECT id FROM chunks WHERE file_id = ?", (file_id,))
    }
    assert a_nodes and a_chunks
    code_before = scalar(conn, "SELECT count(*) FROM code_fts")
    ast_before = scalar(conn, "SELECT count(*) FROM ast_fts")
    a_code_rows = scalar(
        conn, "SELECT count(*) FROM chunks WHERE file_id = ? AND layer = 'code'", (file_id,)
    )
    a_ast_rows = scalar(
        conn, "SELECT count(*) FROM chunks WHERE file_id = ? AND layer = 'ast'", (file_id,)
    )
    assert a_code_rows and a_ast_rows
    (root / "a.py").unlink()

    _, summary = index_workspace(root)

    assert summary.deleted == 1
    assert summary.indexed == 0
    assert "a.py" not in file_paths(conn)
    assert scalar(conn, "SELECT count(*) FROM nodes WHERE file_id = ?", (file_id,)) == 0
    assert scalar(conn, "SELECT count(*) FROM chunks WHERE file_id = ?", (file_id,)) == 0
    placeholders = ",".join("?" * len(a_nodes))
    assert (
        scalar(
            conn,
            f"SELECT count(*) FROM all_edges WHERE src_id IN ({placeholders})"
            f" OR dst_id IN ({placeholders})",
            (*a_nodes, *a_nodes),
        )
        == 0
    )
    assert scalar(conn, "SELECT count(*) FROM code_fts") == code_before - a_code_rows
    assert scalar(conn, "SELECT count(*) FROM ast_fts") == ast_before - a_ast_rows
    code_rowids = {row[0] for row in conn.execute("SELECT rowid FROM code_fts")}
    code_rowids |= {row[0] for row in conn.execute("SELECT rowid FROM ast_fts")}
    name_rowids = {row[0] for row in conn.execute("SELECT rowid FROM names_fts")}
    assert not code_rowids & a_chunks
    assert not name_rowids & a_nodes
    assert fts_rowids(conn, "code_fts", "parsehttpheader") == set()
    assert names_matching(conn, "Greeter") == set()
    assert_fts_in_step(conn)


def test_deleted_callee_file_unresolves_its_callers(
    multi: tuple[Path, apsw.Connection, IndexSummary], index_workspace: IndexWorkspace
) -> None:
    root, conn, _ = multi
    (root / "b.py").unlink()

    index_workspace(root)

    assert conn.execute(
        "SELECT e.kind, e.dst_id, e.resolution FROM edges e JOIN nodes s ON s.id = e.src_id"
        " WHERE e.dst_name = 'helper' ORDER BY e.kind"
    ).fetchall() == [("calls", None, None), ("imports", None, None)]
    assert scalar(conn, DANGLING_EDGES) == 0


def test_deleted_markdown_leaves_no_doc_fts_rows(
    multi: tuple[Path, apsw.Connection, IndexSummary], index_workspace: IndexWorkspace
) -> None:
    root, conn, _ = multi
    (root / "README.md").unlink()

    index_workspace(root)

    assert scalar(conn, "SELECT count(*) FROM doc_fts") == 0
    assert fts_rowids(conn, "doc_fts", "retries") == set()
    assert_fts_in_step(conn)


def test_renamed_function_unresolves_then_reresolves_callers(
    multi: tuple[Path, apsw.Connection, IndexSummary], index_workspace: IndexWorkspace
) -> None:
    root, conn, _ = multi

    def greet_call() -> tuple[str, str | None, str | None]:
        row = conn.execute(
            "SELECT e.dst_name, d.qualified_name, e.resolution FROM edges e"
            " JOIN nodes s ON s.id = e.src_id LEFT JOIN nodes d ON d.id = e.dst_id"
            " WHERE s.qualified_name = 'a.Greeter.greet' AND e.kind = 'calls'"
        ).fetchone()
        assert row is not None
        return row[0], row[1], row[2]

    assert greet_call()[:2] == ("helper", "b.helper")

    # Only the callee changes: the caller's edge must stop pointing at the old node.
    write(root, "b.py", B_PY.replace("def helper", "def assist"))
    _, summary = index_workspace(root)
    assert summary.indexed == 1
    assert greet_call() == ("helper", None, None)
    assert scalar(conn, DANGLING_EDGES) == 0

    # Now the caller follows the rename.
    write(root, "a.py", A_PY.replace("helper", "assist"))
    _, summary = index_workspace(root)
    assert summary.indexed == 1
    name, target, resolution = greet_call()
    assert (name, target) == ("assist", "b.assist")
    assert resolution in ("import", "unique")


def test_call_resolves_when_its_target_file_appears_later(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    root = make_repo({"a.py": A_PY})
    conn, _ = index_workspace(root)
    assert (
        scalar(conn, "SELECT count(*) FROM edges WHERE dst_name = 'helper' AND dst_id IS NULL") == 2
    )

    write(root, "b.py", B_PY)
    _, summary = index_workspace(root)

    assert summary.indexed == 1
    targets = {
        row[0]
        for row in conn.execute(
            "SELECT d.qualified_name FROM edges e JOIN nodes d ON d.id = e.dst_id"
            " WHERE e.dst_name = 'helper'"
        )
    }
    assert targets == {"b.helper"}


# --- interrupted runs ------------------------------------------------------------------

GENERATED_FILES = 600
GENERATED_TOTAL = GENERATED_FILES + 7  # six __init__.py files and a README
METHODS_PER_MODEL = 8

# Indexes argv[1] into argv[2]; a positive argv[3] makes it SIGKILL itself once that
# many files went by (a deterministic point inside an open batch transaction).
INDEX_SCRIPT = """
import os, signal, sys
from pathlib import Path
from codesift.config import Settings
from codesift.indexer import Indexer
from codesift.store.database import open_database

root, db, kill_at = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])

def progress(event):
    if event.phase == "parsing" and event.done == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)

Indexer(root, Settings(), open_database(db)).run(progress=progress)
"""


def generate_workspace(root: Path, count: int = GENERATED_FILES) -> None:
    """`count` Python modules in six packages; each calls a function of the previous one.

    A module has 11 nodes (module, class, 8 methods, function) and 30 chunks, plus
    one for its import line (all but mod0)."""
    for i in range(count):
        parts = []
        if i:
            parts.append(f"from pkg{(i - 1) % 6}.mod{i - 1} import func_{i - 1}\n\n\n")
        parts.append(f'class Model{i}:\n    """Model number {i}."""\n')
        for m in range(METHODS_PER_MODEL):
            parts.append(
                f"\n    def step_{m}_of_{i}(self, value):\n"
                f'        """Step {m} of model {i}."""\n'
                f"        total = value + {m}\n"
                f"        for item in range(total):\n"
                f"            total += func_{i}(item)\n"
                f"        return total\n"
            )
        parts.append(
            f"\n\ndef func_{i}(value):\n"
            f'    """Compute {i}."""\n'
            + (f"    return func_{i - 1}(value) * 2\n" if i else "    return value\n")
        )
        write(root, f"pkg{i % 6}/mod{i}.py", "".join(parts))
    for p in range(6):
        write(root, f"pkg{p}/__init__.py", "")
    write(root, "README.md", "# Generated\n\nA generated workspace.\n")


def start_index_process(
    root: Path, db: Path, log: Path, kill_at: int = 0
) -> subprocess.Popen[bytes]:
    env = dict(os.environ, PYTHONPATH=str(SERVER_DIR))
    with log.open("wb") as stderr:
        return subprocess.Popen(
            [sys.executable, "-c", INDEX_SCRIPT, str(root), str(db), str(kill_at)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )


def indexed_file_count(db: Path) -> int:
    """Files committed so far, read through a separate read-only connection."""
    if not db.exists():
        return 0
    try:
        conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    except apsw.Error:
        return 0
    try:
        conn.set_busy_timeout(5_000)
        return int(scalar(conn, "SELECT count(*) FROM files"))
    except apsw.Error:  # the schema is not there yet
        return 0
    finally:
        conn.close()


def assert_consistent(conn: apsw.Connection) -> None:
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    # A file row is written in the same transaction as all of its rows.
    files_without_rows = conn.execute(
        "SELECT f.path FROM files f WHERE f.path LIKE '%.py' AND f.size > 0"
        " AND (NOT EXISTS (SELECT 1 FROM chunks c WHERE c.file_id = f.id)"
        "      OR NOT EXISTS (SELECT 1 FROM nodes n WHERE n.file_id = f.id))"
    ).fetchall()
    assert files_without_rows == []
    orphans = {
        "nodes": "SELECT count(*) FROM nodes WHERE file_id NOT IN (SELECT id FROM files)",
        "chunks": "SELECT count(*) FROM chunks WHERE file_id NOT IN (SELECT id FROM files)",
        "edges": "SELECT count(*) FROM edges WHERE src_id NOT IN (SELECT id FROM nodes)",
    }
    assert {name: scalar(conn, sql) for name, sql in orphans.items()} == {
        "nodes": 0,
        "chunks": 0,
        "edges": 0,
    }
    # Every generated module in the index is complete (see generate_workspace).
    incomplete = conn.execute(
        "SELECT f.path FROM files f WHERE f.path LIKE '%/mod%.py' AND ("
        " (SELECT count(*) FROM nodes n WHERE n.file_id = f.id) != 11"
        " OR (SELECT count(*) FROM chunks c WHERE c.file_id = f.id)"
        "    != CASE f.path WHEN 'pkg0/mod0.py' THEN 30 ELSE 31 END)"
    ).fetchall()
    assert incomplete == []
    assert_fts_in_step(conn)


def clean_index_counts(root: Path, db: Path) -> dict[str, int]:
    conn = open_database(db)
    try:
        Indexer(root, Settings(), conn).run()
        return table_counts(conn)
    finally:
        conn.close()


def child_pids(parent: int) -> list[int]:
    """Processes whose parent is `parent` (read from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[1]) == parent:
            found.append(int(entry.name))
    return found


def pid_alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return state[state.rindex(")") + 2] != "Z"


def test_sigkill_leaves_consistent_index_that_next_run_completes(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    generate_workspace(root)
    db = tmp_path / "killed" / "index.db"
    log = tmp_path / "indexer.log"
    db.parent.mkdir()
    proc = start_index_process(root, db, log)
    try:
        deadline = time.monotonic() + 60  # a guard against a hung child, not a timing check
        while indexed_file_count(db) == 0:
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, "the indexer never committed a batch"
            time.sleep(0.02)
        workers = child_pids(proc.pid)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL, log.read_text()
    # The indexer's worker processes die with it instead of lingering as orphans.
    deadline = time.monotonic() + 20
    while any(pid_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in workers if pid_alive(pid)]

    conn = open_database(db)
    try:
        assert_consistent(conn)
        partial = scalar(conn, "SELECT count(*) FROM files")
        assert 0 < partial < GENERATED_TOTAL

        summary = Indexer(root, Settings(), conn).run()

        assert summary.indexed == GENERATED_TOTAL - partial
        assert_consistent(conn)
        resumed = table_counts(conn)
    finally:
        conn.close()
    assert resumed["files"] == GENERATED_TOTAL
    assert resumed == clean_index_counts(root, tmp_path / "clean" / "index.db")


@pytest.fixture(scope="module")
def resumed_after_kill(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[apsw.Connection, apsw.Connection]]:
    """A bulk build killed with most files committed, resumed by a normal (not bulk)
    run; and a clean index of the same tree to compare it with."""
    base = tmp_path_factory.mktemp("resumed_after_kill")
    root = base / "ws"
    generate_workspace(root)
    db = base / "killed" / "index.db"
    db.parent.mkdir()
    log = base / "indexer.log"
    proc = start_index_process(root, db, log, kill_at=450)
    proc.wait(timeout=120)
    assert proc.returncode == -signal.SIGKILL, log.read_text()
    resumed = open_database(db)
    clean = open_database(base / "clean" / "index.db")
    try:
        committed = scalar(resumed, "SELECT count(*) FROM files")
        # At most one batch was lost, so the resumed run is too small to be a bulk build.
        assert GENERATED_TOTAL - committed < BULK_FILES
        Indexer(root, Settings(), resumed).run()
        Indexer(root, Settings(), clean).run()
        yield resumed, clean
    finally:
        resumed.close()
        clean.close()


def edge_resolutions(conn: apsw.Connection) -> dict[str | None, int]:
    return dict(conn.execute("SELECT resolution, count(*) FROM edges GROUP BY resolution"))


def test_resumed_run_resolves_edges_of_the_killed_run(
    resumed_after_kill: tuple[apsw.Connection, apsw.Connection],
) -> None:
    resumed, clean = resumed_after_kill

    assert table_counts(resumed) == table_counts(clean)
    assert edge_resolutions(resumed) == edge_resolutions(clean)


def fts_automerge(conn: apsw.Connection, table: str) -> int:
    value = scalar(conn, f"SELECT v FROM {table}_config WHERE k = 'automerge'")
    return 4 if value is None else int(value)  # 4 is FTS5's default when never set


def test_resumed_run_restores_fts_automerge(
    resumed_after_kill: tuple[apsw.Connection, apsw.Connection],
) -> None:
    resumed, _ = resumed_after_kill

    assert {t: fts_automerge(resumed, t) for t in ("code_fts", "doc_fts", "names_fts")} == {
        "code_fts": 4,
        "doc_fts": 4,
        "names_fts": 4,
    }


# --- bad input -------------------------------------------------------------------------


def test_binary_file_is_skipped_with_reason(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    root = make_repo(
        {
            "ok.py": "def ok():\n    return 1\n",
            "blob.dat": b"header\x00\x01\x02\x00binary payload",
            "logo.png": b"\x89PNG\r\n\x1a\n\x00\x00",
        }
    )

    conn, summary = index_workspace(root)

    assert file_paths(conn) == {"ok.py"}
    reasons = skipped_reasons(summary)
    assert reasons["blob.dat"] == "binary"
    assert reasons["logo.png"] == "binary file type"


def test_file_becoming_binary_is_removed(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    root = make_repo({"data.txt": "plain words here\n", "ok.py": "x = 1\n"})
    conn, _ = index_workspace(root)
    assert file_paths(conn) == {"data.txt", "ok.py"}

    write(root, "data.txt", b"plain\x00words\x00")
    _, summary = index_workspace(root)

    assert skipped_reasons(summary)["data.txt"] == "binary"
    assert file_paths(conn) == {"ok.py"}
    assert fts_rowids(conn, "code_fts", "plain") == set()
    assert_fts_in_step(conn)


def test_file_over_size_limit_is_skipped(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    big = "".join(f"def big_{i}():\n    return {i}\n\n" for i in range(200))
    root = make_repo({"small.py": "def small():\n    return 0\n", "big.py": big})
    assert len(big.encode()) > 2000

    conn, summary = index_workspace(root, max_file_bytes=2000)

    assert file_paths(conn) == {"small.py"}
    assert skipped_reasons(summary)["big.py"] == "larger than 2000 bytes"
    assert scalar(conn, "SELECT count(*) FROM nodes WHERE name LIKE 'big_%'") == 0


def test_file_growing_over_size_limit_is_removed(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    root = make_repo({"grows.py": "def grows():\n    return 0\n"})
    conn, _ = index_workspace(root, max_file_bytes=2000)
    assert file_paths(conn) == {"grows.py"}

    write(root, "grows.py", "def grows():\n    return 0\n" + "# padding\n" * 300)
    _, summary = index_workspace(root, max_file_bytes=2000)

    assert file_paths(conn) == set()
    assert summary.deleted == 1
    assert scalar(conn, "SELECT count(*) FROM nodes") == 0
    assert_fts_in_step(conn)


def test_invalid_utf8_is_indexed_with_flag(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    source = (
        b"def lookup_cafe_name():\n"
        b"    # menu entry: caf\xe9 au lait\n"
        b"    return 'espresso macchiato'\n"
    )
    root = make_repo({"latin1.py": source, "clean.py": "def clean():\n    return 1\n"})

    conn, _ = index_workspace(root)

    flags = dict(conn.execute("SELECT path, invalid_utf8 FROM files"))
    assert flags == {"latin1.py": 1, "clean.py": 0}
    node = conn.execute(
        "SELECT id, start_line, end_line FROM nodes WHERE name = 'lookup_cafe_name'"
    ).fetchone()
    assert node is not None and node[1:] == (1, 3)
    code_chunk = scalar(
        conn, "SELECT id FROM chunks WHERE node_id = ? AND layer = 'code'", (node[0],)
    )
    for term in ("menu", "lait", "espresso", "macchiato", "lookup_cafe_name"):
        assert code_chunk in fts_rowids(conn, "code_fts", term), term


def test_python_syntax_error_keeps_what_parses(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    broken = (
        "def before_error(x):\n"
        "    return x + 1\n"
        "\n"
        "\n"
        "def broken(:\n"
        "    return (\n"
        "\n"
        "\n"
        "class AfterError:\n"
        "    def method_after(self):\n"
        "        return before_error(2)\n"
    )
    root = make_repo({"broken.py": broken})

    conn, summary = index_workspace(root)

    assert summary.indexed == 1
    assert scalar(conn, "SELECT parse_errors FROM files WHERE path = 'broken.py'") > 0
    names = {row[0] for row in conn.execute("SELECT name FROM nodes")}
    assert "before_error" in names
    assert fts_rowids(conn, "code_fts", "before_error")
    # The text after the error is still searchable, whatever tree-sitter made of it.
    assert fts_rowids(conn, "code_fts", "method_after")


def test_file_vanishing_between_plan_and_apply(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    root = make_repo({"keep.py": "def keep():\n    return 1\n"})
    conn, _ = index_workspace(root)
    write(root, "gone.py", "def gone():\n    return 2\n")
    write(root, "keep.py", "def keep():\n    return 3\n")  # indexed, then vanishes too
    indexer = Indexer(root, Settings(), conn)
    plan = indexer.plan()
    assert sorted(f.path for f in plan.to_index) == ["gone.py", "keep.py"]

    (root / "gone.py").unlink()
    (root / "keep.py").unlink()
    summary = indexer.apply(plan)

    assert file_paths(conn) == set()
    assert skipped_reasons(summary) == {"gone.py": "vanished", "keep.py": "vanished"}
    assert scalar(conn, "SELECT count(*) FROM nodes") == 0
    assert_fts_in_step(conn)


# Indexes argv[1] into argv[2] as a user for whom permissions bind (root reads all).
INDEX_AND_REPORT = """
import json, sys
from pathlib import Path
from codesift.config import Settings
from codesift.indexer import Indexer
from codesift.store.database import open_database
root, conn = Path(sys.argv[1]), open_database(Path(sys.argv[2]))
summary = Indexer(root, Settings(), conn).run()
files = sorted(row[0] for row in conn.execute("SELECT path FROM files"))
print(json.dumps({"files": files, "skipped": dict(summary.skipped)}))
"""


def test_unreadable_file_is_skipped(make_repo: MakeRepo, unprivileged: Unprivileged) -> None:
    files = {"open.py": "x = 1\n", "secret.py": "password = 'x'\n"}
    root = make_repo(files, parent=unprivileged.tmp_path)
    (root / "secret.py").chmod(0)

    result = unprivileged.python(INDEX_AND_REPORT, root, unprivileged.tmp_path / "index.db")

    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["files"] == ["open.py"]
    assert outcome["skipped"]["secret.py"].startswith("unreadable")


def test_symlink_loops_in_plain_folder(tmp_path: Path, index_workspace: IndexWorkspace) -> None:
    root = tmp_path / "plain"
    write(root, "real.py", "def real():\n    return 1\n")
    (root / "self").symlink_to(".")  # a folder link to itself
    (root / "sub").mkdir()
    (root / "sub" / "up").symlink_to("..")
    (root / "x.py").symlink_to("y.py")  # x -> y -> x
    (root / "y.py").symlink_to("x.py")

    conn, summary = index_workspace(root)

    assert file_paths(conn) == {"real.py"}
    reasons = skipped_reasons(summary)
    assert reasons["self"] == "symlink to a folder"
    assert reasons["sub/up"] == "symlink to a folder"
    assert reasons["x.py"].startswith("broken symlink")
    assert reasons["y.py"].startswith("broken symlink")


def test_empty_folder(tmp_path: Path, index_workspace: IndexWorkspace) -> None:
    root = tmp_path / "empty"
    root.mkdir()

    conn, summary = index_workspace(root)

    assert (summary.files, summary.indexed, summary.deleted) == (0, 0, 0)
    assert table_counts(conn)["files"] == 0
    _, again = index_workspace(root)
    assert again.files == 0


def test_corrupt_database_is_refused_and_left_alone(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    garbage = os.urandom(16) + bytes(range(256)) * 16
    db.write_bytes(garbage)

    with pytest.raises(CorruptIndexError, match="rebuild"):
        open_database(db)

    assert db.read_bytes() == garbage
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.db"]


def test_damaged_sqlite_database_is_refused_and_left_alone(tmp_path: Path) -> None:
    db = tmp_path / "index.db"
    damaged = b"SQLite format 3\x00" + os.urandom(8192)
    db.write_bytes(damaged)

    with pytest.raises(CorruptIndexError, match="rebuild"):
        open_database(db)

    assert db.read_bytes() == damaged


def make_foreign_database(path: Path) -> bytes:
    other = apsw.Connection(str(path))
    other.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    other.execute("INSERT INTO invoices VALUES (1, 9.5)")
    other.close()
    return path.read_bytes()


def test_foreign_database_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "app.db"
    make_foreign_database(db)

    with pytest.raises(ForeignIndexError, match="did not create"):
        open_database(db)

    other = apsw.Connection(str(db))
    assert other.execute("SELECT * FROM invoices").fetchall() == [(1, 9.5)]
    names = {row[0] for row in other.execute("SELECT name FROM sqlite_schema")}
    assert names == {"invoices"}
    assert scalar(other, "PRAGMA application_id") != APPLICATION_ID
    other.close()


def test_foreign_database_bytes_are_untouched(tmp_path: Path) -> None:
    db = tmp_path / "app.db"
    before = make_foreign_database(db)

    with pytest.raises(ForeignIndexError):
        open_database(db)

    assert db.read_bytes() == before


def test_move_aside_then_rebuild(tmp_path: Path, make_repo: MakeRepo) -> None:
    root = make_repo({"a.py": A_PY, "b.py": B_PY})
    db = tmp_path / "idx" / "index.db"
    db.parent.mkdir()
    garbage = b"not a database at all\n" * 50
    db.write_bytes(garbage)
    with pytest.raises(CorruptIndexError):
        open_database(db)

    moved = move_aside(db)

    assert moved is not None and moved != db
    assert moved.parent == db.parent and moved.name.startswith("index.db.bad-")
    assert moved.read_bytes() == garbage
    assert not db.exists()
    conn = open_database(db)
    try:
        summary = Indexer(root, Settings(), conn).run()
        assert summary.indexed == 2
        assert scalar(conn, "SELECT count(*) FROM nodes WHERE qualified_name = 'b.helper'") == 1
    finally:
        conn.close()
    assert moved.read_bytes() == garbage


def test_move_aside_foreign_database_with_wal_files(tmp_path: Path) -> None:
    db = tmp_path / "app.db"
    make_foreign_database(db)
    with pytest.raises(ForeignIndexError):
        open_database(db)

    moved = move_aside(db)

    assert moved is not None
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith("app.db") and p != moved]
    assert all(".bad-" in name for name in leftovers), leftovers
    conn = open_database(db)
    assert scalar(conn, "PRAGMA application_id") == APPLICATION_ID
    conn.close()


# --- ignore rules ----------------------------------------------------------------------

IGNORE_TREE = {
    "src/app.py": "def app():\n    return 1\n",
    "src/api_pb2.py": "def generated_message():\n    return 2\n",
    "generated/schema.py": "def generated_schema():\n    return 3\n",
    "notes.scratch": "private notes\n",
    "node_modules/left-pad/index.js": "function leftPad(s) { return s; }\n",
    "web/node_modules/dep/lib.js": "function nestedDep() {}\n",
    ".codesiftignore": "generated/\n*.scratch\n",
}


@pytest.mark.parametrize("use_git", [True, False], ids=["git", "walk"])
def test_codesiftignore_exclude_and_node_modules(
    use_git: bool, tmp_path: Path, make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    if use_git:
        root = make_repo(IGNORE_TREE, commit=False)
        # Tracked on purpose: node_modules must stay out even when git lists it.
        subprocess.run(["git", "add", "-A"], cwd=root, check=True, capture_output=True)
        listed = subprocess.run(
            ["git", "ls-files"], cwd=root, check=True, capture_output=True, text=True
        ).stdout
        assert "node_modules/left-pad/index.js" in listed
    else:
        root = tmp_path / "plain"
        for relpath, content in IGNORE_TREE.items():
            write(root, relpath, content)

    conn, summary = index_workspace(root, exclude=["*_pb2.py"])

    assert file_paths(conn) == {"src/app.py", ".codesiftignore"}
    names = {row[0] for row in conn.execute("SELECT name FROM nodes")}
    assert not names & {"generated_message", "generated_schema", "leftPad", "nestedDep"}
    reasons = skipped_reasons(summary)
    assert reasons["node_modules"] == "excluded folder"
    assert reasons["web/node_modules"] == "excluded folder"
    # Ignored files are not part of the workspace: not even listed as skipped.
    assert "generated/schema.py" not in reasons
    assert "src/api_pb2.py" not in reasons


def test_new_ignore_rule_removes_indexed_files(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    root = make_repo(
        {
            "src/app.py": "def app():\n    return 1\n",
            "fixtures/huge.py": "def fixture():\n    pass\n",
        }
    )
    conn, _ = index_workspace(root)
    assert file_paths(conn) == {"src/app.py", "fixtures/huge.py"}

    write(root, ".codesiftignore", "fixtures/\n")
    _, summary = index_workspace(root)
    assert "fixtures/huge.py" not in file_paths(conn)
    assert summary.deleted == 1

    write(root, ".codesift.toml", '[index]\nexclude = ["src/"]\n')
    _, summary = index_workspace(root)
    assert "src/app.py" not in file_paths(conn)
    assert summary.deleted == 1
    assert scalar(conn, "SELECT count(*) FROM nodes WHERE name IN ('app', 'fixture')") == 0
    assert_fts_in_step(conn)


def test_a_file_skipped_for_its_content_is_not_read_again_until_it_changes(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    root = make_repo(
        {"data.txt": "looks like text\x00but is binary\n", "a.py": "def f():\n    pass\n"}
    )
    conn, first = index_workspace(root)
    assert ("data.txt", "binary") in first.skipped
    assert scalar(conn, "SELECT reason FROM skipped_files WHERE path = 'data.txt'") == "binary"

    _, second = index_workspace(root)
    assert second.indexed == 0
    assert ("data.txt", "binary") in second.skipped  # still reported, from the record

    (root / "data.txt").write_text("now plain text\n")
    _, third = index_workspace(root)
    assert third.indexed == 1
    assert scalar(conn, "SELECT count(*) FROM skipped_files") == 0
    assert scalar(conn, "SELECT count(*) FROM files WHERE path = 'data.txt'") == 1

    (root / "data.txt").write_bytes(b"\x00\x01binary again")
    index_workspace(root)
    (root / "data.txt").unlink()
    index_workspace(root)
    assert scalar(conn, "SELECT count(*) FROM skipped_files") == 0
    assert scalar(conn, "SELECT count(*) FROM files WHERE path = 'data.txt'") == 0


def test_worker_processes_build_the_same_index_as_one_process(
    tmp_path: Path, index_workspace: IndexWorkspace
) -> None:
    rows: list[tuple[set[int], set[int], set[tuple[Any, ...]], list[tuple[str, str]]]] = []
    for workers in (1, 2):
        root = tmp_path / f"many{workers}"
        for i in range(120):  # above PARALLEL_MIN_FILES, so the pool is used
            pkg = root / f"pkg{i % 7}"
            pkg.mkdir(parents=True, exist_ok=True)
            (pkg / f"mod{i}.py").write_text(
                f'"""Module {i}."""\n\n\nclass Thing{i}:\n    def run(self):\n'
                f"        return helper{i}()\n\n\ndef helper{i}():\n    return {i}\n"
            )
        (root / "data.txt").write_bytes(b"text\x00then binary")
        conn, summary = index_workspace(root, workers=workers)
        assert summary.indexed == 120
        rows.append(
            (
                {r[0] for r in conn.execute("SELECT id FROM nodes")},
                {r[0] for r in conn.execute("SELECT id FROM chunks")},
                {tuple(r) for r in conn.execute("SELECT src_id, kind, dst_name FROM edges")},
                sorted(summary.skipped),
            )
        )
    # Ids follow the order files are written in, the same with and without workers.
    assert rows[0] == rows[1]
    assert len(rows[0][0]) == 120 * 4
    assert ("data.txt", "binary") in rows[0][3]


@pytest.mark.parametrize("found", ["by the workers", "before the pool starts"])
def test_code_upgraded_under_the_indexer_leaves_the_work_to_it(
    found: str,
    tmp_path: Path,
    index_workspace: IndexWorkspace,
    monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A package upgraded under a running indexer. Found before the pool starts (the
    modules on disk are not the ones this process imported): no worker starts, one
    warning says why. Found by the workers (an upgrade just as they start): they
    import the new code and refuse it with one line each, no traceback. Either way
    the indexer prepares every file itself."""
    import codesift.index_workers as index_workers

    root = tmp_path / "many"
    for i in range(120):  # above PARALLEL_MIN_FILES, so the pool is used
        (root / f"pkg{i % 5}").mkdir(parents=True, exist_ok=True)
        (root / f"pkg{i % 5}" / f"mod{i}.py").write_text(f"def helper{i}():\n    return {i}\n")
    if found == "by the workers":
        monkeypatch.setattr(worker_pool, "code_stamp", lambda: "the code before an upgrade")
    else:
        monkeypatch.setattr(index_workers, "_CODE_STAMP", "the code before an upgrade")
        monkeypatch.setattr(worker_pool, "_warned", set())
    conn, summary = index_workspace(root, workers=2)
    assert summary.indexed == 120
    assert scalar(conn, "SELECT count(*) FROM nodes WHERE kind = 'function'") == 120
    err = capfd.readouterr().err
    assert "Traceback" not in err, err
    if found == "by the workers":
        assert "codesift index worker: codesift changed on disk" in err, err
        assert "an index worker died" in caplog.text
    else:
        assert "codesift changed on disk since this process started" in caplog.text
        assert "an index worker died" not in caplog.text  # no pool was started
        assert "codesift index worker" not in err


def test_a_worker_refuses_other_code() -> None:
    import codesift.index_workers as index_workers

    with pytest.raises(indexer_module.StaleWorkerCode):
        index_workers.init_worker(os.getpid(), "another stamp")


# --- parsing versions ------------------------------------------------------------------

SUMMARY_FILES = {
    **MULTI_LANGUAGE,
    # Two calls on one line, in the order opposite to their names' order.
    "c.go": (
        '// Package c joins things.\npackage c\n\nimport "fmt"\n\n'
        "func Join(a, b int) int {\n\tfmt.Println(zeta(a), alpha(b))\n\treturn a\n}\n\n"
        "func zeta(x int) int { return x }\n\nfunc alpha(x int) int { return x }\n"
    ),
}


def test_the_store_rebuilds_each_summary_text_that_parsing_made(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    # Summary texts are not stored: the reader rebuilds them from node and edge rows,
    # and their vectors are keyed by the hash of the text parsing made. Every rebuilt
    # text must hash to what was stored, file summaries included.
    from codesift.store.reader import chunk_rows
    from codesift.store.rows import text_hash

    root = make_repo(SUMMARY_FILES)
    conn, _ = index_workspace(root)
    stored = dict(conn.execute("SELECT id, text_hash FROM chunks WHERE layer = 'summary'"))
    modules = scalar(
        conn,
        "SELECT count(*) FROM chunks c JOIN nodes n ON n.id = c.node_id"
        " WHERE c.layer = 'summary' AND n.kind = 'module' AND n.parent_id IS NULL",
    )
    assert modules == 2  # the files that describe themselves: a.py (docstring), c.go
    rebuilt = chunk_rows(conn, stored)
    assert {cid: text_hash(row.text) for cid, row in rebuilt.items()} == stored
    texts = {row.text.splitlines()[0]: row.text for row in rebuilt.values()}
    assert "calls Println, alpha, zeta" in texts["c.Join (function)"]
    assert texts["c.go (module)"].splitlines()[1:] == ["Package c joins things."]


def test_files_parsed_by_another_version_of_parsing_are_all_parsed_again(
    multi: tuple[Path, apsw.Connection, IndexSummary], index_workspace: IndexWorkspace
) -> None:
    from codesift.engine.freshness import index_is_current
    from codesift.parsing.model import EXTRACTION_VERSION
    from codesift.store.meta import read_meta, write_meta

    root, conn, _ = multi
    settings = Settings()
    assert read_meta(conn, "extraction_version") == str(EXTRACTION_VERSION)
    assert index_is_current(root, settings.index, conn)
    with conn:  # as an older codesift left it: no file summaries, an older version
        conn.execute(
            "DELETE FROM chunks WHERE layer = 'summary' AND node_id IN"
            " (SELECT id FROM nodes WHERE parent_id IS NULL)"
        )
        write_meta(conn, "extraction_version", str(EXTRACTION_VERSION - 1))
    before = scalar(conn, "SELECT count(*) FROM chunks")

    assert not index_is_current(root, settings.index, conn)
    assert len(Indexer(root, settings, conn).plan().to_index) == 6  # unchanged files too
    _, summary = index_workspace(root)

    assert summary.indexed == 6
    assert read_meta(conn, "extraction_version") == str(EXTRACTION_VERSION)
    assert (
        scalar(conn, "SELECT count(*) FROM chunks") == before + 1
    )  # a.py, the one file that describes itself
    assert index_is_current(root, settings.index, conn)
    _, again = index_workspace(root)
    assert (again.indexed, again.unchanged) == (0, 6)


def test_a_cancelled_run_leaves_the_parsing_version_to_the_next_run(
    multi: tuple[Path, apsw.Connection, IndexSummary],
) -> None:
    import threading

    from codesift.store.meta import read_meta, write_meta

    root, conn, _ = multi
    with conn:
        write_meta(conn, "extraction_version", "0")
    cancel = threading.Event()
    cancel.set()
    summary = Indexer(root, Settings(), conn).run(cancel=cancel)
    assert summary.cancelled
    assert read_meta(conn, "extraction_version") == "0"
    assert Indexer(root, Settings(), conn).run().indexed == 6


def test_a_few_paths_parsed_again_do_not_make_an_old_index_current(
    multi: tuple[Path, apsw.Connection, IndexSummary],
) -> None:
    # A watcher's run over the files just saved parses them with this version, but the
    # other files are still another version's: only a full run records the version.
    from codesift.store.meta import read_meta, write_meta

    root, conn, _ = multi
    with conn:
        write_meta(conn, "extraction_version", "0")
    indexer = Indexer(root, Settings(), conn)
    write(root, "a.py", (root / "a.py").read_text() + "\n\ndef extra():\n    return 0\n")
    summary = indexer.apply(indexer.plan_paths(["a.py"]))
    assert summary.indexed == 1
    assert read_meta(conn, "extraction_version") == "0"
    assert Indexer(root, Settings(), conn).plan().reparse


def test_declared_source_encodings_are_honoured(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    """A Latin-1 Python file with a PEP 263 coding line and a Ruby file with a magic
    comment are indexed with their own names, not with replacement characters."""
    root = make_repo(
        {
            "legacy.py": "# -*- coding: latin-1 -*-\ndef café_function():\n    return 1\n".encode(
                "latin-1"
            ),
            "legacy.rb": "# encoding: iso-8859-1\ndef grüße\n  1\nend\n".encode("latin-1"),
        }
    )
    conn, _ = index_workspace(root)
    names = {str(r[0]) for r in conn.execute("SELECT name FROM nodes")}
    assert {"café_function", "grüße"} <= names, names
    flags = dict(conn.execute("SELECT path, invalid_utf8 FROM files").fetchall())
    assert flags == {"legacy.py": 0, "legacy.rb": 0}, flags


def test_a_symlink_to_a_workspace_file_is_indexed_once(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    """Results name the file's own path, once; the link is reported as skipped."""
    root = make_repo({"real/impl.py": "def settle_invoice():\n    return 1\n"}, commit=False)
    (root / "alias.py").symlink_to("real/impl.py")
    conn, summary = index_workspace(root)
    rows = conn.execute(
        "SELECT f.path FROM nodes n JOIN files f ON f.id = n.file_id WHERE n.name = ?",
        ("settle_invoice",),
    ).fetchall()
    assert [str(r[0]) for r in rows] == ["real/impl.py"]
    assert ("alias.py", "symlink to real/impl.py (indexed there)") in summary.skipped


def test_c_call_resolves_to_the_definition_not_the_header_prototype(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    root = make_repo(
        {
            "include/ring.h": (
                "/** Pushes a value. */\nint ring_push(int v);\nint ring_only_declared(void);\n"
            ),
            "src/ring.c": '#include "ring.h"\nint ring_push(int v) { return v; }\n',
            "src/main.c": (
                '#include "ring.h"\nint main(void) { ring_only_declared(); return ring_push(1); }\n'
            ),
        }
    )
    conn, _ = index_workspace(root)

    nodes = set(conn.execute("SELECT f.path, n.name FROM nodes n JOIN files f ON f.id = n.file_id"))
    assert ("include/ring.h", "ring_push") in nodes  # the prototype is a node of its header
    calls = dict(
        conn.execute(
            "SELECT e.dst_name, f.path FROM edges e JOIN nodes d ON d.id = e.dst_id"
            " JOIN files f ON f.id = d.file_id WHERE e.kind = 'calls'"
        )
    )
    # The definition wins over the header's declaration; a function only declared
    # resolves to its prototype.
    assert calls == {"ring_push": "src/ring.c", "ring_only_declared": "include/ring.h"}
