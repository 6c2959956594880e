"""The writer during a bulk build: one FTS5 flush per transaction (not per file),
compaction only when rows were removed. Real files, real parsing, real SQLite."""

from __future__ import annotations

from pathlib import Path

import apsw

from codesift.config import IndexSettings
from codesift.preparation import FileJob, PreparedFile, prepare_file
from codesift.store.database import open_database, scalar
from codesift.store.writer import IndexWriter

FTS_TABLES = ("code_fts", "ast_fts", "names_fts")


def prepared(root: Path, count: int) -> list[PreparedFile]:
    """`count` small Python files, read and parsed as an index run does."""
    files: list[PreparedFile] = []
    for i in range(count):
        path = root / f"mod{i}.py"
        path.write_text(
            f'def handler_{i}(request):\n    """Answer request {i}."""\n'
            f"    return helper_{i}(request) + {i}\n\n\n"
            f"def helper_{i}(value):\n    return value * {i}\n",
            encoding="utf-8",
        )
        stat = path.stat()
        job = FileJob(
            abs_path=str(path),
            path=path.name,
            language="python",
            size=stat.st_size,
            mtime_ns=stat.st_mtime_ns,
            module_path=f"mod{i}",
            settings=IndexSettings(),
        )
        result = prepare_file(job)
        assert isinstance(result, PreparedFile)
        files.append(result)
    return files


def code_matches(conn: apsw.Connection, word: str) -> int:
    return len(
        conn.execute("SELECT rowid FROM code_fts WHERE code_fts MATCH ?", (word,)).fetchall()
    )


def fts_blocks(conn: apsw.Connection) -> dict[str, int]:
    """Rows of each FTS5 table's segment store (grows with every flushed segment)."""
    return {t: int(scalar(conn, f"SELECT count(*) FROM {t}_data")) for t in FTS_TABLES}


def test_files_written_in_one_transaction_flush_fts_once(tmp_path: Path) -> None:
    files = prepared(tmp_path, 40)
    one_by_one = open_database(tmp_path / "one.db")
    together = open_database(tmp_path / "together.db")
    writer_one, writer_together = IndexWriter(one_by_one), IndexWriter(together)
    for item in files:
        with one_by_one:
            writer_one.replace_file(item.meta, item.rows)
    with together:
        for item in files:
            writer_together.replace_file(item.meta, item.rows)

    # One segment per commit: 40 commits write many, one commit writes one per table.
    blocks_together, blocks_one = fts_blocks(together), fts_blocks(one_by_one)
    assert all(blocks_together[t] < blocks_one[t] for t in FTS_TABLES)
    assert all(blocks_together[t] <= 3 for t in FTS_TABLES), blocks_together
    # Same rows either way, found the same way.
    for conn in (one_by_one, together):
        found = conn.execute(
            "SELECT rowid FROM code_fts WHERE code_fts MATCH 'helper_7' ORDER BY rowid"
        ).fetchall()
        assert len(found) == 2
    assert scalar(together, "SELECT count(*) FROM chunks") == scalar(
        one_by_one, "SELECT count(*) FROM chunks"
    )


def test_compaction_only_after_rows_were_removed(tmp_path: Path) -> None:
    files = prepared(tmp_path, 30)
    conn = open_database(tmp_path / "index.db")
    writer = IndexWriter(conn)
    for start in range(0, len(files), 10):  # three transactions: three segments each
        with conn:
            for item in files[start : start + 10]:
                writer.replace_file(item.meta, item.rows)
    added = fts_blocks(conn)

    writer.compact()  # only rows were added: nothing to reclaim, segments kept

    assert fts_blocks(conn) == added
    with conn:
        writer.delete_file("mod3.py")
        writer.replace_file(files[4].meta, files[4].rows)

    writer.compact()  # rows were removed: segments merged, the file rewritten

    assert all(n < added[t] for t, n in fts_blocks(conn).items())
    assert scalar(conn, "PRAGMA freelist_count") == 0
    assert code_matches(conn, "handler_3") == 0
    assert code_matches(conn, "helper_4") == 2
