"""The shared team index on PostgreSQL, as engine calls (store/postgres).

    from codesift.engine.postgres import index_into, open_shared_search

    report = index_into("postgresql://...", Path("~/src/web"))  # local index, then mirror
    with open_shared_search("postgresql://...", principal="ana") as shared:
        page = shared.search(SearchRequest("where are retries scheduled"))
        found = shared.symbols("RetryPolicy")
        walk = shared.graph("retry_failed_charge", GraphQuery("callers", depth=2))
        repos = shared.status()

`index_into` runs codesift's own indexer for the folder (its local SQLite index,
updated incrementally as `codesift index` does), then mirrors that index into
the database under the repository's key (`repo_key`: remote slug and branch, or
a name given): only files whose rows changed are written. `open_shared_search`
answers searches with the same streams, fusion, priors and snippets as a local
search, reading through the PostgreSQL store as one principal, whose grants are
part of every statement (no principal: the database role's own view); symbols,
the graph walk (engine/graph.walk_graph over store/postgres/nodes.py) and the
status of each readable repository read the same way.

Needs the `postgres` extra (`pip install 'codesift[postgres]'`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar, cast

from codesift.config import SearchSettings
from codesift.embedding.model import Embedder
from codesift.engine.access import IndexReport
from codesift.engine.graph import check_graph_query, start_nodes, walk_graph
from codesift.engine.listener import EngineListener
from codesift.engine.results import (
    EmbedReport,
    GraphQuery,
    GraphResult,
    SymbolMatches,
)
from codesift.engine.session import reindex
from codesift.engine.shared_connect import (
    SharedIndexUnavailable,
    check_repo_key,
    connect,
    database_error,
    dsn_has_password,
    one_line,
)
from codesift.engine.symbols import MAX_SYMBOLS, find_symbols
from codesift.engine.workspace import Workspace
from codesift.errors import ConfigError, QueryError
from codesift.retrieval.request import SearchRequest, SearchResponse
from codesift.retrieval.search import Searcher
from codesift.store.database import open_reader
from codesift.store.reader import NodeRow
from codesift.store.search_store import SearchStore
from codesift.timespec import TimeFilter, TimeValue, time_filter

if TYPE_CHECKING:
    import psycopg

    from codesift.store.postgres import MirrorSummary, PostgresSearchStore
    from codesift.store.postgres.status import RepoStatus

# How many definitions of similar names `SharedSearch.symbols` scores at most.
_SIMILAR_CANDIDATES = 400

__all__ = [
    "SharedIndexReport",
    "SharedIndexUnavailable",
    "SharedSearch",
    "check_repo_key",
    "connect",
    "database_error",
    "dsn_has_password",
    "index_into",
    "mirror_local",
    "one_line",
    "open_shared_search",
    "repo_key",
    "write_shared",
]


def _slug(url: str) -> str:
    """`git@github.com:acme/web.git`, `https://user@github.com/acme/web` ->
    `github.com/acme/web`."""
    url = url.strip()
    m = re.match(r"^[\w.+-]+://(?:[^@/]*@)?([^/:]+)(?::\d+)?/(.*)$", url)
    if m is None:
        m = re.match(r"^(?:[^@/]*@)?([^/:]+):(.*)$", url)  # scp-like
    host, path = (m.group(1), m.group(2)) if m else ("", url)
    path = path.strip("/")
    if path.endswith(".git"):
        path = path[:-4]
    return f"{host}/{path}" if host else path


def repo_key(root: Path, name: str | None = None) -> str:
    """The repository key of the folder `root`: `<remote slug>@<branch>` (origin,
    else the first remote; the checked-out branch, else the commit), the folder's
    name instead of the slug without a remote, or `name` when given."""
    if name:
        return name
    import pygit2

    try:
        repo = pygit2.Repository(str(root))
    except (pygit2.GitError, KeyError):
        return root.resolve().name
    remotes = list(repo.remotes)
    remote = next((r for r in remotes if r.name == "origin"), remotes[0] if remotes else None)
    slug = _slug(remote.url) if remote is not None and remote.url else root.resolve().name
    if repo.head_is_unborn:
        return slug
    branch = repo.head.shorthand if not repo.head_is_detached else str(repo.head.target)[:12]
    return f"{slug}@{branch}"


@dataclass(frozen=True, slots=True)
class SharedIndexReport:
    """The local index run, its vectors (None when not computed), and what was
    written to the shared index."""

    local: IndexReport
    vectors: EmbedReport | None
    shared: MirrorSummary


def index_into(
    dsn: str,
    root: str | Path | None = None,
    *,
    repo: str | None = None,
    vectors: bool = False,
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
    listener: EngineListener | None = None,
) -> SharedIndexReport:
    """Index the folder `root` (default: the workspace of the current folder) with
    codesift's own indexer, computing its vectors when `vectors`, then write it
    into the shared index at `dsn` under `repo` (default: `repo_key`)."""
    ws = Workspace.resolve(root, overrides=overrides)
    key = check_repo_key(repo_key(ws.root, repo))  # before anything is indexed
    report, embedded, conn = reindex(ws, listener, vectors=vectors, quiet=True)
    try:
        summary = _mirror(conn, dsn, key, str(ws.root), listener.note if listener else None)
    finally:
        conn.close()
    return SharedIndexReport(report, embedded, summary)


def write_shared(
    local: Any,
    dsn: str,
    repo: str,
    root: str = "",
    on_wait: Callable[[str], None] | None = None,
) -> MirrorSummary:
    """Write the local index open on `local` (an apsw connection, e.g. the one
    `reindex` returns) into the shared index at `dsn` as `repo`; `on_wait` hears
    (one line) that another job of `repo` runs, which this one waits for."""
    return _mirror(local, dsn, repo, root, on_wait)


def mirror_local(dsn: str, db_path: Path, repo: str, root: str = "") -> MirrorSummary:
    """Write an existing local index (at `db_path`) into the shared index as `repo`."""
    conn = open_reader(db_path)
    try:
        return _mirror(conn, dsn, repo, root)
    finally:
        conn.close()


def _mirror(
    local: Any, dsn: str, repo: str, root: str, on_wait: Callable[[str], None] | None = None
) -> MirrorSummary:
    from codesift.store.postgres import mirror_index
    from codesift.store.postgres.schema import IdRangeError

    check_repo_key(repo)
    with connect(dsn, autocommit=True) as pg:
        try:
            return mirror_index(local, pg, repo, root, on_wait=on_wait)
        except IdRangeError as exc:
            raise ConfigError(f"cannot write {repo} into the shared index: {exc}") from None


@dataclass(slots=True)
class _Opened:
    """One set of connections a SharedSearch reads on: the caller's or its own
    connection, its store, and the stream workers' connections."""

    conn: psycopg.Connection[Any]
    store: PostgresSearchStore
    worker_stores: Callable[[], tuple[SearchStore, Callable[[], None]]] | None
    workers: list[psycopg.Connection[Any]]

    def lost(self) -> bool:
        """Whether a connection of the set was lost (the server went away)."""
        return any(c.closed or c.broken for c in (self.conn, *self.workers))


