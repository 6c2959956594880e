"""The shared PostgreSQL index under a long-running server's local indexes.

    shared = SharedIndex(dsn)                      # settings: index.backend = "postgres"
    page = shared.search(request, exclude={"github.com/acme/web@main"})
    pages = [*local_pages, *page.pages]            # merged by engine/search.merge_pages
    profiles, evidence = shared.route_pool(exclude=...)

The language server and the MCP server search their open folders' local indexes
(fresh within a second of a save) and, besides them, the shared index
(engine/postgres.py, `open_shared_search`) for every other repository. The
local index overlays the shared one: the repositories of the open folders (each
folder's `index.repo`, else its default key, `repo_key`) are left out of the
shared search, so an uncommitted edit is found locally and the shared index's
stale copy of that file is never returned.

The shared page is split into one page per repository (its paths within the
repository, `SharedPage.keys` naming each page's repository) and merged with
the folders' pages by engine/search.merge_pages, as a multi-folder search
merges its folders: one merge, one ranking, no second fusion.

Who reads: the servers run as one user and read as the database role of the
DSN (no principal: the role's own view). No client setting names a principal:
a deployment that must keep people to their grants gives each person a role of
their own and turns on row-level security (store/postgres/access.py,
`enable_row_security`), so the grants come from the authenticated connection.

When the shared index cannot be reached (or fails), a search answers from the
local indexes and the status says so in one line; the next attempt waits
RETRY_SECONDS, so a server that is down does not slow every search.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from codesift.config import SearchSettings, Settings
from codesift.engine.search import FolderPage
from codesift.engine.shared_pages import (
    NO_TIMES,
    SHARED_PREFIX,
    RawTimes,
    has_revision,
    repository_windows,
    split_by_repository,
)
from codesift.errors import CodesiftError, ConfigError, QueryError, SearchCancelled
from codesift.retrieval.request import (
    SearchRequest,
    SearchResponse,
    StreamReport,
)
from codesift.retrieval.routing import RouteEvidence, SourceProfile

if TYPE_CHECKING:
    import psycopg

    from codesift.embedding import Embedder
    from codesift.engine.live import Cancellation
    from codesift.engine.postgres import SharedSearch
    from codesift.store.postgres.route import SharedRouteStore
    from codesift.store.postgres.route_postings import RoutePostings

__all__ = [
    "RETRY_SECONDS",
    "SHARED_PREFIX",
    "SharedIndex",
    "SharedPage",
    "SharedStatus",
    "add_shared_pool",
    "folder_repo_key",
    "shared_dsn",
]

log = logging.getLogger(__name__)

T = TypeVar("T")

# After a failure, the shared index is tried again this long later.
RETRY_SECONDS = 30.0
# A shared repository's page is named this plus its key (never a folder's name).


def shared_dsn(settings: Settings | Mapping[str, Any] | None) -> str | None:
    """The DSN of the shared index the settings name (`index.backend = "postgres"`
    and `index.dsn`), else None. Takes a settings tree or the client's validated
    `index` section as a mapping."""
    if settings is None:
        return None
    if isinstance(settings, Settings):
        backend, dsn = settings.index.backend, settings.index.dsn
    else:
        backend, dsn = str(settings.get("backend", "sqlite")), str(settings.get("dsn", ""))
    return dsn.strip() if backend == "postgres" and dsn.strip() else None


def folder_repo_key(root: Path, settings: Settings) -> str:
    """An open folder's repository key in the shared index: `index.repo`, else
    the remote slug and branch (engine/postgres.py, `repo_key`)."""
    from codesift.engine.postgres import repo_key

    return repo_key(root, settings.index.repo or None)


@dataclass(frozen=True, slots=True)
class SharedStatus:
    """What a response says of the shared index: `state` "ok" or "unavailable",
    one line (`message`), and the repositories searched or routed over."""

    state: str
    message: str = ""
    repositories: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {
            "state": self.state,
            "message": self.message,
            "repositories": list(self.repositories),
        }


@dataclass(frozen=True, slots=True)
class SharedPage:
    """The shared index's answer, one page per repository (named SHARED_PREFIX +
    its key; `keys[page.folder]` is the key; paths are within the repository),
    and its streams' reports (also when no repository had a result)."""

    pages: tuple[FolderPage, ...]
    keys: Mapping[str, str]
    status: SharedStatus
    streams: tuple[StreamReport, ...] = ()


