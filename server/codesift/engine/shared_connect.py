"""Connections to the shared index on PostgreSQL, and the errors of using one.

`connect` opens one (migrating the schema for a writer, checking its version
for a reader), with every failure as a one-line ConfigError; `database_error`
turns a psycopg error that reached a front end into one; `SharedIndexUnavailable`
is what a search raises while the server cannot be reached. Re-exported by
engine/postgres.py. Never imports psycopg before it is needed.
"""

from __future__ import annotations

import os
import re
import sys
from typing import TYPE_CHECKING, Any

from codesift.errors import ConfigError

if TYPE_CHECKING:
    import psycopg

__all__ = [
    "CONNECT_TIMEOUT_SECONDS",
    "SharedIndexUnavailable",
    "check_repo_key",
    "connect",
    "database_error",
    "dsn_has_password",
    "one_line",
]

# Seconds to wait for the server when the DSN does not say (connect_timeout).
CONNECT_TIMEOUT_SECONDS = 10


class SharedIndexUnavailable(ConfigError):
    """The shared index cannot be reached (down, restarting, the network): a
    search says so instead of answering an empty page."""


def one_line(exc: BaseException) -> str:
    """A database error's message on one line (libpq's span several: the error,
    then DETAIL, HINT or a tab-indented question)."""
    parts = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return "; ".join(parts) or type(exc).__name__


def database_error(exc: BaseException) -> ConfigError | None:
    """The ConfigError to report for a psycopg error that reached a front end
    (a lost connection, a role without the privilege to read); None for any other
    exception. Never imports psycopg: no psycopg error exists before it is loaded."""
    psycopg = sys.modules.get("psycopg")
    if psycopg is None or not isinstance(exc, psycopg.Error):
        return None
    return ConfigError(f"the shared index: {one_line(exc)}")


_URI_PASSWORD = re.compile(r"^[a-z][a-z0-9+.-]*://[^/@?#]*:[^/@?#]*@", re.I)
_KEYWORD_PASSWORD = re.compile(r"(?:^|\s)password\s*=", re.I)


def dsn_has_password(dsn: str) -> bool:
    """Whether the libpq connection string or URI `dsn` holds a password
    (`postgresql://user:secret@host`, `password=...`, `?password=`)."""
    dsn = dsn.strip()
    if _URI_PASSWORD.match(dsn) and not re.match(r"^[^:]+://[^/@?#]*:@", dsn):
        return True
    if "://" in dsn:
        query = dsn.partition("?")[2]
        return any(p.lower().startswith("password=") for p in query.split("&"))
    return bool(_KEYWORD_PASSWORD.search(dsn))


def _names_connect_timeout(dsn: str) -> bool:
    return "connect_timeout" in dsn or bool(os.environ.get("PGCONNECT_TIMEOUT", "").strip())


def connect(dsn: str, *, autocommit: bool = False, upgrade: bool = True) -> psycopg.Connection[Any]:
    """A connection to the shared index at `dsn`, its schema migrated (`upgrade`,
    for writers) or checked to be current (readers, whose role may not create
    tables); ConfigError, in one line, when psycopg is not installed, `dsn` is not
    a PostgreSQL connection string or URI, the server cannot be reached or refuses
    the login, a writer cannot create the extensions, or a reader finds an older
    schema."""
    try:
        import psycopg
    except ImportError as exc:
        raise ConfigError(
            "the shared index needs the postgres extra: pip install 'codesift[postgres]'"
        ) from exc
    from codesift.store.postgres import migrate, schema_version
    from codesift.store.postgres.schema import MIGRATIONS

    if not dsn.strip():
        raise ConfigError("the shared index's DSN is empty: give a PostgreSQL URI or DSN")
    # A host that drops packets would hold a command for minutes (psycopg's own
    # limit is 130 s): give up sooner unless the DSN or PGCONNECT_TIMEOUT says.
    limit: dict[str, Any] = (
        {} if _names_connect_timeout(dsn) else {"connect_timeout": CONNECT_TIMEOUT_SECONDS}
    )
    try:
        conn = psycopg.connect(dsn, **limit)
    except psycopg.ProgrammingError as exc:  # libpq could not parse it
        # libpq quotes the string it could not parse: it may hold a password.
        said = one_line(exc).replace(dsn.strip(), "…")
        raise ConfigError(
            f"not a PostgreSQL connection string or URI (postgresql://user@host/db): {said}"
        ) from None
    except psycopg.Error as exc:
        raise ConfigError(f"cannot connect to the shared index: {one_line(exc)}") from None
    try:
        if upgrade:
            try:
                migrate(conn)
            except (psycopg.errors.FeatureNotSupported, psycopg.errors.UndefinedFile) as exc:
                raise ConfigError(
                    "the shared index needs the PostgreSQL extensions vector (pgvector),"
                    " pg_trgm and btree_gin (an administrator creates them: codesift team"
                    f" sql prints the SQL): {one_line(exc)}"
                ) from None
            except psycopg.errors.InsufficientPrivilege as exc:
                raise ConfigError(
                    "this role cannot create the shared index's schema or extensions"
                    " (an indexing role must own them; codesift team sql prints what an"
                    f" administrator runs first): {one_line(exc)}"
                ) from None
        else:
            version = schema_version(conn)
            conn.rollback()
            if version < MIGRATIONS[-1].version:
                raise ConfigError(
                    f"the shared index has schema version {version}, this codesift reads"
                    f" {MIGRATIONS[-1].version}: run an indexing job (index_into) to upgrade it"
                )
    except BaseException as exc:
        conn.close()
        if isinstance(exc, psycopg.Error):
            raise ConfigError(f"the shared index: {one_line(exc)}") from None
        raise
    conn.autocommit = autocommit
    return conn


def check_repo_key(key: str) -> str:
    """`key`, or QueryError in one line (store/postgres/keys.py)."""
    from codesift.store.postgres.keys import check_repo_key as check

    return check(key)
