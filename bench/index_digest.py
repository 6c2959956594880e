"""Digests of what an index holds, to show that a change to indexing keeps it the same.

Prints one digest per part of an index file (`.codesift/index.db`), each over its
rows in a stable order, without what differs from run to run (modification and
indexing times, history times):

- `files`, `nodes`, `edges`, `chunks` (chunk text decompressed);
- `fts terms`: every full-text table's terms with, per row, how often each occurs
  (fts5vocab `instance` rows counted): what bm25 reads, so two indexes with the same
  figure rank every query alike;
- `fts positions`: the same with each occurrence's position (the exact token order).

    PYTHONPATH=server python bench/index_digest.py A/.codesift/index.db B/.codesift/index.db

With two or more files, the parts that differ are named and the exit status is 1.
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))

import apsw

from codesift.store.rows import unpack_text

FTS_TABLES = ("code_fts", "ast_fts", "doc_fts", "names_fts")


def _digest(rows: Iterable[Sequence[Any]]) -> str:
    h = hashlib.blake2b(digest_size=10)
    count = 0
    for row in rows:
        h.update(repr(tuple(row)).encode("utf-8", "surrogatepass"))
        h.update(b"\n")
        count += 1
    return f"{h.hexdigest()} ({count:,} rows)"


def _chunks(conn: apsw.Connection) -> Iterable[tuple[Any, ...]]:
    for row in conn.execute(
        "SELECT id, file_id, node_id, layer, part, start_line, end_line, title, text,"
        " text_hash FROM chunks ORDER BY id"
    ):
        text = row[8]
        yield (*row[:8], None if text is None else unpack_text(text), row[9])


def _fts(conn: apsw.Connection, positions: bool) -> Iterable[tuple[Any, ...]]:
    for table in FTS_TABLES:
        conn.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{table}_instances"
            f" USING fts5vocab(main, {table}, instance)"
        )
        if positions:
            sql = (
                f"SELECT term, doc, col, offset FROM temp.{table}_instances"
                " ORDER BY term, doc, col, offset"
            )
        else:
            sql = (
                f"SELECT term, doc, col, count(*) FROM temp.{table}_instances"
                " GROUP BY term, doc, col ORDER BY term, doc, col"
            )
        for row in conn.execute(sql):
            yield (table, *row)


def digests(path: Path) -> dict[str, str]:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return {
            "files": _digest(
                conn.execute(
                    "SELECT id, path, size, content_hash, language, line_count, parse_errors,"
                    " invalid_utf8 FROM files ORDER BY id"
                )
            ),
            "nodes": _digest(
                conn.execute(
                    "SELECT id, file_id, parent_id, kind, name, qualified_name, start_line,"
                    " end_line, signature, docstring FROM nodes ORDER BY id"
                )
            ),
            "edges": _digest(
                conn.execute(
                    "SELECT src_id, kind, dst_name, dst_id, dst_hint, line, resolution"
                    " FROM edges ORDER BY src_id, kind, dst_name"
                )
            ),
            "chunks": _digest(_chunks(conn)),
            "fts terms": _digest(_fts(conn, positions=False)),
            "fts positions": _digest(_fts(conn, positions=True)),
        }
    finally:
        conn.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("index", nargs="+", type=Path, help="index files (.codesift/index.db)")
    args = parser.parse_args(argv)
    results = [digests(path) for path in args.index]
    for path, result in zip(args.index, results, strict=True):
        print(path)
        for part, value in result.items():
            print(f"  {part:14s} {value}")
    differing = [part for part in results[0] if len({r[part] for r in results}) > 1]
    if len(results) > 1:
        print("differ: " + (", ".join(differing) if differing else "nothing"))
    return 1 if differing else 0


if __name__ == "__main__":
    raise SystemExit(main())
