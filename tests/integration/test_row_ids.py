"""Node and chunk ids: allocated in insertion order, kept by what a file still has,
and never left pointing at something that is gone."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import apsw
import pytest

from codesift.config import load_settings
from codesift.indexer import Indexer, IndexSummary
from codesift.store import database
from codesift.store.database import open_database
from codesift.store.migrations import MIGRATIONS

MakeRepo = Callable[..., Path]
IndexWorkspace = Callable[..., tuple[apsw.Connection, IndexSummary]]

A_PY = '''"""Helpers."""


def foo(x):
    return x + 1


def untouched(y):
    return y * 2
'''

B_PY = """from a import foo as bar


def use(v):
    return bar(v)
"""


def scalar(conn: apsw.Connection, sql: str, params: tuple[Any, ...] = ()) -> Any:
    row = conn.execute(sql, params).fetchone()
    return row[0] if row else None


def ids(conn: apsw.Connection, table: str) -> list[int]:
    return [row[0] for row in conn.execute(f"SELECT id FROM {table} ORDER BY id")]


def node_id(conn: apsw.Connection, qualified_name: str) -> int | None:
    return scalar(conn, "SELECT id FROM nodes WHERE qualified_name = ?", (qualified_name,))


def add_vectors(conn: apsw.Connection) -> None:
    """A vector row for every embeddable chunk (the values do not matter here)."""
    with conn:
        for chunk_id, layer, text_hash in conn.execute(
            "SELECT id, layer, text_hash FROM chunks WHERE layer IN ('code', 'summary', 'doc')"
        ).fetchall():
            conn.execute(
                "INSERT INTO chunk_vectors (chunk_id, layer, embedding) VALUES (?, ?, vec_int8(?))",
                (chunk_id, layer, bytes(384)),
            )
            conn.execute(
                "INSERT INTO embedded (chunk_id, text_hash) VALUES (?, ?)", (chunk_id, text_hash)
            )


def vector_ids(conn: apsw.Connection) -> set[int]:
    return {row[0] for row in conn.execute("SELECT chunk_id FROM chunk_vectors")}


def test_a_fresh_index_numbers_rows_in_insertion_order(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    root = make_repo({"a.py": A_PY, "b.py": B_PY})
    conn, _ = index_workspace(root)
    node_ids = ids(conn, "nodes")
    chunk_ids = ids(conn, "chunks")
    assert node_ids == list(range(1, len(node_ids) + 1))
    assert chunk_ids == list(range(1, len(chunk_ids) + 1))
    # Parents are written with their children (no second pass), and point inside the file.
    parent = scalar(
        conn,
        "SELECT p.qualified_name FROM nodes c JOIN nodes p ON p.id = c.parent_id"
        " WHERE c.qualified_name = 'a.foo'",
    )
    assert parent == "a"


def test_an_edit_keeps_ids_and_vectors_of_what_stayed_and_drops_the_rest(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    root = make_repo({"a.py": A_PY, "b.py": B_PY})
    conn, _ = index_workspace(root)
    add_vectors(conn)
    kept_node = node_id(conn, "a.untouched")
    gone_node = node_id(conn, "a.foo")
    kept_chunks = {
        row[0] for row in conn.execute("SELECT id FROM chunks WHERE node_id = ?", (kept_node,))
    }
    gone_chunks = {
        row[0] for row in conn.execute("SELECT id FROM chunks WHERE node_id = ?", (gone_node,))
    }
    max_node = scalar(conn, "SELECT max(id) FROM nodes")
    assert kept_chunks & vector_ids(conn) and gone_chunks & vector_ids(conn)

    (root / "a.py").write_text(A_PY.replace("def foo(x)", "def renamed(x)"))
    _, summary = index_workspace(root)

    assert summary.indexed == 1
    assert node_id(conn, "a.untouched") == kept_node
    assert node_id(conn, "a.foo") is None
    new_id = node_id(conn, "a.renamed")
    assert new_id is not None and new_id > max_node
    still = {
        row[0] for row in conn.execute("SELECT id FROM chunks WHERE node_id = ?", (kept_node,))
    }
    assert still == kept_chunks
    vectors = vector_ids(conn)
    assert (kept_chunks & vectors) and not (gone_chunks & vectors)
    assert not gone_chunks & {row[0] for row in conn.execute("SELECT chunk_id FROM embedded")}


def test_an_aliased_import_edge_lets_go_of_a_definition_that_is_gone(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    root = make_repo({"a.py": A_PY, "b.py": B_PY})
    conn, _ = index_workspace(root)
    foo = node_id(conn, "a.foo")
    edge = "SELECT dst_id, resolution FROM edges WHERE dst_name = 'bar' AND kind = 'calls'"
    assert conn.execute(edge).fetchone() == (foo, "import")

    # The written name (`bar`) is not the definition's name (`foo`): only the edge's
    # target id ties it to the definition that disappears.
    (root / "a.py").write_text(A_PY.replace("def foo(x)", "def renamed(x)"))
    index_workspace(root)
    assert conn.execute(edge).fetchone() == (None, None)

    (root / "a.py").write_text(A_PY)
    index_workspace(root)
    assert conn.execute(edge).fetchone() == (node_id(conn, "a.foo"), "import")


def test_an_index_with_scattered_ids_is_rebuilt_after_the_upgrade(
    make_repo: MakeRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_repo({"a.py": A_PY})
    db = tmp_path / "old" / "index.db"
    db.parent.mkdir()
    # An index as the version-2 schema left it: a file with a node at a hashed id.
    with monkeypatch.context() as patch:
        patch.setattr(database, "MIGRATIONS", MIGRATIONS[:2])
        conn = open_database(db)
    assert scalar(conn, "PRAGMA user_version") == 2
    conn.execute(
        "INSERT INTO files (id, path, size, mtime_ns, content_hash, language, line_count,"
        " indexed_at) VALUES (1, 'a.py', 1, 1, 'x', 'python', 1, 0)"
    )
    conn.execute(
        "INSERT INTO nodes (id, file_id, kind, name, qualified_name, start_line, end_line,"
        " signature, docstring) VALUES (?, 1, 'function', 'foo', 'a.foo', 1, 2, '', '')",
        ((1 << 62) + 12345,),
    )
    conn.close()

    conn = open_database(db)
    assert scalar(conn, "PRAGMA user_version") == MIGRATIONS[-1].version
    assert scalar(conn, "SELECT count(*) FROM nodes") == 0
    summary = Indexer(root, load_settings(root), conn).run()
    assert summary.indexed == 1
    assert scalar(conn, "SELECT max(id) FROM nodes") < 100
    conn.close()


def test_signatures_move_to_their_own_table_on_upgrade_and_keep_ids_and_vectors(
    make_repo: MakeRepo, tmp_path: Path
) -> None:
    root = make_repo({"a.py": A_PY, "b.py": B_PY})
    db = tmp_path / "old" / "index.db"
    db.parent.mkdir()
    conn = open_database(db)
    Indexer(root, load_settings(root), conn).run()
    add_vectors(conn)
    chunks_before = conn.execute("SELECT id, layer, text_hash FROM chunks ORDER BY id").fetchall()
    vectors_before = vector_ids(conn)
    ast_ids = {row[0] for row in conn.execute("SELECT id FROM chunks WHERE layer = 'ast'")}
    assert ast_ids and vectors_before
    # The index as version 5 left it: signatures in code_fts, no ast_fts.
    with conn:
        conn.execute("DROP TABLE ast_fts")
        conn.executemany(
            "INSERT INTO code_fts (rowid, body) VALUES (?, 'def foo x untouched y use v')",
            [(i,) for i in ast_ids],
        )
        conn.execute("ALTER TABLE embedded DROP COLUMN model")  # migration 7's
        conn.execute("DROP TABLE mentions")  # migration 8's
        conn.execute("ALTER TABLE files DROP COLUMN generated")  # migration 9's
        conn.execute("DROP INDEX nodes_qualified")  # migration 10's
        conn.execute("ALTER TABLE files DROP COLUMN calls_pending")  # migration 11's
        conn.execute("DELETE FROM schema_migrations WHERE version >= 6")
        conn.execute("PRAGMA user_version = 5")
    conn.close()

    conn = open_database(db)
    assert scalar(conn, "PRAGMA user_version") == MIGRATIONS[-1].version == 11
    assert scalar(conn, "SELECT count(*) FROM sqlite_master WHERE name = 'nodes_qualified'") == 1
    code_rows = {row[0] for row in conn.execute("SELECT rowid FROM code_fts")}
    assert not code_rows & ast_ids
    assert scalar(conn, "SELECT count(*) FROM ast_fts") == 0
    summary = Indexer(root, load_settings(root), conn).run()

    assert summary.indexed == 2  # every file read again
    assert {row[0] for row in conn.execute("SELECT rowid FROM ast_fts")} == ast_ids
    assert not {row[0] for row in conn.execute("SELECT rowid FROM code_fts")} & ast_ids
    assert (
        conn.execute("SELECT id, layer, text_hash FROM chunks ORDER BY id").fetchall()
        == chunks_before
    )
    assert vector_ids(conn) == vectors_before
    conn.close()