T = TypeVar("T")


class SharedSearch:
    """Searches over the shared index as one principal; see the module docstring.
    Not shared between threads (one connection); close it when done.

    A connection lost (a restarted or unreachable server) is opened again on the
    next read, and a read that failed because it was lost is asked once more on
    the new one; when the server cannot be reached, the read raises
    SharedIndexUnavailable: never an empty page. A connection the caller gave
    (`open_shared_search(conn=...)`) is the caller's to reopen."""

    def __init__(
        self,
        opened: _Opened,
        settings: SearchSettings | None,
        embedder: Embedder | None,
        reopen: Callable[[], _Opened] | None,
    ) -> None:
        self._settings = settings
        self._embedder = embedder
        self._reopen = reopen
        self._use(opened)

    def _use(self, opened: _Opened) -> None:
        from codesift.store.postgres.nodes import PostgresNodeStore

        self._opened = opened
        self.store = opened.store
        self.node_store = PostgresNodeStore(opened.store)
        # The Searcher reads only through the stores; its connection argument is unused.
        self.searcher = Searcher(
            cast(Any, opened.conn),
            self._settings,
            self._embedder,
            store=opened.store,
            worker_stores=opened.worker_stores,
        )

    def _close_opened(self) -> None:
        self.searcher.close()
        for conn in self._opened.workers:
            conn.close()
        if self._reopen is not None:
            self._opened.conn.close()

    def _reconnect(self, cause: BaseException | None) -> None:
        """Open the connections again; SharedIndexUnavailable when the server
        cannot be reached (or the connection was the caller's)."""
        if self._reopen is None:
            if isinstance(cause, SharedIndexUnavailable):
                raise cause
            said = one_line(cause) if cause else "connection lost"
            raise SharedIndexUnavailable(f"the shared index is unavailable: {said}")
        with suppress(Exception):  # closing what is already broken
            self._close_opened()
        try:
            opened = self._reopen()
        except ConfigError as exc:
            raise SharedIndexUnavailable(f"the shared index is unavailable: {exc}") from None
        self._use(opened)

    def _read(self, read: Callable[[], T]) -> T:
        """`read()` on live connections: reconnected first when one was lost,
        asked again once when it fails (or its streams fail) because one was."""
        import psycopg

        if self._opened.lost():
            self._reconnect(None)
        try:
            result = read()
        except (psycopg.OperationalError, SharedIndexUnavailable) as exc:
            # A statement on a lost connection, or a stream worker that could
            # not open its own (the server went away between two reads).
            if isinstance(exc, psycopg.OperationalError) and not self._opened.lost():
                raise
            self._reconnect(exc)
            result = read()
        else:
            if not self._opened.lost():
                return result
            # A stream that failed on a lost connection answered nothing: ask again.
            self._reconnect(None)
            result = read()
        if self._opened.lost():
            raise SharedIndexUnavailable("the shared index is unavailable: connection lost")
        return result

    def search(self, request: SearchRequest) -> SearchResponse:
        _no_nul(request.query, "query")
        return self._read(lambda: self.searcher.search(request))

    def times(
        self,
        as_of: TimeValue | None = None,
        since: TimeValue | None = None,
        until: TimeValue | None = None,
        *,
        now: float | None = None,
    ) -> TimeFilter:
        """A git-time window in Unix seconds (durations back from `now`, default
        the clock); revisions are resolved in the folder the one repository in
        view was indexed from, when it is on this machine. QueryError for a
        malformed one."""
        root = self._read(lambda: self.store.meta("root"))
        folder = Path(root) if root and Path(root).is_dir() else None
        return time_filter(as_of, since, until, root=folder, now=now)

    def start_nodes(
        self, target: str | int, times: TimeFilter | None = None, limit: int = 20
    ) -> list[NodeRow]:
        """The definitions named `target` (at most `limit`), or the node with id
        `target`, among the repositories this principal may read."""
        if isinstance(target, str):
            _no_nul(target, "name")
        return self._read(lambda: start_nodes(self.node_store, target, times, limit))

    def symbols(self, name: str, limit: int = 20, times: TimeFilter | None = None) -> SymbolMatches:
        """Definitions named `name` (a qualified name matches its ending after a
        separator; exact case first), then similar names scored as locally
        (engine/symbols.score_name), at most `limit` in all, among the
        repositories this principal may read."""
        if not name.strip():
            raise QueryError("the name is empty")
        if not 1 <= limit <= MAX_SYMBOLS:
            raise QueryError(f"limit must be between 1 and {MAX_SYMBOLS}, got {limit}")
        _no_nul(name, "name")
        return self._read(lambda: find_symbols(self.node_store, name, limit, times))

    def graph(self, target: str | int, query: GraphQuery) -> GraphResult:
        """The local `Engine.graph` over the shared index: the walk from the
        definitions named `target` (or the node with id `target`), which shows
        no node of a repository this principal may not read."""
        check_graph_query(query)
        if isinstance(target, str) and not target.strip():
            raise QueryError("the name is empty")
        # One more than the walk may show: it then says it stopped (truncated).
        starts = self.start_nodes(target, query.times, query.max_nodes + 1)
        return self._read(lambda: walk_graph(self.node_store, starts, query))

    def callers(self, name: str) -> list[tuple[NodeRow, NodeRow, int]]:
        """(callee, caller, line of the call) for each call resolved to a
        definition named `name`, among the repositories this principal may read."""
        walk = self.graph(name, GraphQuery("callers", 1, ("calls",), 2000))
        out: list[tuple[NodeRow, NodeRow, int]] = []
        for link in walk.edges:
            callee = walk.node(link.target) if link.target is not None else None
            caller = walk.node(link.source)
            if callee is not None and caller is not None and callee.node.id in walk.roots:
                out.append((callee.node, caller.node, link.line))
        return out

    def file_chunks(
        self, key: str, path: str, first: int, last: int
    ) -> tuple[int, list[tuple[int, int, int, str]]] | None:
        """A file of the repository `key` as the index keeps it (its line count and
        the code and doc chunks over lines `first`..`last`); None when this
        principal reads no such file."""
        _no_nul(path, "path")
        return self._read(lambda: self.store.file_chunks(key, path, first, last))

    def status(self) -> list[RepoStatus]:
        """Each repository this principal may read: counts, languages, vectors,
        when it was last written and its newest commit."""
        from codesift.store.postgres.status import repo_status

        return self._read(lambda: repo_status(self.store))

    def repos(self) -> list[str]:
        """The repositories this principal may read."""
        return self._read(self.store.readable_repos)

    def counts(self) -> dict[str, dict[str, int]]:
        """Files, nodes, chunks and vectors of each repository it may read."""
        return self._read(self.store.repo_counts)

    def close(self) -> None:
        self._close_opened()

    def __enter__(self) -> SharedSearch:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def open_shared_search(
    dsn: str,
    *,
    principal: str | None = None,
    repos: Sequence[str] = (),
    settings: SearchSettings | None = None,
    embedder: Embedder | None = None,
    model: str | Sequence[str] | None = None,
    parallel: bool = True,
    conn: psycopg.Connection[Any] | None = None,
) -> SharedSearch:
    """Searches of the shared index at `dsn` as `principal` (None: every repository
    the database role may read), over `repos` only when given. With an `embedder`,
    the vector streams compare its query vectors with the repositories' vectors
    of the models in its model's vector space only (`Embedder.query_models`: the
    static model's and MiniLM's; `model` names others): a repository whose
    vectors another model made contributes no vector hits. The
    streams of a search run side by side, each worker thread on a connection of
    its own (`parallel=False`: one after the other on one connection). `conn`: an
    open connection (autocommit) to search on, which the caller keeps and closes;
    by default the search opens its own and closes it with itself."""
    from codesift.store.postgres import PostgresSearchStore, Reader

    if model is None and embedder is not None:
        model = embedder.query_models
    if principal is not None:
        _check_text(principal, "principal")
    for key in repos:
        check_repo_key(key)
    reader = Reader(principal, tuple(repos))
    given = conn

    def open_all() -> _Opened:
        own = given if given is not None else connect(dsn, autocommit=True, upgrade=False)
        try:
            if principal is not None:
                check_principal(own, principal)
        except BaseException:
            if given is None:
                own.close()
            raise
        workers: list[psycopg.Connection[Any]] = []

        def worker_store() -> tuple[SearchStore, Callable[[], None]]:
            # Each stream worker thread reads on a connection of its own.
            try:
                worker = connect(dsn, autocommit=True, upgrade=False)
            except ConfigError as exc:
                raise SharedIndexUnavailable(f"the shared index is unavailable: {exc}") from None
            workers.append(worker)
            return PostgresSearchStore(worker, reader, model), worker.close

        store = PostgresSearchStore(own, reader, model)
        return _Opened(own, store, worker_store if parallel else None, workers)

    return SharedSearch(open_all(), settings, embedder, reopen=open_all if given is None else None)


def check_principal(conn: psycopg.Connection[Any], principal: str) -> None:
    """ConfigError (one line) unless the role that logged in on `conn` may read
    as `principal`: itself, or any principal for a role that reads for others
    (a superuser, BYPASSRLS, the tables' owner, a delegate: store/postgres/access.py)."""
    from codesift.store.postgres.access import (
        reads_for_others,
        row_security_enabled,
        session_role,
    )

    role = session_role(conn)
    if principal == role or reads_for_others(conn):
        return
    guarded = " (row security is on)" if row_security_enabled(conn) else ""
    raise ConfigError(
        f"the database role {role} may not read as another principal ({principal}){guarded}:"
        f" the indexing role can let it (codesift team delegate {role}), or log in as"
        f" {principal} and leave out --principal"
    )


def _check_text(value: str, what: str) -> None:
    from codesift.store.postgres.keys import check_name

    check_name(value, what)


def _no_nul(value: str, what: str) -> None:
    if "\x00" in value:
        raise QueryError(f"the {what} holds a NUL character")
