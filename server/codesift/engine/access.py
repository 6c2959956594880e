"""How a process opens, updates and embeds an index that others may use too.

The policy every front end gets (store/locks.py has the locks):
- writers queue on the index's write lock: `update_index` waits for it, naming
  the holder through the listener;
- readers never wait for a writer (`open_for_reading`): when another process is
  writing, or this user cannot write the index, the index is read as it is, with
  a note; only an index that does not exist yet is waited for;
- an index this user cannot write is opened read-only;
- one embedder per index (the embed lock); vectors are written under the write
  lock a batch at a time, so an index run elsewhere waits one batch at most;
- `update_index` checks the file (PRAGMA quick_check) before writing to it, and
  names `codesift index --rebuild` for a damaged one.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

import apsw

from codesift.engine.detached import start_detached
from codesift.engine.freshness import freshness
from codesift.engine.listener import EngineListener
from codesift.engine.workspace import Workspace
from codesift.errors import CorruptIndexError, NotIndexedError, ReadOnlyIndexError
from codesift.store.call_targets import calls_owed
from codesift.store.database import index_writable, integrity_problem, move_aside, open_database
from codesift.store.locks import IndexLock, writer_lock
from codesift.store.reader import has_files, index_counts

if TYPE_CHECKING:  # imported where used: reading an up-to-date index needs neither
    from pathlib import Path

    from codesift.embedding import Embedder
    from codesift.indexer import IndexProgress, IndexSummary

__all__ = [
    "IndexReport",
    "after_index_phases",
    "damaged_index",
    "embed_lock",
    "fill_first_tier",
    "fill_missing_vectors",
    "open_existing",
    "open_for_reading",
    "run_index",
    "start_background_embedding",
    "summary_line",
    "update_index",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class IndexReport:
    """What an index run did, and where the old index went with `rebuild`."""

    summary: IndexSummary
    moved_aside: str | None = None


def damaged_index(ws: Workspace, problem: str) -> CorruptIndexError:
    return CorruptIndexError(
        f"{ws.db_path} is damaged ({problem}); run `codesift index --rebuild` to move it"
        " aside and build a new one"
    )


def summary_line(summary: IndexSummary, conn: apsw.Connection) -> str:
    """`indexed 3 file(s) in 0.4s (...); index: 8 files, ...` for people."""
    counts = index_counts(conn)
    return (
        f"indexed {summary.indexed} file(s) in {summary.seconds:.1f}s"
        f" ({summary.unchanged} unchanged, {summary.deleted} removed,"
        f" {len(summary.skipped)} skipped); index: {counts.files} files, {counts.nodes} nodes,"
        f" {counts.edges} edges, {counts.chunks} chunks"
    )


def open_existing(ws: Workspace) -> apsw.Connection:
    """The index as it is (never created, never updated): read-only when this user
    cannot write it; NotIndexedError when there is none."""
    if not ws.db_path.exists():
        raise NotIndexedError(f"no index at {ws.db_path}; run `codesift index` in {ws.root}")
    return open_database(ws.db_path, create=False, readonly=not index_writable(ws.db_path))


def run_index(
    ws: Workspace,
    conn: apsw.Connection,
    listener: EngineListener,
    *,
    quiet: bool = False,
    history: bool = True,
    after: bool = True,
    static_vectors: bool | None = None,
) -> IndexSummary:
    """One index run on `conn` (the caller holds the index's write lock), then,
    with `after`, the phases after it (`after_index_phases`); search never waits
    for them. `static_vectors`: whether the run computes the static vectors of its
    chunks with their rows (default: when the settings' static tier is on, whose
    vectors the caller computes next)."""
    if static_vectors is None:
        static_vectors = ws.settings.embedding.static_tier
    summary = _run_indexer(ws, conn, listener, quiet=quiet, static_vectors=static_vectors)
    if after:
        after_index_phases(ws, conn, listener, quiet=quiet, history=history, held=True)
    return summary


def after_index_phases(
    ws: Workspace,
    conn: apsw.Connection,
    listener: EngineListener,
    *,
    quiet: bool,
    held: bool,
    history: bool = True,
) -> None:
    """The call pass (engine/call_phase.py) and, with `history`, the git history
    pass: each now when it is small, else in the background (one detached process
    does both in turn). `held`: the caller holds the write lock."""
    from codesift.engine.call_phase import after_index as calls_after_index

    calls = calls_after_index(ws, conn, listener, quiet=quiet, held=held)
    if history and calls != "background":  # else the background pass goes on with it
        from codesift.engine.history import after_index

        after_index(ws, conn, listener, quiet=quiet, held=held)


def _run_indexer(
    ws: Workspace,
    conn: apsw.Connection,
    listener: EngineListener,
    *,
    quiet: bool,
    static_vectors: bool,
) -> IndexSummary:
    from codesift.indexer import Indexer  # its parsers, pygit2 and worker pool: ~100 ms

    # A large run leaves the calls' targets to the call pass (run_index runs it).
    indexer = Indexer(ws.root, ws.settings, conn, defer_calls=True, static_vectors=static_vectors)
    started = time.perf_counter()
    plan = indexer.plan()
    work = len(plan.to_index) + len(plan.deleted)
    if work == 0 or quiet:
        return indexer.apply(plan, started=started)
    listener.begin("indexing", work)

    def report(event: IndexProgress) -> None:
        if event.phase == "parsing":
            listener.advance(event.done, event.path)
        elif event.phase == "resolving":
            listener.phase("resolving calls")
        elif event.phase == "compacting":
            listener.phase("compacting the index")

    try:
        return indexer.apply(plan, report, started=started)
    finally:
        listener.end()


def _has_files(ws: Workspace) -> bool:
    conn = open_database(ws.db_path, create=False, readonly=True)
    try:
        return has_files(conn)
    finally:
        conn.close()


def open_for_reading(
    ws: Workspace,
    listener: EngineListener,
    *,
    update: bool = True,
    quiet: bool = False,
    purpose: str = "codesift: updating the index",
    static_vectors: bool | None = None,
) -> tuple[apsw.Connection, IndexSummary | None]:
    """A connection for reading, the index brought up to date first (`update`),
    and the summary of the run that built it when it did not exist before.
    `static_vectors`: as run_index's (False for a reader that uses no vectors: its
    answer does not wait for them; the next search that uses them computes them).

    Readers never wait for, or break, another process's writing: when another
    process is writing the index (or this user cannot write it), the index is
    read as it is, with a note. Only an index that does not exist yet is waited for."""
    if not update:
        return open_existing(ws), None
    db_path = ws.db_path
    if not index_writable(db_path):
        if not db_path.exists():
            raise ReadOnlyIndexError(
                f"cannot create an index for {ws.root}: {db_path.parent} is not writable;"
                " choose a writable place with the index.db_path setting"
            )
        listener.note(f"the index {db_path} is read-only for this user; searching it as it is")
        return open_database(db_path, readonly=True), None
    lock = IndexLock(db_path, "write", purpose=purpose)
    if not lock.try_acquire():
        if db_path.exists() and _has_files(ws):
            holder = lock.holder()
            who = f" ({holder})" if holder else ""
            listener.note(
                f"another codesift process{who} is updating the index; searching it as it is"
            )
            return open_database(db_path), None
        lock.acquire(
            on_wait=lambda holder: listener.waiting(holder, "the first search waits for the index")
        )
    try:
        conn = open_database(db_path)
        if has_files(conn):
            fresh_state = freshness(ws.root.resolve(), ws.settings.index, conn)
            owed = calls_owed(conn)
            if fresh_state.files and fresh_state.history and not owed:
                return conn, None  # nothing changed: the indexer is not even loaded
            if fresh_state.files:  # only the call or history passes have work
                after_index_phases(
                    ws, conn, listener, quiet=quiet, held=True, history=not fresh_state.history
                )
                return conn, None
        fresh = not has_files(conn)
        summary = run_index(ws, conn, listener, quiet=quiet, static_vectors=static_vectors)
    finally:
        lock.release()
    return conn, summary if fresh else None


def update_index(
    ws: Workspace,
    listener: EngineListener,
    *,
    rebuild: bool = False,
    quiet: bool = False,
    purpose: str = "codesift index: indexing",
    history: bool = True,
    after: bool = True,
    static_vectors: bool | None = None,
) -> tuple[apsw.Connection, IndexReport]:
    """Build or update the index; waits for the write lock (writers queue). With
    `rebuild`, the old index is moved aside (never deleted) first. Without
    `after`, the caller runs `after_index_phases` itself. The index is
    checked before it is written to (damage in pages this run would not touch
    must not pass for a healthy index)."""
    with writer_lock(
        ws.db_path,
        purpose,
        on_wait=lambda holder: listener.waiting(holder, "this run starts after it"),
    ):
        moved = move_aside(ws.db_path) if rebuild else None
        conn = open_database(ws.db_path)
        problem = None if rebuild else integrity_problem(ws.db_path)
        if problem is not None:
            conn.close()
            raise damaged_index(ws, problem)
        summary = run_index(
            ws,
            conn,
            listener,
            quiet=quiet,
            history=history,
            after=after,
            static_vectors=static_vectors,
        )
    return conn, IndexReport(summary, None if moved is None else str(moved))


def embed_lock(ws: Workspace, purpose: str) -> IndexLock | None:
    """The index's embed lock, taken; None when another process is embedding (one
    embedder per index, always) or this user cannot write the index."""
    lock = IndexLock(ws.db_path, "embed", purpose=purpose)
    try:
        return lock if lock.try_acquire() else None
    except ReadOnlyIndexError:
        return None


def fill_missing_vectors(
    ws: Workspace,
    conn: apsw.Connection,
    embedder: Embedder,
    listener: EngineListener,
    *,
    quiet: bool = False,
) -> int:
    """Compute the missing vectors (the caller holds the embed lock); each batch is
    written under the write lock. Raises EmbeddingError when the model cannot run."""
    from codesift.embedding import fill_vectors, vector_coverage

    layers = ws.settings.embedding.layers
    pending = vector_coverage(conn, layers, embedder.model_id)
    missing = pending.embeddable - pending.embedded
    if missing <= 0:
        return 0

    # The index file this fill writes (as the language server notices it): deleted
    # or replaced under a long fill, the fill stops instead of writing on into it.
    opened = _file_id(ws.db_path)

    def index_gone() -> bool:
        now = _file_id(ws.db_path)
        if now != opened:
            what = "deleted" if now is None else "replaced"
            listener.warning(f"the index {ws.db_path} was {what}; stopped computing vectors")
        return now != opened

    @contextlib.contextmanager
    def batch_guard() -> Iterator[bool]:
        if index_gone():  # (its folder too, perhaps: no lock file can be made there)
            yield False
            return
        with writer_lock(ws.db_path, "codesift: writing vectors") as acquired:
            yield acquired and not index_gone()

    if quiet:
        return fill_vectors(conn, embedder, layers=layers, batch_guard=batch_guard)
    listener.begin("embedding", missing)
    try:
        return fill_vectors(
            conn,
            embedder,
            layers=layers,
            batch_guard=batch_guard,
            progress=lambda done, total: listener.advance(done),
        )
    finally:
        listener.end()


def _file_id(path: Path) -> tuple[int, int] | None:
    """(device, inode) of the file at `path`, None when there is none."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_dev, stat.st_ino)


