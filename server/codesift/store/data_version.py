"""Whether an index changed since a moment: `IndexVersion` reads SQLite's
`PRAGMA data_version` on a read-only connection of its own, which every commit
by any other connection (this process's writer, a `codesift index` elsewhere)
changes, with the file's identity (a rebuilt index is another file).

    version = IndexVersion(db_path)
    before = version.current()        # (device, inode, data_version) or None
    ...
    version.current() == before       # nothing was committed in between
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import apsw

__all__ = ["IndexVersion"]

Version = tuple[int, int, int]


class IndexVersion:
    """See the module docstring. Thread-safe; a few microseconds a call."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._conn: apsw.Connection | None = None
        self._file: tuple[int, int] | None = None

    def current(self) -> Version | None:
        """(device, inode, data_version) of the index now; None when it cannot be
        read (missing, being replaced)."""
        try:
            stat = os.stat(self.path)
        except OSError:
            return None
        file = (stat.st_dev, stat.st_ino)
        with self._lock:
            try:
                if self._conn is None or self._file != file:
                    self._close()
                    self._conn = apsw.Connection(str(self.path), flags=apsw.SQLITE_OPEN_READONLY)
                    self._file = file
                row = self._conn.execute("PRAGMA data_version").fetchone()
            except apsw.Error:
                self._close()
                return None
        return (file[0], file[1], int(row[0])) if row is not None else None

    def _close(self) -> None:
        if self._conn is not None:
            self._conn.close()
        self._conn, self._file = None, None

    def close(self) -> None:
        with self._lock:
            self._close()
