"""Build and update the index: plan what changed, then apply it.

plan   discover the workspace's files and compare (size, mtime) with the files
       table: added, possibly changed, deleted.
apply  read, hash, parse and write each file; a file whose content hash is
       unchanged only gets its mtime refreshed. Git times are not computed here:
       search works as soon as the rows are written, and the history pass
       (history/update.py, run by engine/history.py or the live writer) times
       them afterwards. A bulk of files is prepared
       (read, parsed, chunked) in worker processes while this process, the one
       writer, inserts rows. Writes are batched into transactions that each
       contain whole files, so a run killed at any moment leaves a consistent
       index that the next run completes.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

import apsw

from codesift.config import Settings
from codesift.index_workers import StaleWorkerCode, note_workspace_root
from codesift.parsing.languages import detect_language, spec_for
from codesift.parsing.model import CallSites
from codesift.preparation import FileJob, PreparedFile, prepare_file, prepare_files
from codesift.store.call_targets import has_vectors, mark_calls_owed
from codesift.store.reader import file_stamps, indexed_paths_under
from codesift.store.writer import FileChange, IndexWriter
from codesift.worker_pool import PARALLEL_MIN_FILES, in_workers
from codesift.workspace import ContentSkip, SourceFile, discover_files, discover_paths

__all__ = [
    "DEFER_CALLS_MIN_FILES",
    "PARALLEL_MIN_FILES",
    "IndexPlan",
    "IndexProgress",
    "IndexSummary",
    "Indexer",
    "StaleWorkerCode",
]

log = logging.getLogger(__name__)

# A transaction is committed after this many files or seconds, whichever first.
BATCH_FILES = 200
BATCH_SECONDS = 1.0
# With `defer_calls`, a run that parses at least this many source files (of a
# language with a grammar) writes their calls edges without targets and leaves
# the resolution to the call pass (call_pass.py): search works that much sooner.
DEFER_CALLS_MIN_FILES = 200
# A run that (re)indexes at least this many files, and more than half of the
# index, is a bulk build: FTS merging is deferred to the end and the file compacted.
BULK_FILES = 500


@dataclass(frozen=True, slots=True)
class IndexProgress:
    phase: str  # "scanning", "parsing", "resolving", "done"
    done: int
    total: int
    path: str = ""


@dataclass(slots=True)
class IndexPlan:
    to_index: list[SourceFile] = field(default_factory=list)  # added or possibly changed
    deleted: list[str] = field(default_factory=list)
    unchanged: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    known: int = 0  # files in the index before this run
    forgotten: list[str] = field(default_factory=list)  # skipped files that are gone
    # Every file of the folder was planned (Indexer.plan), not a few paths.
    full: bool = False
    # Every file is parsed again, changed or not: another version of parsing made the
    # index (parsing/model.py, EXTRACTION_VERSION).
    reparse: bool = False


@dataclass(slots=True)
class IndexSummary:
    files: int = 0  # files in the index after the run
    indexed: int = 0  # files parsed and written in this run
    unchanged: int = 0
    deleted: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    nodes: int = 0  # rows written in this run
    edges: int = 0
    chunks: int = 0
    seconds: float = 0.0
    cancelled: bool = False


ProgressCallback = Callable[[IndexProgress], None]


def _code_files(plan: IndexPlan) -> int:
    """Files to parse that a grammar parses (the only ones with calls)."""
    return sum(
        1 for s in plan.to_index if spec_for(s.language or detect_language(s.path)) is not None
    )


def _job_size(job: FileJob) -> int:
    return job.size


def _normalize_rel_path(path: str) -> str:
    """`./a//b.py` or `a\\b.py` -> `a/b.py` (the form the files table uses)."""
    parts = [p for p in path.replace("\\", "/").split("/") if p not in ("", ".")]
    return "/".join(parts)


class Indexer:
    """Indexes one workspace folder into one database connection (the writer)."""

    def __init__(
        self,
        root: Path,
        settings: Settings,
        conn: apsw.Connection,
        *,
        defer_calls: bool = False,
        static_vectors: bool = False,
    ) -> None:
        self.root = root.resolve()
        # Whether the static vectors of the chunks come with the rows (the caller
        # fills the static tier right after the run; the fill then finds them
        # current): the workers build the texts, this process embeds them as it
        # writes, beside the workers' parsing (embedding/row_vectors.py).
        self._vector_layers: tuple[str, ...] = ()
        if static_vectors:
            from codesift.store.vectors import VECTOR_LAYERS  # numpy: only then

            layers = settings.embedding.layers
            self._vector_layers = tuple(layer for layer in layers if layer in VECTOR_LAYERS)
        # Whether a large run may leave the calls' targets to the call pass, which
        # the caller then runs (engine/call_phase.py, the live writer).
        self.defer_calls = defer_calls
        self.settings = settings
        self.conn = conn
        self.writer = IndexWriter(conn)
        note_workspace_root(self.root)
        self._package_dirs: dict[str, bool] = {}
        # Whether the folder's times come from git (None: not looked yet).
        self._in_git: bool | None = None
        # Nodes whose edges must be resolved: just written, or pointing at a node that
        # is gone.
        self._sources_to_resolve: set[int] = set()
        # Whether this run parses every file again, changed or not (the index was
        # made by another version of parsing).
        self._reparse = False
        # Whether this run leaves the calls to the call pass, and what it writes of
        # them meanwhile (parsing/model.py CallSites).
        self._deferring = False
        self._call_sites: CallSites = "resolve"

    # -- planning -----------------------------------------------------------------

    def plan(self) -> IndexPlan:
        discovery = discover_files(self.root, self.settings.index)
        known = self.writer.known_files()
        skipped_before = self.writer.skipped_files()
        plan = IndexPlan(known=len(known), full=True)
        plan.skipped = [(s.path, s.reason) for s in discovery.skipped]
        plan.reparse = not self.writer.extraction_current()
        if plan.reparse:
            log.info("the index was parsed by another version of codesift: parsing every file")
        seen: set[str] = set()
        for source in discovery.files:
            seen.add(source.path)
            stamp = known.get(source.path)
            skipped = skipped_before.get(source.path)
            if stamp is not None and stamp == (source.size, source.mtime_ns) and not plan.reparse:
                plan.unchanged += 1
            elif skipped is not None and skipped[:2] == (source.size, source.mtime_ns):
                plan.skipped.append((source.path, skipped[2]))  # read before, unchanged
            else:
                plan.to_index.append(source)
        plan.deleted = sorted(set(known) - seen)
        plan.forgotten = sorted(set(skipped_before) - seen)
        return plan

    def plan_paths(self, paths: Iterable[str]) -> IndexPlan:
        """Plan for specific relative paths (from a watcher): index those that are
        discoverable now, delete those that are gone or no longer indexable."""
        wanted = sorted({_normalize_rel_path(p) for p in paths} - {""})
        discovery = discover_paths(self.root, self.settings.index, wanted) if wanted else None
        by_path = {f.path: f for f in discovery.files} if discovery else {}
        plan = IndexPlan()
        for path in wanted:
            source = by_path.get(path)
            if source is not None:
                plan.to_index.append(source)
            elif self.writer.file_id(path) is not None:
                plan.deleted.append(path)
            else:
                plan.forgotten.append(path)
        return plan

    def plan_changes(self, paths: Iterable[str]) -> IndexPlan:
        """`plan_paths` without the files whose size and mtime already match the
        index (indexed by an earlier batch: the editor and the watcher both report
        one save). A path that is gone and was a folder takes its files with it."""
        plan = self.plan_paths(paths)
        for gone in list(plan.forgotten):
            under = indexed_paths_under(self.conn, gone)
            plan.deleted.extend(p for p in under if p not in plan.deleted)
        if not plan.to_index:
            return plan
        stamps = file_stamps(self.conn, [s.path for s in plan.to_index])
        kept = [s for s in plan.to_index if stamps.get(s.path) != (s.size, s.mtime_ns)]
        plan.unchanged += len(plan.to_index) - len(kept)
        plan.to_index = kept
        return plan

    # -- applying -----------------------------------------------------------------

    def run(
        self,
        progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
    ) -> IndexSummary:
        started = time.perf_counter()
        if progress:
            progress(IndexProgress("scanning", 0, 0))
        plan = self.plan()
        self._in_git = None  # a full scan looks again: the folder may have become a repository
        return self.apply(plan, progress, cancel, started=started)

    def apply(
        self,
        plan: IndexPlan,
        progress: ProgressCallback | None = None,
        cancel: threading.Event | None = None,
        *,
        started: float | None = None,
    ) -> IndexSummary:
        started = time.perf_counter() if started is None else started
        if plan.full and not plan.reparse:
            # A new index, or one this version parsed: say so before writing, so that
            # a run killed halfway is not taken for another version's.
            with self.conn:
                self.writer.record_extraction()
        self._reparse = plan.reparse
        self._deferring = self.defer_calls and _code_files(plan) >= DEFER_CALLS_MIN_FILES
        if self._deferring:
            # Without vectors, no call sites at all (the summaries gain their calls in
            # the pass); with vectors, their names: the summaries, and so their
            # vectors (MiniLM's, minutes of work), keep their text meanwhile.
            self._call_sites = "names" if has_vectors(self.conn) else "later"
            with self.conn:  # before any row: a run killed halfway still owes the pass
                mark_calls_owed(self.conn)
        try:
            summary = self._apply(plan, progress, cancel, started)
        finally:
            self._reparse = False
            self._deferring = False
            self._call_sites = "resolve"
        if plan.full and plan.reparse and not summary.cancelled:
            with self.conn:  # every file is now parsed by this version
                self.writer.record_extraction()
        return summary

    def _apply(
        self,
        plan: IndexPlan,
        progress: ProgressCallback | None,
        cancel: threading.Event | None,
        started: float,
    ) -> IndexSummary:
        summary = IndexSummary(unchanged=plan.unchanged, skipped=list(plan.skipped))
        touched: set[str] = set()
        total = len(plan.to_index) + len(plan.deleted)
        bulk = len(plan.to_index) >= BULK_FILES and len(plan.to_index) > plan.known // 2
        # A run that was killed or failed left edges unresolved and maybe FTS merging
        # off: the marker it left behind makes this run finish its work.
        interrupted = self.writer.run_marker()
        full_resolve = bulk or interrupted or len(plan.to_index) > 2000
        if not bulk and interrupted:
            self.writer.set_fts_automerge(True)
        if not plan.to_index and not plan.deleted and not plan.forgotten and not interrupted:
            return self._finish(
                summary,
                set(),
                progress,
                bulk=False,
                full_resolve=False,
                total=0,
                started=started,
            )
        if bulk:
            with self.conn:  # the mark makes a killed run's successor merge again
                self.writer.set_run_marker(True)
                self.writer.set_fts_automerge(False)

        try:
            self._apply_batches(plan, summary, touched, progress, cancel, total)
        finally:
            if bulk:
                self.writer.set_fts_automerge(True)

        return self._finish(
            summary,
            touched,
            progress,
            bulk=bulk,
            full_resolve=full_resolve,
            total=total,
            started=started,
        )

    def _apply_batches(
        self,
        plan: IndexPlan,
        summary: IndexSummary,
        touched: set[str],
        progress: ProgressCallback | None,
        cancel: threading.Event | None,
        total: int,
    ) -> None:
        conn = self.conn
        done = 0
        pending_deletes = list(plan.deleted)
        with self._prepared_files(plan.to_index) as prepared:
            # Asked once the workers have their jobs (pygit2's import and the
            # repository's discovery then overlap their start): the rows of a folder
            # outside git take their times from the files.
            self._settle_times(plan)
            results = iter(prepared)
            exhausted = False
            while pending_deletes or plan.forgotten or not exhausted:
                if cancel is not None and cancel.is_set():
                    summary.cancelled = True
                    break
                batch_started = time.perf_counter()
                with conn:
                    self.writer.set_run_marker(True)
                    while plan.forgotten:
                        self.writer.forget_skipped(plan.forgotten.pop())
                    while pending_deletes:
                        path = pending_deletes.pop()
                        self._note_change(self.writer.delete_file(path), touched)
                        summary.deleted += 1
                        done += 1
                    count = 0
                    while count < BATCH_FILES:
                        item = next(results, None)
                        if item is None:
                            exhausted = True
                            break
                        source, result = item
                        count += 1
                        done += 1
                        self._write_one(source, result, summary, touched)
                        if progress:
                            progress(IndexProgress("parsing", done, total, source.path))
                        if time.perf_counter() - batch_started > BATCH_SECONDS:
                            break
                        if cancel is not None and cancel.is_set():
                            break

    def _settle_times(self, plan: IndexPlan) -> None:
        if plan.to_index and self._in_git is None:
            from codesift.history.state import in_git_history  # pygit2: ~60 ms

            self._in_git = in_git_history(self.root)
        self.writer.times_from_mtime = self._in_git is False

    @contextmanager
    def _prepared_files(
        self, sources: list[SourceFile]
    ) -> Iterator[Iterator[tuple[SourceFile, PreparedFile | ContentSkip]]]:
        """Prepared files in order: in worker processes for a bulk of files (parsing
        is CPU-bound and the writer only inserts rows), else in this process."""
        jobs = [self.job_for(source) for source in sources]
        workers = self.settings.index.workers
        with in_workers(
            jobs, prepare_file, prepare_files, workers, "files to prepare", size=_job_size
        ) as results:
            yield zip(sources, results, strict=False)

    def job_for(self, source: SourceFile) -> FileJob:
        language = source.language or detect_language(source.path)
        module_path = self._python_module_path(source.path) if language == "python" else None
        return FileJob(
            abs_path=str(source.abs_path),
            path=source.path,
            language=language,
            size=source.size,
            mtime_ns=source.mtime_ns,
            module_path=module_path,
            settings=self.settings.index,
            call_sites=self._call_sites,
            vector_layers=self._vector_layers,
            vector_max_tokens=self.settings.embedding.max_tokens,
        )

    def _finish(
        self,
        summary: IndexSummary,
        touched: set[str],
        progress: ProgressCallback | None,
        *,
        bulk: bool,
        full_resolve: bool,
        total: int,
        started: float,
    ) -> IndexSummary:
        conn = self.conn
        done = total
        if progress:
            progress(IndexProgress("resolving", done, total))
        with conn:
            if self._deferring:
                pass  # the call pass resolves every edge once the targets are in
            elif full_resolve:
                self.writer.resolve_edges(None)
            elif touched or self._sources_to_resolve:
                self.writer.resolve_edges(touched, self._sources_to_resolve)
            self._sources_to_resolve = set()
            if self.writer.run_marker():  # a run with nothing to do writes nothing
                self.writer.set_run_marker(False)
            if total or full_resolve:
                self.writer.record_update(str(self.root))
        if bulk:
            # One FTS merge, and a VACUUM for the pages the run's deletes and updates
            # left half full.
            self.writer.compact()
        summary.files = self.writer.file_count()
        summary.seconds = time.perf_counter() - started
        if progress:
            progress(IndexProgress("done", done, total))
        return summary

    def _write_one(
        self,
        source: SourceFile,
        result: PreparedFile | ContentSkip,
        summary: IndexSummary,
        touched: set[str],
    ) -> None:
        if isinstance(result, ContentSkip):
            summary.skipped.append((source.path, result.reason))
            if result.reason != "vanished":
                self.writer.record_skipped(source.path, source.size, source.mtime_ns, result.reason)
            if self.writer.file_id(source.path) is not None:
                self._note_change(self.writer.delete_file(source.path), touched)
                summary.deleted += 1
            return
        self.writer.forget_skipped(source.path)
        if not self._reparse and self.writer.content_hash(source.path) == result.meta.content_hash:
            self.writer.touch_file(source.path, source.size, source.mtime_ns)
            summary.unchanged += 1
            return
        rows = result.rows
        if rows.embedding_ids:  # their static vectors, stored with them
            from codesift.embedding.row_vectors import row_vectors

            model, vectors = row_vectors(rows.embedding_ids, self.settings.embedding.max_tokens)
            rows = replace(rows, vector_model=model, vectors=vectors)
        change = self.writer.replace_file(result.meta, rows)
        self._note_change(change, touched)
        # The new edges of this file resolve by themselves (through their sources),
        # without revisiting every edge elsewhere that shares a callee name.
        self._sources_to_resolve.update(change.node_ids)
        summary.indexed += 1
        summary.nodes += change.nodes
        summary.edges += change.edges
        summary.chunks += change.chunks

    def _note_change(self, change: FileChange, touched: set[str]) -> None:
        touched |= change.touched_names
        self._sources_to_resolve |= change.orphaned_sources

    def _is_package_dir(self, rel_dir: str) -> bool:
        cached = self._package_dirs.get(rel_dir)
        if cached is None:
            cached = (self.root / rel_dir / "__init__.py").is_file()
            self._package_dirs[rel_dir] = cached
        return cached

    def _python_module_path(self, rel_path: str) -> str:
        """Dotted module path: the file's name prefixed by the enclosing packages
        (folders with an __init__.py), so `src/pkg/mod.py` is `pkg.mod`."""
        parts = rel_path.split("/")
        stem = parts[-1].rsplit(".", 1)[0]
        dirs = parts[:-1]
        keep: list[str] = []
        for i in range(len(dirs), 0, -1):
            if not self._is_package_dir("/".join(dirs[:i])):
                break
            keep.insert(0, dirs[i - 1])
        if stem != "__init__":
            keep.append(stem)
        return ".".join(keep) if keep else stem