def fill_first_tier(
    ws: Workspace,
    conn: apsw.Connection,
    embedder: Embedder,
    listener: EngineListener | None = None,
    *,
    quiet: bool = True,
) -> int:
    """Give every chunk without a vector the first tier's vector (the static model:
    seconds for a whole index), which a later fill by `embedder` replaces; the
    caller holds the embed lock. 0 when `embedder` has no first tier. Progress
    goes to `listener` as the task `static vectors` unless `quiet`."""
    from codesift.embedding import fill_vectors

    first = embedder.first_tier
    if first is None:
        return 0

    @contextlib.contextmanager
    def batch_guard() -> Iterator[bool]:
        with writer_lock(ws.db_path, "codesift: writing vectors") as acquired:
            yield acquired

    begun = False

    def progress(done: int, total: int) -> None:
        nonlocal begun
        if listener is None or quiet:
            return
        if not begun:
            listener.begin("static vectors", total)
            begun = True
        listener.advance(done)

    try:
        return fill_vectors(
            conn,
            first,
            layers=ws.settings.embedding.layers,
            batch_guard=batch_guard,
            replace=False,
            progress=progress,
        )
    finally:
        if begun and listener is not None:
            listener.end()


def start_background_embedding(ws: Workspace) -> bool:
    """Compute the remaining vectors in a detached `codesift embed` process, unless
    another process is computing them already; True when one was started."""
    probe = embed_lock(ws, "codesift search: starting the background embedding")
    if probe is None:
        return False
    probe.release()  # the child takes it; a second starter's child just exits
    # Not quiet: its progress lines (every 30 s) and its summary go to the log.
    return start_detached(ws, "embed", ["--progress-every", "30"], "embed.log")
