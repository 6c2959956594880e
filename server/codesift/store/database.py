"""Opening the index database: one apsw connection per thread, WAL, migrations.

The file carries an application id so a foreign SQLite database is recognised
and never overwritten. A damaged or foreign file raises a named error; the
caller decides whether to rebuild (which moves the old file aside, never
deleting it).
"""

from __future__ import annotations

import errno
import logging
import os
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import apsw

from codesift.errors import CorruptIndexError, ForeignIndexError, ReadOnlyIndexError
from codesift.store.migrations import MIGRATIONS

__all__ = [
    "APPLICATION_ID",
    "SCHEMA_VERSION",
    "index_writable",
    "integrity_problem",
    "move_aside",
    "open_database",
    "open_reader",
    "scalar",
]

log = logging.getLogger(__name__)

APPLICATION_ID = 0x43534654  # "CSFT"
SCHEMA_VERSION = MIGRATIONS[-1].version
_SQLITE_MAGIC = b"SQLite format 3\x00"


def scalar(conn: apsw.Connection, sql: str, params: tuple[object, ...] = ()) -> Any:
    """The first column of the first row of a query, or None when there is no row."""
    row = conn.execute(sql, params).fetchone()
    return None if row is None else row[0]


def _check_header(path: Path) -> None:
    try:
        with path.open("rb") as handle:
            head = handle.read(16)
    except OSError as exc:
        raise CorruptIndexError(f"cannot read index {path}: {exc.strerror}") from exc
    if head and head != _SQLITE_MAGIC:
        raise CorruptIndexError(
            f"{path} is not a SQLite database; run `codesift index --rebuild` to move it "
            "aside and build a new index"
        )


def _ensure_folder(path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.parent.name == ".codesift":
            ignore = path.parent / ".gitignore"
            if not ignore.exists():
                ignore.write_text("# created by codesift: the index is a local cache\n*\n")
    except OSError as exc:
        if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise ReadOnlyIndexError(
                f"cannot create the index in {path.parent}: {exc.strerror}; choose a writable"
                " place with the index.db_path setting"
            ) from exc
        raise


def index_writable(path: Path) -> bool:
    """Whether this process may write the index at `path` (the file, and the folder
    that holds its WAL and lock files); for a missing index, whether it can be
    created."""
    if path.exists():
        return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)
    for folder in path.parents:
        if folder.exists():
            return os.access(folder, os.W_OK)
    return False


def integrity_problem(path: Path) -> str | None:
    """The first problem `PRAGMA quick_check` finds in the index at `path`, or None
    when it finds none (reads every page: seconds on a large index)."""
    try:
        # As a search opens it: an index this user cannot write (a WAL file in a
        # folder it cannot write) is read-only, not damaged.
        conn = _readonly_connection(path)
    except (apsw.CantOpenError, apsw.ReadOnlyError, apsw.PermissionsError):
        return None  # cannot be read at all: opening it for the status says why
    except apsw.Error as exc:
        return str(exc)
    try:
        rows = [str(r[0]) for r in conn.execute("PRAGMA quick_check(3)")]
    except apsw.Error as exc:
        return str(exc)
    finally:
        conn.close()
    return None if rows == ["ok"] else "; ".join(rows)


def _load_vector_extension(conn: apsw.Connection) -> None:
    """sqlite-vec provides the vec0 table; apsw can load it where the stdlib
    sqlite3 module often cannot."""
    conn.enable_load_extension(True)
    try:
        conn.load_extension(vector_extension_path())
    finally:
        conn.enable_load_extension(False)


def vector_extension_path() -> str:
    """The sqlite-vec extension's path (`sqlite_vec.loadable_path()`), found
    without importing the package: its `__init__` imports numpy, which a reading
    command that never touches a vector (callers, symbols) or a process that only
    prepares files (an index worker) does not need."""
    import importlib.util

    spec = importlib.util.find_spec("sqlite_vec")
    folders = list(spec.submodule_search_locations or []) if spec is not None else []
    if not folders:
        import sqlite_vec  # an unusual install: let the package say where it is

        return str(sqlite_vec.loadable_path())
    return os.path.normpath(os.path.join(folders[0], "vec0"))


def _configure(conn: apsw.Connection) -> None:
    conn.set_busy_timeout(10_000)
    # 8 KiB pages store FTS segments with less overflow (about 3% smaller); this only
    # takes effect before the first table is created.
    conn.execute("PRAGMA page_size=8192")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA cache_size=-32000")
    # No mmap: mapped pages count against the process's resident size, and the
    # page cache serves reads as fast on these index sizes.
    conn.execute("PRAGMA mmap_size=0")


def _migrate(conn: apsw.Connection, path: Path) -> None:
    app_id = scalar(conn, "PRAGMA application_id")
    tables = {
        row[0]
        for row in conn.execute("SELECT name FROM sqlite_schema WHERE type IN ('table','view')")
    }
    if app_id != APPLICATION_ID:
        if tables:
            raise ForeignIndexError(
                f"{path} is a SQLite database that codesift did not create; choose another "
                "index path (index.db_path) or run `codesift index --rebuild` to move it aside"
            )
        with conn:
            conn.execute(f"PRAGMA application_id={APPLICATION_ID}")
            conn.execute(
                "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
                " applied_at REAL NOT NULL)"
            )
    applied = {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}
    newest = max(applied, default=0)
    if newest > SCHEMA_VERSION:
        raise ForeignIndexError(
            f"{path} was written by a newer codesift (schema {newest} > {SCHEMA_VERSION}); "
            "upgrade codesift or rebuild the index"
        )
    for step in MIGRATIONS:
        if step.version in applied:
            continue
        with conn:
            conn.execute(step.sql)
            conn.execute(
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                (step.version, step.name, time.time()),
            )
            conn.execute(f"PRAGMA user_version={step.version}")
        log.info("applied migration %d (%s) to %s", step.version, step.name, path)


