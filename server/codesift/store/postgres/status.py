"""What the shared index holds of each repository a reader may read: counts,
languages, vectors and their models, when it was last written and the newest
commit of its history.

One statement per question, each under the search store's `readable` CTE
(search.py), so a repository the reader may not read is not counted, not named
and looks exactly like one that does not exist.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from codesift.store.postgres.jobs import KEY_LOCK_CLASS
from codesift.store.postgres.search import PostgresSearchStore

__all__ = ["RepoStatus", "repo_status"]


@dataclass(frozen=True, slots=True)
class RepoStatus:
    """One repository of the shared index.

    models: the embedding models of its vectors (comma-separated; None without
    vectors); indexed_at: when an indexing job last wrote it (Unix seconds; None
    before its first complete run); commit, commit_time, subject: the newest
    commit its git history holds (None outside git); state: "indexed" (the
    last job finished), "indexing" (a job runs now), "interrupted" (a job ended
    without finishing: its committed batches are in, the next job writes the
    rest) or "never" (no job wrote it yet); job_started_at: when the running or
    interrupted job started."""

    repo: str
    root: str
    files: int
    nodes: int
    edges: int
    chunks: int
    vectors: int
    models: str | None
    indexed_at: float | None
    commit: str | None
    commit_time: int | None
    subject: str | None
    languages: dict[str, int] = field(default_factory=dict)
    state: str = "indexed"
    job_started_at: float | None = None


def _state(indexed: float | None, job_started: float | None, running: bool) -> str:
    if running:
        return "indexing"
    if job_started is not None:
        return "interrupted"
    return "indexed" if indexed is not None else "never"


def repo_status(store: PostgresSearchStore) -> list[RepoStatus]:
    """The repositories `store`'s reader may read, in key order."""
    rows = store._rows(
        "SELECT r.key, o.root, o.embedding_model, extract(epoch FROM o.indexed_at),"
        " (SELECT count(*) FROM files f WHERE f.repo_id = r.id),"
        " (SELECT count(*) FROM nodes n WHERE n.repo_id = r.id),"
        " (SELECT count(*) FROM edges e WHERE e.repo_id = r.id)"
        " + (SELECT count(*) FROM nodes n WHERE n.repo_id = r.id AND n.parent_id IS NOT NULL),"
        " (SELECT count(*) FROM chunks c WHERE c.repo_id = r.id),"
        " (SELECT count(*) FROM chunk_vectors v WHERE v.repo_id = r.id),"
        " h.oid, h.time, h.subject, extract(epoch FROM o.job_started_at),"
        # A running job holds its key's advisory lock (jobs.key_lock).
        " EXISTS (SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted"
        " AND l.classid = %s AND l.objid = hashtext(r.key)::oid AND l.objsubid = 2)"
        " FROM readable r JOIN repos o ON o.id = r.id"
        " LEFT JOIN LATERAL (SELECT c.oid, c.time, c.subject FROM commits c"
        " WHERE c.repo_id = r.id ORDER BY c.time DESC, c.number DESC LIMIT 1) h ON true"
        " ORDER BY r.key",
        [KEY_LOCK_CLASS],
    )
    languages: dict[str, dict[str, int]] = {}
    for key, language, count in store._rows(
        "SELECT r.key, f.language, count(*) FROM files f JOIN readable r ON r.id = f.repo_id"
        " GROUP BY r.key, f.language ORDER BY r.key, count(*) DESC, f.language",
        [],
    ):
        languages.setdefault(str(key), {})[str(language)] = int(count)
    return [
        RepoStatus(
            repo=str(key),
            root=str(root or ""),
            files=int(files),
            nodes=int(nodes),
            edges=int(edges),
            chunks=int(chunks),
            vectors=int(vectors),
            models=None if models is None else str(models),
            indexed_at=None if indexed is None else float(indexed),
            commit=None if oid is None else str(oid),
            commit_time=None if when is None else int(when),
            subject=None if subject is None else str(subject),
            languages=languages.get(str(key), {}),
            state=_state(indexed, job_started, bool(running)),
            job_started_at=None if job_started is None else float(job_started),
        )
        for (
            key,
            root,
            models,
            indexed,
            files,
            nodes,
            edges,
            chunks,
            vectors,
            oid,
            when,
            subject,
            job_started,
            running,
        ) in rows
    ]
