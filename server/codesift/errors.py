"""The exceptions codesift raises.

CodesiftError
├── ConfigError          a setting has an invalid value or the config file is malformed
├── IndexError_          the index database cannot be used
│   ├── CorruptIndexError   the file is not a SQLite database, or is damaged
│   ├── ForeignIndexError   a SQLite database that codesift did not create
│   ├── ReadOnlyIndexError  the index (or its folder) cannot be written by this user
│   ├── IndexBusyError      another process writes the index and this one cannot wait
│   └── DiskFullError       the disk (or quota) is full: nothing was lost, nothing written
├── NotIndexedError      there is no index yet where one was asked for (run `codesift index`)
├── WorkspaceError       the workspace root is missing or not a folder
├── QueryError           a search request is invalid (empty query, bad option)
├── SearchCancelled      a search was cancelled through its cancel event
└── EmbeddingError       the embedding model cannot be loaded or run

The engine (codesift.engine) and the layers under it raise these. `error_kind`
names each (and the SQLite errors that reach a front end) with one word of the
table below, and `error_message` says it in one line; each front end maps the
kinds once to its own convention: the CLI to exit code 2 and one `error:` line,
the language server to InvalidParams (-32602) for `bad_request`,
RequestCancelled for `cancelled` and codesift's own server error code (-33000,
`data.kind`) for the rest, the MCP server to tool errors carrying the kind.

kind               raised as
bad_request        QueryError: the request itself is wrong
cancelled          SearchCancelled
index_damaged      CorruptIndexError, apsw.CorruptError, apsw.NotADBError
index_foreign      ForeignIndexError
index_read_only    ReadOnlyIndexError, apsw.ReadOnlyError
index_busy         IndexBusyError, apsw.BusyError
disk_full          DiskFullError, apsw.FullError
not_indexed        NotIndexedError
embedding_failed   EmbeddingError
config             ConfigError
workspace          WorkspaceError
index_error        any other SQLite error (apsw.Error)
codesift           any other CodesiftError
internal           anything else (a bug)
"""

from __future__ import annotations

import apsw

__all__ = [
    "ERROR_KINDS",
    "CodesiftError",
    "ConfigError",
    "CorruptIndexError",
    "DiskFullError",
    "EmbeddingError",
    "ForeignIndexError",
    "IndexBusyError",
    "IndexError_",
    "NotIndexedError",
    "QueryError",
    "ReadOnlyIndexError",
    "SearchCancelled",
    "WorkspaceError",
    "error_kind",
    "error_message",
]


class CodesiftError(Exception):
    """Base class of every error codesift raises on purpose."""


class ConfigError(CodesiftError):
    pass


class IndexError_(CodesiftError):
    pass


class CorruptIndexError(IndexError_):
    pass


class ForeignIndexError(IndexError_):
    pass


class ReadOnlyIndexError(IndexError_):
    pass


class IndexBusyError(IndexError_):
    pass


class DiskFullError(IndexError_):
    pass


class NotIndexedError(CodesiftError):
    """The workspace has no index yet (and the caller asked not to build one)."""


class WorkspaceError(CodesiftError):
    pass


class QueryError(CodesiftError):
    pass


class SearchCancelled(CodesiftError):
    """Raised by `Searcher.search` when its cancel event was set before it finished."""


class EmbeddingError(CodesiftError):
    pass


# The first class an error is an instance of names its kind (order matters:
# subclasses before the classes they derive from).
ERROR_KINDS: tuple[tuple[type[BaseException], str], ...] = (
    (QueryError, "bad_request"),
    (SearchCancelled, "cancelled"),
    (CorruptIndexError, "index_damaged"),
    (ForeignIndexError, "index_foreign"),
    (ReadOnlyIndexError, "index_read_only"),
    (IndexBusyError, "index_busy"),
    (DiskFullError, "disk_full"),
    (NotIndexedError, "not_indexed"),
    (EmbeddingError, "embedding_failed"),
    (ConfigError, "config"),
    (WorkspaceError, "workspace"),
    (apsw.CorruptError, "index_damaged"),
    (apsw.NotADBError, "index_damaged"),
    (apsw.BusyError, "index_busy"),
    (apsw.FullError, "disk_full"),
    (apsw.ReadOnlyError, "index_read_only"),
    (apsw.Error, "index_error"),
    (CodesiftError, "codesift"),
)


def error_kind(exc: BaseException) -> str:
    """The kind of an error (the table in this module's docstring); `internal`
    for an exception that is neither a codesift nor an SQLite error."""
    for cls, kind in ERROR_KINDS:
        if isinstance(exc, cls):
            return kind
    return "internal"


def error_message(exc: BaseException) -> str:
    """What went wrong, in one line: the error's text (its class name when it has
    none); a damaged index found by SQLite also says how to rebuild it."""
    detail = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, apsw.Error) and error_kind(exc) == "index_damaged":
        return f"the index is damaged ({detail}); run `codesift index --rebuild`"
    return detail
