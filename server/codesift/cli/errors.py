"""How a command's failure reaches the user: one line and an exit code by the
error's kind (codesift/errors.py); never a traceback.
"""

from __future__ import annotations

import errno
import logging
import sys
from pathlib import Path

import apsw

from codesift.errors import error_kind, error_message
from codesift.store.database import integrity_problem

log = logging.getLogger("codesift")

EXIT_OK = 0
EXIT_INTERNAL = 1  # an unexpected failure (a bug): one line, details with -vv
EXIT_ERROR = 2  # a codesift error: bad input, an unusable index or workspace, a full disk
EXIT_INTERRUPTED = 130


def _sqlite_error_message(exc: apsw.Error, kind: str, db_path: Path | None) -> str:
    """One line a person can act on, for an SQLite error that reached the top
    (by its kind, codesift/errors.py)."""
    where = f"the index {db_path}" if db_path is not None else "the index"
    if kind == "disk_full":
        return (
            f"the disk holding {where} is full; the index keeps every file completed so far:"
            " free some space and run `codesift index` again"
        )
    if kind == "index_read_only":
        return f"{where} cannot be written (read-only for this user or on a read-only disk)"
    if kind == "index_damaged":
        problem = integrity_problem(db_path) if db_path is not None else None
        detail = f" ({problem})" if problem else f" ({exc})"
        return (
            f"{where} is damaged{detail}; run `codesift index --rebuild` to move it aside"
            " and build a new one"
        )
    if kind == "index_busy":
        return (
            f"{where} stayed locked by another process; try again when it has finished"
            " (codesift status shows what is running)"
        )
    if isinstance(exc, apsw.IOError):
        return f"cannot read or write {where}: disk I/O error ({exc})"
    if isinstance(exc, apsw.CantOpenError):
        return f"cannot open {where}: {exc}"
    return f"{where}: {exc}"


def _os_error_message(exc: OSError) -> str:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return (
            "the disk is full; the index keeps every file completed so far: free some space"
            " and run `codesift index` again"
        )
    what = exc.strerror or str(exc)
    name = exc.filename if exc.filename is not None else ""
    return f"{what}: {name}" if name else what


def failure(exc: Exception, db_path: Path | None) -> tuple[str, str, int]:
    """The kind (codesift/errors.py), one-line message and exit code of an error
    that ended a command: the kind decides; `internal` (a bug) is exit 1, every
    other kind exit 2. An OSError that is not an index error (a full disk, a
    missing file) counts as a codesift error, not a bug (kind `os_error`)."""
    if "psycopg" in sys.modules:  # a shared-index command ran: its errors in one line
        from codesift.engine.postgres import database_error

        exc = database_error(exc) or exc
    kind = error_kind(exc)
    if kind == "internal":
        if isinstance(exc, OSError):
            log.debug("OS error", exc_info=True)
            return "os_error", _os_error_message(exc), EXIT_ERROR
        log.debug("unexpected failure", exc_info=True)
        detail = f"{type(exc).__name__}: {exc}"
        return kind, f"unexpected failure: {detail} (run with -vv for the details)", EXIT_INTERNAL
    if isinstance(exc, apsw.Error):
        log.debug("SQLite error", exc_info=True)
        return kind, _sqlite_error_message(exc, kind, db_path), EXIT_ERROR
    return kind, (str(exc) or error_message(exc)), EXIT_ERROR
