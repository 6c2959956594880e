"""The shared team index on PostgreSQL, as engine calls (store/postgres).

    from codesift.engine.postgres import index_into, open_shared_search

    report = index_into("postgresql://...", Path("~/src/web"))  # local index, then mirror
    with open_shared_search("postgresql://...", principal="ana") as shared:
        page = shared.search(SearchRequest("where are retries scheduled"))

`index_into` runs codesift's own indexer for the folder (its local SQLite index,
updated incrementally as `codesift index` does), then mirrors that index into
the database under the repository's key (`repo_key`: remote slug and branch, or
a name given): only files whose rows changed are written. `open_shared_search`
answers searches with the same streams, fusion, priors and snippets as a local
search, reading through the PostgreSQL store as one principal, whose grants are
part of every statement (no principal: the database role's own view).

Needs the `postgres` extra (`pip install 'codesift[postgres]'`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, cast

from codesift.config import SearchSettings
from codesift.embedding.model import Embedder
from codesift.engine.access import IndexReport
from codesift.engine.listener import EngineListener
from codesift.engine.results import EmbedReport, Symbol, SymbolMatches
from codesift.engine.session import reindex
from codesift.engine.symbols import score_name
from codesift.engine.workspace import Workspace
from codesift.errors import ConfigError
from codesift.history.records import change_info
from codesift.retrieval.request import BROAD_LAYERS, SearchRequest, SearchResponse
from codesift.retrieval.search import Searcher
from codesift.store.database import open_reader
from codesift.store.reader import NodeRow
from codesift.store.search_store import SearchStore

if TYPE_CHECKING:
    import psycopg

    from codesift.store.postgres import MirrorSummary, PostgresSearchStore

# Separators of qualified names as typed (engine/symbols.py reads the same).
_QUALIFIER = re.compile(r"::|\.|#|->|\\|/")

__all__ = [
    "SharedIndexReport",
    "SharedSearch",
    "connect",
    "index_into",
    "mirror_local",
    "open_shared_search",
    "repo_key",
    "write_shared",
]


def connect(dsn: str, *, autocommit: bool = False, upgrade: bool = True) -> psycopg.Connection[Any]:
    """A connection to the shared index at `dsn`, its schema migrated (`upgrade`,
    for writers) or checked to be current (readers, whose role may not create
    tables); ConfigError when psycopg is not installed, the server cannot be
    reached, or a reader finds an older schema."""
    try:
        import psycopg
    except ImportError as exc:
        raise ConfigError(
            "the shared index needs the postgres extra: pip install 'codesift[postgres]'"
        ) from exc
    from codesift.store.postgres import migrate, schema_version
    from codesift.store.postgres.schema import MIGRATIONS

    try:
        conn = psycopg.connect(dsn)
    except psycopg.OperationalError as exc:
        raise ConfigError(f"cannot connect to the shared index: {exc}") from exc
    if upgrade:
        migrate(conn)
    else:
        version = schema_version(conn)
        conn.rollback()
        if version < MIGRATIONS[-1].version:
            conn.close()
            raise ConfigError(
                f"the shared index has schema version {version}, this codesift reads"
                f" {MIGRATIONS[-1].version}: run an indexing job (index_into) to upgrade it"
            )
    conn.autocommit = autocommit
    return conn


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
    report, embedded, conn = reindex(ws, listener, vectors=vectors, quiet=True)
    try:
        summary = _mirror(conn, dsn, repo_key(ws.root, repo), str(ws.root))
    finally:
        conn.close()
    return SharedIndexReport(report, embedded, summary)


def write_shared(local: Any, dsn: str, repo: str, root: str = "") -> MirrorSummary:
    """Write the local index open on `local` (an apsw connection, e.g. the one
    `reindex` returns) into the shared index at `dsn` as `repo`."""
    return _mirror(local, dsn, repo, root)


def mirror_local(dsn: str, db_path: Path, repo: str, root: str = "") -> MirrorSummary:
    """Write an existing local index (at `db_path`) into the shared index as `repo`."""
    conn = open_reader(db_path)
    try:
        return _mirror(conn, dsn, repo, root)
    finally:
        conn.close()


def _mirror(local: Any, dsn: str, repo: str, root: str) -> MirrorSummary:
    from codesift.store.postgres import mirror_index

    with connect(dsn) as pg:
        return mirror_index(local, pg, repo, root)


class SharedSearch:
    """Searches over the shared index as one principal; see the module docstring.
    Not shared between threads (one connection); close it when done."""

    def __init__(
        self,
        conn: psycopg.Connection[Any],
        store: PostgresSearchStore,
        settings: SearchSettings | None,
        embedder: Embedder | None,
        worker_stores: Callable[[], tuple[SearchStore, Callable[[], None]]] | None = None,
    ) -> None:
        self._conn = conn
        self.store = store
        # The Searcher reads only through the stores; its connection argument is unused.
        self.searcher = Searcher(
            cast(Any, conn), settings, embedder, store=store, worker_stores=worker_stores
        )

    def search(self, request: SearchRequest) -> SearchResponse:
        return self.searcher.search(request)

    def symbols(self, name: str, limit: int = 50) -> SymbolMatches:
        """Definitions named `name` (a qualified name matches its ending after a
        separator; exact case first), then similar names scored as locally
        (engine/symbols.score_name), among the repositories this principal may
        read."""
        from codesift.store.filters import SearchFilters

        typed = name.strip()
        tail = _QUALIFIER.split(typed)[-1]
        if not tail:
            return SymbolMatches(name)
        candidates = self.store.symbol_candidates(tail, SearchFilters(BROAD_LAYERS), 400)
        rows = self.store.node_rows([c.node_id for c in candidates])
        times = self.store.node_times(rows)
        wanted = typed.lower()

        def symbol(node: NodeRow, score: float = 0.0) -> Symbol:
            row = times.get(node.id)
            return Symbol(node, change_info(row) if row is not None else None, score)

        def named(node: NodeRow) -> bool:
            if node.name.lower() != tail.lower():
                return False
            if tail == typed:
                return True
            qname = _QUALIFIER.sub(".", node.qualified_name).lower()
            return qname.endswith(_QUALIFIER.sub(".", wanted))

        exact = sorted(
            (n for n in rows.values() if named(n)),
            key=lambda n: (n.name != tail, n.path, n.start_line),
        )
        shown = {n.id for n in exact}
        fuzzy = sorted(
            (
                (score, n)
                for n in rows.values()
                if n.id not in shown and (score := score_name(tail, n.name)) > 0
            ),
            key=lambda sn: (-sn[0], sn[1].path, sn[1].start_line),
        )
        return SymbolMatches(
            name,
            tuple(symbol(n) for n in exact[:limit]),
            tuple(symbol(n, s) for s, n in fuzzy[: max(0, limit - len(exact))]),
        )

    def callers(self, name: str) -> list[tuple[NodeRow, NodeRow, int]]:
        """(callee, caller, line of the call) for each call resolved to a
        definition named `name`, among the repositories this principal may read."""
        callees = [s.node for s in self.symbols(name).exact]
        out: list[tuple[NodeRow, NodeRow, int]] = []
        for callee in callees:
            edges = [e for e in self.store.edges_to(callee.id) if e.kind == "calls"]
            rows = self.store.node_rows([e.src_id for e in edges])
            out.extend((callee, rows[e.src_id], e.line) for e in edges if e.src_id in rows)
        return out

    def repos(self) -> list[str]:
        """The repositories this principal may read."""
        return self.store.readable_repos()

    def counts(self) -> dict[str, dict[str, int]]:
        """Files, nodes, chunks and vectors of each repository it may read."""
        return self.store.repo_counts()

    def close(self) -> None:
        self.searcher.close()
        self._conn.close()

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
    model: str | None = None,
    parallel: bool = True,
) -> SharedSearch:
    """Searches of the shared index at `dsn` as `principal` (None: every repository
    the database role may read), over `repos` only when given. With an `embedder`,
    the vector streams compare its query vectors with the repositories' vectors
    (those `model` made, when given). The streams of a search run side by side,
    each worker thread on a connection of its own (`parallel=False`: one after
    the other on one connection)."""
    from codesift.store.postgres import PostgresSearchStore, Reader

    reader = Reader(principal, tuple(repos))
    conn = connect(dsn, autocommit=True, upgrade=False)
    store = PostgresSearchStore(conn, reader, model)

    def worker_store() -> tuple[SearchStore, Callable[[], None]]:
        # Each stream worker thread reads on a connection of its own.
        own = connect(dsn, autocommit=True, upgrade=False)
        return PostgresSearchStore(own, reader, model), own.close

    return SharedSearch(conn, store, settings, embedder, worker_store if parallel else None)
