"""Routing a question to the repositories it is about (codesift.retrieval.routing
scores; this module describes each workspace folder from its index and its git
repository).

A repository's profile has four fields: `name` (folder name and remote slug),
`branch`, `readme` (the first README_CHARS characters of its README) and `outline`
(file paths and module-level qualified names, at most OUTLINE_ENTRIES, shallow files
first, test files left out), and the number of chunks its index holds. Profiles are
cached per index file and rebuilt when the index changes. Routing also reads each
repository's full-text index (codesift.store.route_profile: the chunks using each
query term, and a probe of its best chunks for the query) to grade the order of the
pool; the confidence stays the issue's formula over the fields and the vocabulary.

This is routing's core: the orchestrators import it, never the reverse
(engine/route_folders.py over indexes on disk, engine/live_collections.py over a
server's live folders, engine/shared_overlay.py with the shared index).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import apsw

from codesift.errors import QueryError
from codesift.retrieval.request import MAX_QUERY_CHARS

if TYPE_CHECKING:
    from codesift.embedding.model import Embedder
    from codesift.engine.collections import Collection
from codesift.engine.workspace import Workspace, folder_names
from codesift.retrieval.ranking import is_test_like_path
from codesift.retrieval.routing import (
    RouteEvidence,
    RouteMatch,
    SemanticEvidence,
    SourceProfile,
    minilm_pool,
    neighbour_semantic,
    route_terms,
    score_pool,
    semantic_scores,
)
from codesift.store.mentions import resource_texts, resource_titles
from codesift.store.outline import OutlineFile, source_outline
from codesift.store.route_profile import chunk_total

__all__ = [
    "MAX_ROUTE_LIMIT",
    "OUTLINE_ENTRIES",
    "README_CHARS",
    "RouteMatch",
    "RouteResult",
    "cached_collection_profile",
    "cached_profile",
    "check_route",
    "collection_profile",
    "folder_names",
    "match_json",
    "outline_entries",
    "repository_profile",
    "route_json",
    "route_sources",
]

log = logging.getLogger(__name__)

README_CHARS = 2000
# A route request lists at most this many sources per pool.
MAX_ROUTE_LIMIT = 20
HEADINGS_BYTES = 64 * 1024
OUTLINE_ENTRIES = 1500
_README_NAMES = ("README.md", "README.rst", "README.txt", "README", "readme.md", "Readme.md")


@dataclass(frozen=True, slots=True)
class RouteResult:
    query: str
    terms: tuple[str, ...]
    repositories: tuple[RouteMatch, ...]
    collections: tuple[RouteMatch, ...]


def _depth(path: str) -> int:
    return path.count("/")


def outline_entries(files: Sequence[OutlineFile], limit: int = OUTLINE_ENTRIES) -> list[str]:
    """File paths and module-level qualified names of the code files (tests left
    out), at most `limit`: half the room for paths, the rest for names, shallow
    files first; room one kind leaves is given to the other."""
    code = sorted(
        (f for f in files if f.language != "text" and not is_test_like_path(f.path)),
        key=lambda f: (_depth(f.path), f.path),
    )
    paths = [f.path for f in code]
    names = [name for f in code for name in f.names]
    room_for_paths = max(limit // 2, limit - len(names))
    taken_paths = paths[:room_for_paths]
    taken_names = names[: limit - len(taken_paths)]
    return taken_paths + taken_names


def _readme(root: Path) -> str:
    for name in _README_NAMES:
        path = root / name
        try:
            with path.open("r", encoding="utf-8", errors="replace") as handle:
                return handle.read(README_CHARS)
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            continue
        except OSError as exc:
            log.info("routing: cannot read %s: %s", path, exc)
            return ""
    return ""


def _slug(url: str) -> str:
    """`owner/name` of a remote URL (https, ssh or scp-like), else the URL."""
    text = url.strip().removesuffix("/").removesuffix(".git")
    text = text.replace(":", "/")
    parts = [p for p in text.split("/") if p]
    return "/".join(parts[-2:]) if len(parts) >= 2 else text


def _git_identity(root: Path) -> tuple[str, str]:
    """(remote slug, branch) of the repository at `root`, "" for what it lacks."""
    import pygit2  # only when routing

    try:
        found = pygit2.discover_repository(str(root))
        if found is None:
            return "", ""
        repo = pygit2.Repository(found)
        slug = ""
        remotes = {remote.name: remote.url for remote in repo.remotes}
        url = remotes.get("origin") or next(iter(remotes.values()), None)
        if url:
            slug = _slug(url)
        branch = "" if repo.head_is_unborn or repo.head_is_detached else repo.head.shorthand
        return slug, branch
    except (pygit2.GitError, KeyError, ValueError, OSError) as exc:
        log.info("routing: no git identity for %s: %s", root, exc)
        return "", ""


def repository_profile(
    ws: Workspace, conn: apsw.Connection, name: str | None = None
) -> SourceProfile:
    """The routing profile of the workspace folder `ws`, read from its index `conn`,
    named `name` (default: the folder's name)."""
    slug, branch = _git_identity(ws.root)
    name = name or ws.root.name
    outline = outline_entries(source_outline(conn))
    return SourceProfile(
        name=name,
        kind="repository",
        fields=(
            ("name", f"{name}\n{slug}".lower()),
            ("branch", branch.lower()),
            ("readme", _readme(ws.root).lower()),
            ("outline", "\n".join(outline).lower()),
        ),
        chunks=chunk_total(conn),
    )


def _within(lines: list[str], budget: int) -> str:
    out: list[str] = []
    used = 0
    for line in lines:
        size = len(line.encode("utf-8")) + 1
        if used + size > budget:
            break
        out.append(line)
        used += size
    return "\n".join(out)


def collection_profile(
    name: str, description: str, labels: Sequence[str], conn: apsw.Connection
) -> SourceProfile:
    """The routing profile of a document collection: its name, description and
    labels, its flattened heading tree (at most HEADINGS_BYTES) and the full text
    of its resources, read from its index `conn`."""
    lowered = tuple(label.lower() for label in labels)
    return SourceProfile(
        name=name,
        kind="collection",
        fields=(
            ("name", name.lower()),
            ("description", description.lower()),
            ("labels", "\n".join(lowered)),
            ("headings", _within(resource_titles(conn), HEADINGS_BYTES).lower()),
            ("text", "\n".join(text for _, text in resource_texts(conn)).lower()),
        ),
        labels=lowered,
    )


_cache_lock = threading.Lock()
_cache: dict[Path, tuple[tuple[int, int], SourceProfile]] = {}
_collection_cache: dict[
    tuple[Path, str, str, tuple[str, ...]], tuple[tuple[int, int], SourceProfile]
] = {}


def _index_stamp(db_path: Path) -> tuple[int, int]:
    stamps = []
    for path in (db_path, db_path.with_name(db_path.name + "-wal")):
        try:
            stamps.append(path.stat().st_mtime_ns)
        except OSError:
            stamps.append(0)
    return stamps[0], stamps[1]


def cached_profile(ws: Workspace, conn: apsw.Connection, name: str | None = None) -> SourceProfile:
    """`repository_profile` (named `name`, default the folder's name), kept until
    the index file changes."""
    stamp = _index_stamp(ws.db_path)
    name = name or ws.root.name
    with _cache_lock:
        hit = _cache.get(ws.db_path)
    if hit is not None and hit[0] == stamp and hit[1].name == name:
        return hit[1]
    profile = repository_profile(ws, conn, name=name)
    with _cache_lock:
        _cache[ws.db_path] = (stamp, profile)
    return profile


def cached_collection_profile(collection: Collection, conn: apsw.Connection) -> SourceProfile:
    """`collection_profile`, kept until the collection's index file changes."""
    db_path = collection.workspace.db_path
    stamp = _index_stamp(db_path)
    key = (db_path, collection.name, collection.description, collection.labels)
    with _cache_lock:
        hit = _collection_cache.get(key)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    profile = collection_profile(collection.name, collection.description, collection.labels, conn)
    with _cache_lock:
        _collection_cache[key] = (stamp, profile)
    return profile


def check_route(query: str, limit: int) -> None:
    """QueryError for a route request no front end should run: an empty (or blank)
    query, one longer than MAX_QUERY_CHARS, a limit outside 1..MAX_ROUTE_LIMIT."""
    if not query.strip():
        raise QueryError("the query is empty")
    if len(query) > MAX_QUERY_CHARS:
        raise QueryError(
            f"the query is {len(query)} characters long; the limit is {MAX_QUERY_CHARS}"
        )
    if isinstance(limit, bool) or not 1 <= limit <= MAX_ROUTE_LIMIT:
        raise QueryError(f"limit must be between 1 and {MAX_ROUTE_LIMIT}, got {limit}")


def match_json(match: RouteMatch) -> dict[str, Any]:
    """One source of a pool as every front end reports it (each adds where it is)."""
    return {
        "name": match.name,
        "kind": match.kind,
        "confidence": round(match.confidence, 4),
        "rationale": match.rationale,
        "matched": list(match.matched),
    }


def route_json(
    result: RouteResult, where: Callable[[RouteMatch], dict[str, Any]] | None = None
) -> dict[str, Any]:
    """`result` as JSON: the query, its routing terms and the two pools, each source
    with `where(match)` (a path, a URI) merged in."""

    def one(match: RouteMatch) -> dict[str, Any]:
        return {**match_json(match), **(where(match) if where is not None else {})}

    return {
        "query": result.query,
        "terms": list(result.terms),
        "repositories": [one(m) for m in result.repositories],
        "collections": [one(m) for m in result.collections],
    }


def _semantic(
    query: str, evidence: Mapping[str, RouteEvidence], query_embedder: Embedder | None
) -> SemanticEvidence:
    """Each source's semantic evidence (codesift.retrieval.routing): with a MiniLM
    `query_embedder` and a pool of MiniLM vectors, its centroid and neighbour
    scores; else its centroid score for the query's static embedding; none when
    neither model can be loaded (routing goes on without)."""
    if not any(callable(getattr(e, "topics", None)) for e in evidence.values()):
        return SemanticEvidence({})
    from codesift.embedding.static_model import load_table
    from codesift.errors import EmbeddingError

    if query_embedder is not None and minilm_pool(evidence):
        try:
            minilm = query_embedder.embed_query(query)
        except Exception as exc:  # a model that cannot load: the static query below
            log.warning("routing without MiniLM's neighbours: %s", exc)
        else:
            found = neighbour_semantic(minilm, evidence)  # a cancel propagates
            if found is not None:
                return found
    try:
        vector = load_table().embed([query])[0]
    except EmbeddingError as exc:
        log.warning("routing without topics: %s", exc)
        return SemanticEvidence({})
    return SemanticEvidence(semantic_scores(vector, evidence))


def route_sources(
    query: str,
    repositories: Sequence[SourceProfile],
    collections: Sequence[SourceProfile] = (),
    limit: int = 3,
    evidence: Mapping[str, RouteEvidence] | None = None,
    query_embedder: Embedder | None = None,
) -> RouteResult:
    """Score the two pools separately: repositories no term matched are dropped,
    collections are always listed (a zero-score one marked weak). With `evidence`
    (each repository's index, by name) the repositories are in the graded order
    (codesift.retrieval.routing), with the semantic score of those whose evidence
    has topics (the query's embedding against them: `query_embedder`'s, MiniLM,
    when every such index holds MiniLM's vectors, else the static model's)."""
    terms = route_terms(query)
    semantic = _semantic(query, evidence, query_embedder) if evidence else None
    return RouteResult(
        query=query,
        terms=terms,
        repositories=tuple(
            score_pool(
                terms,
                repositories,
                limit,
                keep_unmatched=False,
                evidence=evidence,
                semantic=semantic,
            )
        ),
        collections=tuple(score_pool(terms, collections, limit, keep_unmatched=True)),
    )