def open_database(path: Path, *, create: bool = True, readonly: bool = False) -> apsw.Connection:
    """Open (creating and migrating if needed) the index at `path`.

    Raises CorruptIndexError for a damaged or non-SQLite file and
    ForeignIndexError for a database that is not a codesift index. `readonly`
    opens an existing index without writing anything (nor its WAL files), for a
    user who may read the index but not write it.
    """
    if readonly:
        return _open_readonly(path)
    if path.exists():
        _check_header(path)
    elif not create:
        raise CorruptIndexError(f"no index at {path}; run `codesift index` first")
    else:
        _ensure_folder(path)
    conn = apsw.Connection(str(path))
    try:
        conn.set_busy_timeout(10_000)
        # Recognise a foreign database before changing anything in it (even its journal mode).
        _refuse_foreign(conn, path)
        _load_vector_extension(conn)
        _configure(conn)
        _migrate(conn, path)
        # Touch every schema object so damage shows up now rather than mid-search.
        conn.execute("SELECT count(*) FROM files").fetchone()
    except (apsw.NotADBError, apsw.CorruptError) as exc:
        conn.close()
        raise _damaged(path, exc) from exc
    except BaseException:
        conn.close()
        raise
    return conn


def _damaged(path: Path, exc: apsw.Error) -> CorruptIndexError:
    return CorruptIndexError(
        f"{path} is damaged ({exc}); run `codesift index --rebuild` to move it aside and "
        "build a new index"
    )


def _readonly_connection(path: Path) -> apsw.Connection:
    """A read-only connection. A WAL database whose folder this user cannot write
    (and whose -shm file is gone) cannot be opened the usual way: it is then opened
    as immutable, i.e. as the main file holds it (a cleanly closed index holds
    everything there)."""
    try:
        conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
        conn.execute("SELECT count(*) FROM sqlite_schema").fetchone()
        return conn
    except (apsw.CantOpenError, apsw.ReadOnlyError):
        pass
    uri = "file:" + quote(str(path.absolute())) + "?immutable=1"
    return apsw.Connection(uri, flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)


def _open_readonly(path: Path) -> apsw.Connection:
    if not path.exists():
        raise CorruptIndexError(f"no index at {path}; run `codesift index` first")
    _check_header(path)
    try:
        conn = _readonly_connection(path)
    except apsw.Error as exc:
        raise ReadOnlyIndexError(f"cannot open the index {path} for reading: {exc}") from exc
    try:
        conn.set_busy_timeout(10_000)
        _refuse_foreign(conn, path)
        _load_vector_extension(conn)
        conn.execute("PRAGMA cache_size=-32000")
        conn.execute("PRAGMA mmap_size=0")
        applied = {row[0] for row in conn.execute("SELECT version FROM schema_migrations")}
        missing = [step.version for step in MIGRATIONS if step.version not in applied]
        if missing:
            raise ReadOnlyIndexError(
                f"{path} was written by an older codesift and needs an upgrade, but this user"
                " cannot write it; run `codesift index` as its owner"
            )
        conn.execute("SELECT count(*) FROM files").fetchone()
    except (apsw.NotADBError, apsw.CorruptError) as exc:
        conn.close()
        raise _damaged(path, exc) from exc
    except BaseException:
        conn.close()
        raise
    return conn


def open_reader(path: str | Path) -> apsw.Connection:
    """Another connection to an existing, migrated index, for reading only.

    Searches open one per worker thread so streams run side by side (WAL lets
    readers proceed while the writer commits). `query_only` makes any write an error.
    An index this user cannot write is opened read-only.
    """
    path = Path(path)
    if index_writable(path):
        conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READWRITE)
    else:
        conn = _readonly_connection(path)
    try:
        conn.set_busy_timeout(10_000)
        _load_vector_extension(conn)
        conn.execute("PRAGMA cache_size=-32000")
        conn.execute("PRAGMA mmap_size=0")
        conn.execute("PRAGMA query_only=1")
    except BaseException:
        conn.close()
        raise
    return conn


def _refuse_foreign(conn: apsw.Connection, path: Path) -> None:
    app_id = scalar(conn, "PRAGMA application_id")
    if app_id == APPLICATION_ID:
        return
    has_tables = conn.execute(
        "SELECT 1 FROM sqlite_schema WHERE type IN ('table', 'view') LIMIT 1"
    ).fetchone()
    if has_tables:
        raise ForeignIndexError(
            f"{path} is a SQLite database that codesift did not create; choose another "
            "index path (index.db_path) or run `codesift index --rebuild` to move it aside"
        )


def move_aside(path: Path) -> Path | None:
    """Rename a bad index (and its WAL files) to `<name>.bad-<timestamp>`; return the new path."""
    if not path.exists():
        return None
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.bad-{stamp}")
    path.rename(target)
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        if side.exists():
            side.rename(target.with_name(target.name + suffix))
    return target
