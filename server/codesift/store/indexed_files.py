"""What the index holds of the workspace's files, read without the writer: the
files indexed and left out (with the size and modification time they had), the
mark of an unfinished run and the parsing version. The writer
(store/writer.py) answers the same through these; a freshness check of an
unchanged index (engine/freshness.py) reads them without loading the writer.
"""

from __future__ import annotations

import apsw

from codesift.store.database import scalar
from codesift.store.meta import read_meta

__all__ = [
    "EXTRACTION_KEY",
    "extraction_is",
    "indexed_files",
    "run_in_progress",
    "skipped_files",
]

# meta key: the parsing version every indexed file was parsed by.
EXTRACTION_KEY = "extraction_version"


def indexed_files(conn: apsw.Connection) -> dict[str, tuple[int, int]]:
    """Every indexed file's (size, mtime_ns), by path."""
    return {
        str(path): (int(size), int(mtime_ns))
        for path, size, mtime_ns in conn.execute("SELECT path, size, mtime_ns FROM files")
    }


def skipped_files(conn: apsw.Connection) -> dict[str, tuple[int, int, str]]:
    """Every file left out when last read: (size, mtime_ns, reason), by path."""
    return {
        str(path): (int(size), int(mtime_ns), str(reason))
        for path, size, mtime_ns, reason in conn.execute(
            "SELECT path, size, mtime_ns, reason FROM skipped_files"
        )
    }


def extraction_is(conn: apsw.Connection, version: int) -> bool:
    """Whether the indexed files were parsed by parsing version `version`. An
    index with no file is current."""
    if read_meta(conn, EXTRACTION_KEY) == str(version):
        return True
    return int(scalar(conn, "SELECT count(*) FROM files")) == 0


def run_in_progress(conn: apsw.Connection) -> bool:
    """True when an earlier run started writing and never finished."""
    return read_meta(conn, "run_in_progress") is not None