@dataclass(slots=True)
class _Evidence:
    """Routing evidence of one shared repository; the pool's term counts are
    read once for every repository (one statement) and shared."""

    pool: _EvidencePool
    key: str

    def term_chunks(self, forms: Mapping[str, Sequence[str]]) -> Mapping[str, int]:
        return self.pool.term_chunks(forms).get(self.key, {})

    def probe(
        self, forms: Mapping[str, Sequence[str]], common: frozenset[str] = frozenset()
    ) -> Sequence[frozenset[str]]:
        return self.pool.probe(self.key, forms, common)


@dataclass(slots=True)
class _EvidencePool:
    shared: SharedIndex
    exclude: tuple[str, ...]
    counts: dict[tuple[tuple[str, tuple[str, ...]], ...], dict[str, dict[str, int]]] = field(
        default_factory=dict
    )
    # The query's postings in every repository in view, read once for all probes
    # (None: they cannot answer, each probe asks the database itself).
    postings: dict[tuple[tuple[str, tuple[str, ...]], ...], RoutePostings | None] = field(
        default_factory=dict
    )

    def term_chunks(self, forms: Mapping[str, Sequence[str]]) -> dict[str, dict[str, int]]:
        wanted = tuple((t, tuple(f)) for t, f in forms.items())
        if wanted not in self.counts:
            self.counts[wanted] = self.shared._with_route_store(
                self.exclude, lambda store: store.term_chunks(forms), {}
            )
        return self.counts[wanted]

    def probe(
        self, key: str, forms: Mapping[str, Sequence[str]], common: frozenset[str]
    ) -> list[frozenset[str]]:
        from codesift.store.postgres.route import ROUTE_PROBE_CHUNKS

        wanted = tuple((t, tuple(f)) for t, f in forms.items())
        if wanted not in self.postings:
            self.postings[wanted] = self.shared._with_route_store(
                self.exclude, lambda store: store.postings(forms), None
            )
        found = self.postings[wanted]
        if found is not None:
            return found.probe(key, common, ROUTE_PROBE_CHUNKS)
        return self.shared._with_route_store(
            self.exclude, lambda store: store.probe(key, forms, common), []
        )


