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

The engine (codesift.engine) and the layers under it raise these; each front end
maps them once: the CLI to exit code 2 and one `error:` line, the language server
to InvalidParams (-32602) for QueryError (a bad request) and to codesift's own
server error code (-33000, `data.kind` naming the class) for the rest.
"""

from __future__ import annotations

__all__ = [
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
