"""Document collections: folders of documents (requirements, design records, schemas,
runbooks) searched beside the code, independently of it.

A collection is listed in the settings (`[[collections]]`: name, path, description,
labels). It has its own index, one per folder and shared by every workspace that
lists it, under the user's cache (`~/.cache/codesift/collections/`, or
`$XDG_CACHE_HOME`), built and kept up to date by the same indexer as a workspace
(markdown and other documents become heading sections and resources, other text
files line windows). A search asks each collection of the workspace for its best
resources, found by the same streams as code (full text, and vectors when the
collection has them), and lists up to `search.resource_top_k` of them, one per
resource, beside the code results: a requirement nothing in the code links to yet
is found all the same.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

from codesift.config import CollectionSettings, Settings, load_settings, merge_settings
from codesift.engine.listener import EngineListener
from codesift.engine.workspace import Workspace
from codesift.errors import CodesiftError, SearchCancelled
from codesift.retrieval.mentions import mention_terms, result_terms
from codesift.retrieval.request import RelatedResource, SearchRequest, SearchResponse, SearchResult
from codesift.store.database import open_database
from codesift.store.locks import IndexLock
from codesift.store.mentions import (
    mentioning_chunks,
    mentions_stale,
    replace_mentions,
    resource_texts,
)
from codesift.store.reader import ChunkRow, chunk_rows

__all__ = [
    "RESOURCE_LAYERS",
    "Collection",
    "collection_db_path",
    "collections_of",
    "pick_resources",
    "refresh_mentions",
    "related_resources",
    "resource_request",
    "search_collections",
]

# At most this many related resources per code result.
MAX_RELATED = 5

log = logging.getLogger(__name__)

# What a collection's results are: doc sections and resources, and line windows of
# its plain-text files (layer `code`, language `text`).
RESOURCE_LAYERS: tuple[str, ...] = ("doc", "code")


@dataclass(frozen=True, slots=True)
class Collection:
    name: str
    description: str
    labels: tuple[str, ...]
    workspace: Workspace  # its folder, settings and shared index

    @property
    def root(self) -> Path:
        return self.workspace.root


def _cache_base() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "codesift" / "collections"


def collection_db_path(root: Path, base: Path | None = None) -> Path:
    """The one index of the collection folder `root` (resolved), whichever workspace
    lists it: `<cache>/collections/<folder name>-<hash of its path>.db`."""
    resolved = root.resolve()
    digest = hashlib.sha256(str(resolved).encode("utf-8")).hexdigest()[:12]
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", resolved.name).strip("-") or "root"
    return (base or _cache_base()) / f"{slug}-{digest}.db"


def _collection_workspace(item: CollectionSettings, base: Path) -> Workspace:
    root = Path(os.path.expanduser(item.path))
    if not root.is_absolute():
        root = base / root
    root = root.resolve()
    if not root.is_dir():
        raise CodesiftError(f"collection {item.name!r}: {root} is not a folder")
    db_path = collection_db_path(root)
    # The folder's own .codesift.toml applies to its indexing; its index lives in the
    # shared cache and it mounts no collections of its own.
    settings = load_settings(root) if (root / ".codesift.toml").is_file() else Settings()
    settings = merge_settings(settings, {"index": {"db_path": str(db_path)}})
    return Workspace(root, replace(settings, collections=()), db_path)


def collections_of(ws: Workspace, listener: EngineListener | None = None) -> list[Collection]:
    """The collections `ws`'s settings list, paths resolved against its root. One
    whose folder is missing is left out with a warning (the others still serve)."""
    found: list[Collection] = []
    for item in ws.settings.collections:
        try:
            cws = _collection_workspace(item, ws.root)
        except (CodesiftError, OSError) as exc:
            message = str(exc)
            log.warning("%s", message)
            if listener is not None:
                listener.warning(message)
            continue
        found.append(Collection(item.name, item.description, tuple(item.labels), cws))
    return found


def _resource_key(result: SearchResult) -> tuple[str, int | str]:
    """One result per resource: its node (a section, table, endpoint), else its file."""
    return (result.path, result.node_id if result.node_id is not None else "file")


def resource_request(request: SearchRequest, limit: int) -> SearchRequest:
    """What each collection is asked for `request`: its query and snippet size only
    (paths, languages and git times are the workspace's), over the resource layers,
    twice `limit` results so that one per resource still fills the list."""
    return SearchRequest(
        query=request.query,
        top_k=min(limit * 2, 200),
        layers=RESOURCE_LAYERS,
        snippet_chars=request.snippet_chars,
    )


def pick_resources(
    pages: Sequence[tuple[str, Sequence[SearchResult]]], limit: int
) -> list[SearchResult]:
    """The best `limit` results of the collections' pages ((collection name, results)),
    best first, one per resource, each with its `collection` set."""
    found = [replace(r, collection=name) for name, results in pages for r in results]
    found.sort(key=lambda r: (-r.score, r.collection, r.path, r.start_line))
    seen: set[tuple[str, str, int | str]] = set()
    out: list[SearchResult] = []
    for result in found:
        key = (result.collection, *_resource_key(result))
        if key in seen:
            continue
        seen.add(key)
        out.append(result)
        if len(out) == limit:
            break
    return out


class PageSource(Protocol):
    """What a collection's index is searched through (engine/session.py's Engine)."""

    def search(self, request: SearchRequest) -> SearchResponse: ...


# Opens a collection's index for one search (the session's Engine, quiet): given by
# the caller, so that this module does not import the session, which imports it.
OpenCollection = Callable[[Workspace, EngineListener | None], AbstractContextManager[PageSource]]


def search_collections(
    request: SearchRequest,
    collections: Sequence[Collection],
    limit: int,
    listener: EngineListener | None = None,
    *,
    open_index: OpenCollection,
) -> list[SearchResult]:
    """The best `limit` resources over `collections` for `request`'s query, best
    first, one per resource, each with its `collection` set. Only the query and the
    snippet size carry over (paths, languages and git times are the workspace's). A
    collection whose index cannot be read is skipped with a warning. `open_index`
    opens each collection's index."""

    if limit <= 0 or not collections:
        return []
    ask = resource_request(request, limit)
    pages: list[tuple[str, Sequence[SearchResult]]] = []
    for collection in collections:
        try:
            with open_index(collection.workspace, listener) as engine:
                page = engine.search(ask)
                refresh_mentions(collection)
        except SearchCancelled:
            raise
        except CodesiftError as exc:
            message = f"collection {collection.name!r}: {exc}"
            log.warning("%s", message)
            if listener is not None:
                listener.warning(message)
            continue
        pages.append((collection.name, page.results))
    return pick_resources(pages, limit)


def refresh_mentions(collection: Collection) -> bool:
    """Rebuild the collection's `mentions` when its index changed since they were
    built; True when they are current. Skipped (False) while another process
    writes the index: the mentions of the last build answer meanwhile."""
    db_path = collection.workspace.db_path
    if not db_path.exists():
        return False
    lock = IndexLock(db_path, "write", purpose="codesift: recording what documents mention")
    if not lock.try_acquire():
        return False
    try:
        conn = open_database(db_path)
        try:
            if mentions_stale(conn):
                pairs = [
                    (term, chunk_id)
                    for chunk_id, text in resource_texts(conn)
                    for term in mention_terms(text)
                ]
                replace_mentions(conn, pairs)
            return True
        finally:
            conn.close()
    finally:
        lock.release()


def _link(links: list[RelatedResource], collection: str, row: ChunkRow, term: str) -> None:
    """Add the resource `row` of `collection` to `links` (found by `term`) unless it
    is listed there already or `links` is full."""
    place = (collection, row.path, row.start_line)
    if any((x.collection, x.path, x.start_line) == place for x in links):
        return
    if len(links) < MAX_RELATED:
        links.append(
            RelatedResource(
                collection, row.path, row.start_line, row.end_line, row.title or row.path, term
            )
        )


def _mentions_in(
    collection: Collection,
    wanted: Mapping[int, Iterable[str]],
    found: dict[int, list[RelatedResource]],
    listener: EngineListener | None,
    refresh: bool,
) -> None:
    """Add to `found` (by chunk id) the resources of `collection` that mention one
    of the chunk's `wanted` terms, the most specific term first."""
    db_path = collection.workspace.db_path
    if not db_path.exists():
        return  # never searched yet: nothing is known of what it mentions
    if refresh:
        refresh_mentions(collection)
    try:
        conn = open_database(db_path, readonly=True)
    except CodesiftError as exc:
        if listener is not None:
            listener.warning(f"collection {collection.name!r}: {exc}")
        return
    every_term = sorted({t for terms in wanted.values() for t in terms})
    try:
        by_term = mentioning_chunks(conn, every_term)
        rows = chunk_rows(conn, {cid for ids in by_term.values() for cid in ids})
    finally:
        conn.close()
    for chunk_id, terms in wanted.items():
        for term in sorted(terms, key=lambda t: (-len(t), t)):  # most specific first
            for resource_id in by_term.get(term, ()):
                row = rows.get(resource_id)
                if row is not None:
                    _link(found.setdefault(chunk_id, []), collection.name, row, term)


def related_resources(
    results: Sequence[SearchResult],
    collections: Sequence[Collection],
    listener: EngineListener | None = None,
    *,
    refresh: bool = True,
) -> list[SearchResult]:
    """`results` with `related` set on each code result that a collection resource
    mentions (by qualified name, name, file or table; at most MAX_RELATED each).
    `refresh`: bring each collection's mentions up to date first; a caller whose
    resource search has just done so passes False."""
    code = [r for r in results if r.layer in ("code", "summary", "ast") and r.collection == ""]
    if not code or not collections:
        return list(results)
    wanted = {
        r.chunk_id: result_terms(
            r.qualified_name, r.qualified_name.rsplit(".", 1)[-1], r.path, r.kind
        )
        for r in code
    }
    found: dict[int, list[RelatedResource]] = {}
    for collection in collections:
        _mentions_in(collection, wanted, found, listener, refresh)
    return [
        replace(r, related=tuple(found[r.chunk_id])) if r.chunk_id in found else r for r in results
    ]