class SharedIndex:
    """The shared index at `dsn` as a server reads it (see the module docstring).
    Safe to use from several threads: one reads at a time."""

    def __init__(
        self,
        dsn: str,
        *,
        principal: str | None = None,
        settings: SearchSettings | None = None,
        retry_seconds: float = RETRY_SECONDS,
        embedder: Callable[[], Embedder | None] | None = None,
    ) -> None:
        from codesift.store.postgres.route import with_connect_timeout

        self.dsn = dsn
        self._connect_dsn = with_connect_timeout(dsn)
        self.principal = principal
        self.settings = settings
        self.retry_seconds = retry_seconds
        # The query embedder of the server's local searches (None: embeddings off):
        # asked at each search, so a change of the settings' model is followed.
        self._embedder = embedder
        self._lock = threading.RLock()
        self._catalog: psycopg.Connection[Any] | None = None
        # The open search: the repositories in view, its query embedder, the search.
        self._search: tuple[tuple[str, ...], Embedder | None, SharedSearch] | None = None
        self._down: str | None = None
        self._retry_at = 0.0
        self._profiles: dict[tuple[str, str], SourceProfile] = {}
        # Open folders' keys -> the shared keys they overlay (until a time).
        self._aliases: dict[frozenset[str], tuple[float, frozenset[str]]] = {}
        self._warned: set[str] = set()

    # -- connections -------------------------------------------------------------------

    def _failed(self, exc: BaseException) -> SharedStatus:
        first = " ".join(str(exc).split()) or type(exc).__name__
        message = first if first.startswith("shared index") else f"shared index: {first}"
        message = message.replace("cannot connect to the shared index: ", "unreachable: ")
        self._down = f"shared index unavailable ({message.removeprefix('shared index: ')})"
        self._retry_at = time.monotonic() + self.retry_seconds
        log.warning("%s", self._down)
        self._close_locked()
        return SharedStatus("unavailable", self._down)

    def _waiting(self) -> SharedStatus | None:
        """The unavailable status while the retry delay runs, else None."""
        if self._down is not None and time.monotonic() < self._retry_at:
            return SharedStatus("unavailable", self._down)
        return None

    def _catalog_conn(self) -> psycopg.Connection[Any]:
        from codesift.engine.postgres import connect, dsn_has_password

        if dsn_has_password(self.dsn):
            # Settings are files (and indexed text): the password belongs elsewhere.
            raise ConfigError(
                "index.dsn holds a password: keep it in ~/.pgpass, PGPASSWORD"
                " or a pg_service.conf service"
            )
        if self._catalog is None or self._catalog.closed:
            self._catalog = connect(self._connect_dsn, autocommit=True, upgrade=False)
        return self._catalog

    def _route_store(self, exclude: Iterable[str]) -> SharedRouteStore:
        from codesift.store.postgres import Reader
        from codesift.store.postgres.route import SharedRouteStore

        overlaid = self._overlaid(frozenset(exclude))
        return SharedRouteStore(self._catalog_conn(), Reader(self.principal), overlaid)

    def _overlaid(self, keys: frozenset[str]) -> frozenset[str]:
        """The shared repositories the open folders of `keys` overlay: each key,
        and for a key the shared index does not hold, the one repository of the
        same name and branch (a folder without a remote has the default key
        `<folder>@<branch>`, which CI indexed as `<host>/<owner>/<folder>@<branch>`):
        without it every definition would be shown twice. Several candidates:
        none is taken, and a warning names the setting that says which."""
        if not keys:
            return keys
        now = time.monotonic()
        cached = self._aliases.get(keys)
        if cached is not None and cached[0] > now:
            return cached[1]
        from codesift.store.postgres import Reader
        from codesift.store.postgres.route import SharedRouteStore

        stamps = SharedRouteStore(self._catalog_conn(), Reader(self.principal)).stamps()
        held = {s.key for s in stamps}
        found = set(keys)
        for key in sorted(keys - held):
            name, branch = _name_and_branch(key)
            same = sorted(
                s.key
                for s in stamps
                if _name_and_branch(s.key)[1] == branch
                and name in (_name_and_branch(s.key)[0], Path(s.root).name if s.root else None)
            )
            if len(same) == 1:
                found.add(same[0])
            if same and key not in self._warned:
                self._warned.add(key)
                chosen = (
                    f"taken for it ({same[0]})"
                    if len(same) == 1
                    else f"it may be one of {', '.join(same)}"
                )
                log.warning(
                    "the open folder's repository key %s is not in the shared index: %s;"
                    ' set index.repo = "<key>" in the folder\'s .codesift.toml to name it',
                    key,
                    chosen,
                )
        result = frozenset(found)
        self._aliases[keys] = (now + self.retry_seconds, result)
        return result

    def _with_route_store(
        self, exclude: Iterable[str], read: Callable[[SharedRouteStore], T], fallback: T
    ) -> T:
        """`read(store)` under the lock; `fallback` when the index fails (which
        marks it unavailable)."""
        with self._lock:
            if self._waiting() is not None:
                return fallback
            try:
                return read(self._route_store(exclude))
            except Exception as exc:  # psycopg errors, ConfigError: the index is down
                if not _is_database_error(exc):
                    raise
                self._failed(exc)
                return fallback

    def _query_embedder(self) -> Embedder | None:
        """The servers' query embedder, or None (embeddings off, or it cannot be
        made: the lexical and symbol streams still answer)."""
        if self._embedder is None:
            return None
        try:
            return self._embedder()
        except Exception as exc:  # e.g. EmbeddingError: searched without vectors
            log.warning("the shared index is searched without vectors: %s", exc)
            return None

    def _searcher(self, visible: tuple[str, ...]) -> SharedSearch:
        from codesift.engine.postgres import open_shared_search

        embedder = self._query_embedder()
        if self._search is not None:
            keys, current, search = self._search
            if keys == visible and current is embedder:
                return search
            self._search = None
            search.close()
        # On the connection routing reads on (one read at a time, under the lock):
        # a routed search, whose repositories change with each query, opens none.
        search = open_shared_search(
            self._connect_dsn,
            principal=self.principal,
            repos=visible,
            settings=self.settings,
            embedder=embedder,
            parallel=False,
            conn=self._catalog_conn(),
        )
        self._search = (visible, embedder, search)
        return search

    def _close_locked(self) -> None:
        search, self._search = self._search, None
        if search is not None:
            try:
                search[2].close()
            except Exception as exc:  # already broken: nothing to keep
                log.info("closing the shared search: %s", exc)
        catalog, self._catalog = self._catalog, None
        if catalog is not None:
            try:
                catalog.close()
            except Exception as exc:
                log.info("closing the shared index connection: %s", exc)

    def close(self) -> None:
        with self._lock:
            self._close_locked()

    # -- reads ----------------------------------------------------------------------------

    def status(self, exclude: Collection[str] = ()) -> SharedStatus:
        """Whether the shared index answers, and the repositories in view
        (`exclude` left out)."""
        with self._lock:
            waiting = self._waiting()
            if waiting is not None:
                return waiting
            try:
                keys = tuple(s.key for s in self._route_store(exclude).stamps())
            except Exception as exc:
                if not _is_database_error(exc):
                    raise
                return self._failed(exc)
            self._down = None
            return SharedStatus("ok", "", keys)

    def search(
        self,
        request: SearchRequest,
        exclude: Collection[str] = (),
        only: Collection[str] | None = None,
        cancel: Cancellation | None = None,
        times: RawTimes = NO_TIMES,
    ) -> SharedPage:
        """The shared index's page for `request` over the repositories in view,
        `exclude` left out (and only those in `only`, when given). A `cancel`
        that fires cancels the running statement (SearchCancelled). `times`: the
        request's (as_of, since, until) as given; with a git revision among them
        each repository is searched at its own (shared_pages.repository_windows),
        else at the request's own window."""
        with self._lock:
            waiting = self._waiting()
            if waiting is not None:
                return SharedPage((), {}, waiting)
            try:  # a revision: each repository's own window, set below
                timeless = replace(request, as_of=None, since=None, until=None)
                checked = (timeless if has_revision(times) else request).validated()
            except QueryError as exc:  # a git revision means nothing to the shared index
                return SharedPage((), {}, SharedStatus("ok", f"shared index not searched: {exc}"))
            try:
                visible = tuple(s.key for s in self._route_store(exclude).stamps())
                if only is not None:
                    visible = tuple(k for k in visible if k in only)
                if not visible:
                    self._down = None
                    return SharedPage((), {}, SharedStatus("ok"))
                windows = (
                    repository_windows(self._searcher, visible, times)
                    if has_revision(times)
                    else [(None, visible)]
                )
                pages: tuple[FolderPage, ...] = ()
                keys: dict[str, str] = {}
                streams: tuple[StreamReport, ...] = ()
                for window, group in windows:
                    asked = checked
                    if window is not None:
                        asked = replace(
                            checked, as_of=window.as_of, since=window.since, until=window.until
                        )
                    response = _cancellable(self._searcher(group), asked, cancel)
                    more, named = split_by_repository(response, group)
                    pages, streams = pages + more, streams or tuple(response.streams)
                    keys.update(named)
            except Exception as exc:
                if not _is_database_error(exc):
                    raise
                return SharedPage((), {}, self._failed(exc))
            self._down = None
            return SharedPage(pages, keys, SharedStatus("ok", "", visible), streams)

    def route_pool(
        self, exclude: Collection[str] = ()
    ) -> tuple[list[SourceProfile], dict[str, RouteEvidence], SharedStatus]:
        """Routing profiles and evidence of the repositories in view (`exclude` left
        out), as engine/route.py describes a local repository; none when the index
        is unavailable (the status says why)."""
        from codesift.engine.route import README_CHARS, outline_entries

        with self._lock:
            waiting = self._waiting()
            if waiting is not None:
                return [], {}, waiting
            try:
                store = self._route_store(exclude)
                stamps = store.stamps()
                stale = [s.key for s in stamps if (s.key, s.indexed_at) not in self._profiles]
                outlines = store.outlines(stale, README_CHARS)
            except Exception as exc:
                if not _is_database_error(exc):
                    raise
                return [], {}, self._failed(exc)
            self._down = None
            for stamp in stamps:
                if stamp.key in outlines:
                    outline = outlines[stamp.key]
                    slug, _, branch = stamp.key.rpartition("@")
                    if not slug:
                        slug, branch = stamp.key, ""
                    self._profiles[(stamp.key, stamp.indexed_at)] = SourceProfile(
                        name=stamp.key,
                        kind="repository",
                        fields=(
                            ("name", f"{slug.rsplit('/', 1)[-1]}\n{slug}".lower()),
                            ("branch", branch.lower()),
                            ("readme", outline.readme.lower()),
                            ("outline", "\n".join(outline_entries(outline.files)).lower()),
                        ),
                        chunks=stamp.chunks,
                    )
            profiles = [
                replace(self._profiles[(s.key, s.indexed_at)], chunks=s.chunks) for s in stamps
            ]
            pool = _EvidencePool(self, tuple(sorted(exclude)))
            evidence: dict[str, RouteEvidence] = {p.name: _Evidence(pool, p.name) for p in profiles}
            return profiles, evidence, SharedStatus("ok", "", tuple(s.key for s in stamps))


