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
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from codesift.config import CollectionSettings, Settings, load_settings, merge_settings
from codesift.engine.listener import EngineListener
from codesift.engine.workspace import Workspace
from codesift.errors import CodesiftError, SearchCancelled
from codesift.retrieval.request import SearchRequest, SearchResult

__all__ = [
    "RESOURCE_LAYERS",
    "Collection",
    "collection_db_path",
    "collections_of",
    "search_collections",
]

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


def search_collections(
    request: SearchRequest,
    collections: Sequence[Collection],
    limit: int,
    listener: EngineListener | None = None,
) -> list[SearchResult]:
    """The best `limit` resources over `collections` for `request`'s query, best
    first, one per resource, each with its `collection` set. Only the query and the
    snippet size carry over (paths, languages and git times are the workspace's). A
    collection whose index cannot be read is skipped with a warning."""
    from codesift.engine.session import Engine  # the session imports this module

    if limit <= 0 or not collections:
        return []
    ask = SearchRequest(
        query=request.query,
        top_k=min(limit * 2, 200),
        layers=RESOURCE_LAYERS,
        snippet_chars=request.snippet_chars,
    )
    found: list[SearchResult] = []
    for collection in collections:
        try:
            with Engine(collection.workspace, listener, quiet=True) as engine:
                page = engine.search(ask)
        except SearchCancelled:
            raise
        except CodesiftError as exc:
            message = f"collection {collection.name!r}: {exc}"
            log.warning("%s", message)
            if listener is not None:
                listener.warning(message)
            continue
        found.extend(replace(r, collection=collection.name) for r in page.results)
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
