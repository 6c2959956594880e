"""Routing's orchestrators over indexes on disk (engine/route.py is the scoring
core they share; engine/live_collections.py and engine/shared_overlay.py route a
server's live folders): `route` among local folders, the document collections
they list and, when their settings name it, the shared index's repositories;
`route_shared` among the shared index's repositories alone (`route --db`).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

from codesift.engine.collections import collections_of
from codesift.engine.listener import EngineListener
from codesift.engine.postgres import SharedIndexUnavailable, open_shared_search
from codesift.engine.route import (
    RouteResult,
    cached_collection_profile,
    cached_profile,
    check_route,
    folder_names,
    route_sources,
)
from codesift.engine.session import Engine
from codesift.engine.shared_overlay import SharedIndex, add_shared_pool, folder_repo_key, shared_dsn
from codesift.engine.workspace import Workspace
from codesift.retrieval.routing import RouteEvidence, SourceProfile
from codesift.store.database import open_reader
from codesift.store.route_centroids import (
    cached_centroids,
    neighbour_similarity,
    vectors_are_minilm,
)
from codesift.store.route_profile import IndexEvidence

if TYPE_CHECKING:
    from codesift.embedding.model import Embedder

__all__ = ["route", "route_shared"]


def route(
    query: str,
    workspaces: Sequence[Workspace],
    listener: EngineListener | None = None,
    limit: int = 3,
    *,
    engines: Sequence[Engine] | None = None,
    folders_only: bool = False,
) -> RouteResult:
    """Route `query` among `workspaces` (each index brought up to date first; or
    read through `engines`, one per workspace, left open) and the document
    collections they list (each once), pool by pool; each folder named as
    `folder_names` says. A workspace whose settings name the shared index adds
    its repositories to the pool. `folders_only`: the workspaces' own folders
    alone (no shared repositories, no collections: what a search over several
    folders needs). QueryError for a bad request (`check_route`) before any index
    is touched."""
    check_route(query, limit)

    repositories: list[SourceProfile] = []
    collections: dict[Path, SourceProfile] = {}
    with ExitStack() as readers:
        evidence: dict[str, RouteEvidence] = {}
        names = folder_names([ws.root for ws in workspaces])
        for i, ws in enumerate(workspaces):
            if engines is not None:
                profile = cached_profile(ws, engines[i].connection(), names[i])
            else:
                with Engine(ws, listener, quiet=True) as engine:
                    profile = cached_profile(ws, engine.connection(), names[i])
            repositories.append(profile)
            reader = open_reader(ws.db_path)
            readers.callback(reader.close)
            evidence[profile.name] = IndexEvidence(
                reader,
                topics=functools.partial(cached_centroids, ws.db_path, reader),
                neighbours=functools.partial(neighbour_similarity, ws.db_path, reader),
                minilm=functools.partial(vectors_are_minilm, ws.db_path, reader),
            )
            for collection in () if folders_only else collections_of(ws, listener):
                if collection.workspace.db_path in collections:
                    continue
                with Engine(collection.workspace, listener, quiet=True) as engine:
                    collections[collection.workspace.db_path] = cached_collection_profile(
                        collection, engine.connection()
                    )
        # A workspace whose settings name the shared index (index.backend =
        # "postgres") adds its repositories to the pool, those of these folders
        # left out: their local indexes describe them.
        dsn = next((d for d in (shared_dsn(ws.settings) for ws in workspaces) if d), None)
        if dsn is not None and not folders_only:
            shared = SharedIndex(dsn, settings=workspaces[0].settings.search)
            readers.callback(shared.close)
            open_keys = {folder_repo_key(ws.root, ws.settings) for ws in workspaces}
            status = add_shared_pool(repositories, evidence, shared, open_keys)
            if status.state != "ok" and listener is not None:
                listener.warning(status.message)
        return route_sources(
            query,
            repositories,
            list(collections.values()),
            limit,
            evidence,
            _query_embedder(workspaces) if len(repositories) > 1 else None,
        )


def _query_embedder(workspaces: Sequence[Workspace]) -> Embedder | None:
    """The embedder of the first workspace whose settings embed with MiniLM (its
    query encoder loads on first use), for the pool's neighbour scores; None: the
    static model's query alone."""
    from codesift.engine.models import make_embedder

    for ws in workspaces:
        embedding = ws.settings.embedding
        if embedding.enabled and embedding.model == "minilm":
            return make_embedder(embedding)
    return None


def route_shared(
    dsn: str,
    query: str,
    *,
    principal: str | None = None,
    repos: Sequence[str] = (),
    limit: int = 3,
) -> RouteResult:
    """Which repositories of the shared index at `dsn` a question is about, among
    those `principal` may read (and `repos`, when given), scored by the code that
    routes local folders (engine/route.py, with the shared evidence of
    store/postgres/route.py; no semantic score: no query model is loaded).
    ConfigError in one line for a principal the role may not read as, or a
    server that cannot be reached."""
    check_route(query, limit)
    with open_shared_search(dsn, principal=principal, repos=repos, parallel=False) as shared:
        keys = set(shared.repos())  # the principal checked, the keys in view
    pool = SharedIndex(dsn, principal=principal)
    try:
        profiles, evidence, status = pool.route_pool()
    finally:
        pool.close()
    if status.state != "ok":
        raise SharedIndexUnavailable(f"the shared index is unavailable: {status.message}")
    profiles = [p for p in profiles if p.name in keys]
    found = {name: e for name, e in evidence.items() if name in keys}
    return route_sources(query, profiles, (), limit, found, None)