class _Interrupt:
    """A shared search as a request's cancellation sees a connection."""

    def __init__(self, search: SharedSearch) -> None:
        self.search = search

    def interrupt(self) -> None:
        self.search.store.interrupt()


def _cancellable(
    search: SharedSearch, request: SearchRequest, cancel: Cancellation | None
) -> SearchResponse:
    """`search.search(request)`, its statement cancelled when `cancel` fires
    (SearchCancelled: the request's, not the database's failure)."""
    if cancel is None:
        return search.search(request)
    if cancel.cancelled:
        raise SearchCancelled("the request was cancelled")
    stop = cast(Any, _Interrupt(search))  # Cancellation calls interrupt() only
    cancel.attach(stop)
    try:
        return search.search(request)
    except Exception as exc:
        if cancel.cancelled:
            raise SearchCancelled("the request was cancelled") from exc
        raise
    finally:
        cancel.detach(stop)


def _name_and_branch(key: str) -> tuple[str, str]:
    """`github.com/acme/web@main` -> (`web`, `main`); a key without `@` has no branch."""
    slug, at, branch = key.rpartition("@")
    if not at:
        slug, branch = key, ""
    return slug.rstrip("/").rsplit("/", 1)[-1], branch


def _is_database_error(exc: BaseException) -> bool:
    """Errors that mean the shared index cannot answer now: the connection (a
    ConfigError from engine/postgres.connect) or any psycopg error."""
    if isinstance(exc, SearchCancelled):
        return False
    if isinstance(exc, CodesiftError):
        return True
    try:
        import psycopg
    except ImportError:
        return False
    return isinstance(exc, psycopg.Error | OSError)


def add_shared_pool(
    repositories: list[SourceProfile],
    evidence: dict[str, RouteEvidence],
    shared: SharedIndex,
    exclude: Collection[str],
) -> SharedStatus:
    """Add the shared repositories in view (`exclude` left out) to a routing pool
    of local repositories (a shared key that is a local name already is left
    out); the status says whether the shared index answered."""
    profiles, found, status = shared.route_pool(exclude)
    names = {p.name for p in repositories}
    for profile in profiles:
        if profile.name not in names:
            repositories.append(profile)
            evidence[profile.name] = found[profile.name]
    return status
