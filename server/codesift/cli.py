"""The `codesift` command: index, search, symbols, callers, callees, status, serve.

Results go to stdout; progress bars, warnings and logs go to stderr. `search`,
`symbols`, `callers` and `callees` bring the index up to date first (building
it on first use), unless `--no-update` is given.
"""

from __future__ import annotations

import argparse
import contextlib
import errno
import json
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import apsw
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from codesift import __version__
from codesift.config import Settings, load_settings
from codesift.console_progress import DEFAULT_INTERVAL_SECONDS, ProgressLines
from codesift.embedding import Embedder, fill_vectors, vector_coverage
from codesift.embedding.model import cache_dir_from, model_dir_path
from codesift.embedding.query_model import QUERY_MODEL_FILE, recent_build_failure
from codesift.errors import (
    CodesiftError,
    CorruptIndexError,
    EmbeddingError,
    QueryError,
    ReadOnlyIndexError,
    WorkspaceError,
)
from codesift.history.records import ChangeInfo, node_history, nodes_in_time
from codesift.history.timespec import TimeFilter, time_filter
from codesift.history.update import history_status
from codesift.indexer import Indexer, IndexProgress, IndexSummary
from codesift.retrieval import BROAD_LAYERS, Searcher, SearchRequest, SearchResponse
from codesift.retrieval.rerank import RerankerLoad, load_reranker
from codesift.store.database import (
    index_writable,
    integrity_problem,
    move_aside,
    open_database,
    scalar,
)
from codesift.store.locks import IndexLock, writer_lock
from codesift.store.reader import (
    NodeRow,
    edges_from,
    edges_to,
    index_counts,
    node_rows,
    nodes_named,
)

__all__ = ["main"]

log = logging.getLogger("codesift")

EXIT_OK = 0
EXIT_INTERNAL = 1  # an unexpected failure (a bug): one line, details with -vv
EXIT_ERROR = 2  # a codesift error: bad input, an unusable index or workspace, a full disk
EXIT_INTERRUPTED = 130


# -- workspace and index location ----------------------------------------------------


def find_root(start: Path) -> Path:
    """The workspace root for `start`: the nearest folder holding a codesift index,
    else the enclosing git work tree, else `start` itself."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / ".codesift" / "index.db").is_file():
            return folder
    try:
        out = subprocess.run(
            ["git", "-C", str(start), "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        if out.returncode == 0 and out.stdout.strip():
            return Path(out.stdout.strip())
    except (OSError, subprocess.SubprocessError):
        pass
    return start


def existing_folder(raw: str, option: str) -> Path:
    """`raw` as an absolute folder; WorkspaceError when it does not exist or is a file
    (a mistyped --root must not create an empty index somewhere)."""
    path = Path(os.path.expanduser(raw))
    if not path.exists():
        raise WorkspaceError(f"{option} {raw}: no such folder")
    if not path.is_dir():
        raise WorkspaceError(f"{option} {raw} is not a folder")
    return path.resolve()


def _root_of(args: argparse.Namespace) -> Path:
    """The workspace root a command works on: --root, else `find_root` from here."""
    if getattr(args, "root", None):
        return existing_folder(args.root, "--root")
    return find_root(Path.cwd())


def db_path_for(root: Path, settings: Settings) -> Path:
    path = Path(os.path.expanduser(settings.index.db_path))
    return path if path.is_absolute() else root / path


def _stderr() -> Console:
    return Console(stderr=True, highlight=False)


def _say(message: str) -> None:
    """A dim note on stderr (never stdout: that is the command's output)."""
    _stderr().print(f"[dim]{escape(message)}[/]", soft_wrap=True)


def _waiting_note(what: str) -> Callable[[str], None]:
    def note(holder: str) -> None:
        who = f" ({holder})" if holder else ""
        _say(f"waiting for another codesift process{who} to finish writing the index; {what}")

    return note


def _run_index(
    root: Path,
    settings: Settings,
    conn: apsw.Connection,
    *,
    quiet: bool,
    progress_every: float = DEFAULT_INTERVAL_SECONDS,
) -> IndexSummary:
    """One index run (the caller holds the index's write lock). Progress: a bar on
    a terminal, a line every `progress_every` seconds elsewhere."""
    console = _stderr()
    indexer = Indexer(root, settings, conn)
    started = time.perf_counter()
    plan = indexer.plan()
    work = len(plan.to_index) + len(plan.deleted)
    if work == 0 or quiet:
        return indexer.apply(plan, started=started)
    if not console.is_terminal:
        lines = ProgressLines(sys.stderr, "indexing", "files", interval=progress_every)

        def report_line(event: IndexProgress) -> None:
            if event.phase == "parsing":
                lines.update(event.done, event.total)

        summary = indexer.apply(plan, report_line, started=started)
        lines.finish()
        return summary
    if work < 20:
        return indexer.apply(plan, started=started)
    columns = (
        TextColumn("[bold]codesift[/] {task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("[dim]{task.fields[path]}"),
    )
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("indexing", total=work, path="")

        def report(event: IndexProgress) -> None:
            if event.phase == "parsing":
                progress.update(task, completed=event.done, path=event.path[-50:])
            elif event.phase == "resolving":
                progress.update(task, description="resolving calls", path="")

        return indexer.apply(plan, report, started=started)


def _summary_line(summary: IndexSummary, conn: apsw.Connection) -> str:
    counts = index_counts(conn)
    return (
        f"indexed {summary.indexed} file(s) in {summary.seconds:.1f}s"
        f" ({summary.unchanged} unchanged, {summary.deleted} removed,"
        f" {len(summary.skipped)} skipped); index: {counts.files} files, {counts.nodes} nodes,"
        f" {counts.edges} edges, {counts.chunks} chunks"
    )


def _prepare(args: argparse.Namespace) -> tuple[Path, Settings, apsw.Connection]:
    """Root, settings and a connection for a reading command, with the index brought
    up to date first unless --no-update. Readers never wait for, or break, another
    process's writing: when another process is writing the index (or this user
    cannot write it), the index is searched as it is, and a note says so. Only an
    index that does not exist yet is waited for."""
    root = _root_of(args)
    settings = load_settings(root)
    db_path = db_path_for(root, settings)
    args.db_path = db_path
    quiet = bool(args.json)
    if getattr(args, "no_update", False):
        return root, settings, _open_existing(db_path)
    if not index_writable(db_path):
        if not db_path.exists():
            raise ReadOnlyIndexError(
                f"cannot create an index for {root}: {db_path.parent} is not writable; choose"
                " a writable place with the index.db_path setting"
            )
        _say(f"the index {db_path} is read-only for this user; searching it as it is")
        return root, settings, open_database(db_path, readonly=True)
    lock = IndexLock(db_path, "write", purpose=f"codesift {args.command}: updating the index")
    if not lock.try_acquire():
        if db_path.exists() and _has_files(db_path):
            holder = lock.holder()
            who = f" ({holder})" if holder else ""
            _say(f"another codesift process{who} is updating the index; searching it as it is")
            return root, settings, open_database(db_path)
        lock.acquire(on_wait=_waiting_note("the first search waits for the index"))
    try:
        conn = open_database(db_path)
        fresh = scalar(conn, "SELECT count(*) FROM files") == 0
        summary = _run_index(root, settings, conn, quiet=quiet)
    finally:
        lock.release()
    if fresh and not quiet:
        _say(_summary_line(summary, conn))
    return root, settings, conn


def _open_existing(db_path: Path) -> apsw.Connection:
    """The index as it is: read-only when this user cannot write it."""
    return open_database(db_path, create=False, readonly=not index_writable(db_path))


def _has_files(db_path: Path) -> bool:
    conn = open_database(db_path, create=False, readonly=True)
    try:
        return scalar(conn, "SELECT 1 FROM files LIMIT 1") is not None
    finally:
        conn.close()


# -- vectors -------------------------------------------------------------------------

# A search computes this many missing vectors itself before answering; more are
# left to a background `codesift embed` so the answer is not delayed.
FOREGROUND_EMBED_LIMIT = 256


def _embedder(settings: Settings) -> Embedder:
    return Embedder(
        cache_dir_from(settings.embedding.cache_dir),
        max_tokens=settings.embedding.max_tokens,
        batch_size=settings.embedding.batch_size,
        quantized_queries=settings.embedding.quantized_queries,
    )


def _embed_lock(db_path: Path, purpose: str) -> IndexLock | None:
    """The index's embed lock, taken; None when another process is embedding (one
    embedder per index, always) or this user cannot write the index."""
    lock = IndexLock(db_path, "embed", purpose=purpose)
    try:
        return lock if lock.try_acquire() else None
    except ReadOnlyIndexError:
        return None


def _fill_vectors(
    conn: apsw.Connection,
    db_path: Path,
    embedder: Embedder,
    settings: Settings,
    *,
    quiet: bool,
    progress_every: float = DEFAULT_INTERVAL_SECONDS,
) -> int:
    """Compute the missing vectors (the caller holds the embed lock); each batch is
    written under the write lock, so an index run elsewhere waits one batch at most.
    Progress: a bar on a terminal, a line every `progress_every` seconds elsewhere."""
    console = _stderr()
    layers = settings.embedding.layers
    pending = vector_coverage(conn, layers)
    missing = pending.embeddable - pending.embedded
    if missing <= 0:
        return 0

    @contextlib.contextmanager
    def batch_guard() -> Iterator[bool]:
        with writer_lock(db_path, "codesift: writing vectors") as acquired:
            yield acquired

    if quiet:
        return fill_vectors(conn, embedder, layers=layers, batch_guard=batch_guard)
    if not console.is_terminal:
        lines = ProgressLines(sys.stderr, "embedding", "chunks", interval=progress_every)
        embedded = fill_vectors(
            conn, embedder, layers=layers, batch_guard=batch_guard, progress=lines.update
        )
        lines.finish()
        return embedded
    columns = (
        TextColumn("[bold]codesift[/] embedding"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("embedding", total=missing)
        return fill_vectors(
            conn,
            embedder,
            layers=layers,
            batch_guard=batch_guard,
            progress=lambda done, total: progress.update(task, completed=done),
        )


def _start_background_embedding(root: Path, db_path: Path) -> bool:
    """Compute the remaining vectors in a detached `codesift embed` process, unless
    another process is computing them already; True when one was started."""
    probe = _embed_lock(db_path, "codesift search: starting the background embedding")
    if probe is None:
        return False
    probe.release()  # the child takes it; a second starter's child just exits
    log_path = db_path.with_name("embed.log")
    try:
        with log_path.open("ab") as log_file:
            subprocess.Popen(
                [sys.executable, "-m", "codesift.cli", "embed", "--root", str(root), "--quiet"],
                stdin=subprocess.DEVNULL,
                stdout=log_file,
                stderr=log_file,
                start_new_session=True,
                cwd=root,
            )
    except OSError as exc:
        log.warning("cannot start background embedding: %s", exc)
        return False
    return True


def _rerank_load(settings: Settings) -> RerankerLoad:
    return load_reranker(settings.rerank, cache_dir_from(settings.embedding.cache_dir))


def _searcher(
    root: Path, settings: Settings, conn: apsw.Connection, args: argparse.Namespace
) -> Searcher:
    """A searcher with the vector stream when embeddings are on and vectors exist
    (missing vectors are computed now (a few) or in the background (many)), and the
    rerank stage when it is on and its model loads."""
    rerank = _rerank_load(settings)
    if rerank.warning:
        _stderr().print(f"[yellow]warning:[/] {escape(rerank.warning)}")

    def searcher(embedder: Embedder | None) -> Searcher:
        return Searcher(
            conn,
            settings.search,
            embedder,
            reranker=rerank.reranker,
            rerank_settings=settings.rerank,
        )

    if not settings.embedding.enabled or getattr(args, "no_embed", False):
        return searcher(None)
    db_path: Path = args.db_path
    embedder = _embedder(settings)
    layers = settings.embedding.layers
    coverage = vector_coverage(conn, layers)
    missing = coverage.embeddable - coverage.embedded
    if 0 < missing <= FOREGROUND_EMBED_LIMIT and index_writable(db_path):
        lock = _embed_lock(db_path, "codesift search: computing a few vectors")
        if lock is not None:  # else another process is computing them: use what exists
            # The query encoder is built once per model folder (~3 s, in a child
            # process): alongside the fill rather than after it. Joined before the
            # search, so that no thread is inside onnxruntime when the process exits.
            encoder = threading.Thread(target=embedder.query_encoder, name="query-encoder")
            encoder.start()
            try:
                _fill_vectors(conn, db_path, embedder, settings, quiet=True)
            except EmbeddingError as exc:
                _stderr().print(
                    f"[yellow]warning:[/] {escape(str(exc))}; searching without vectors"
                )
                return searcher(None)
            finally:
                lock.release()
                encoder.join()
            coverage = vector_coverage(conn, layers)
    elif missing > FOREGROUND_EMBED_LIMIT and not args.no_update and index_writable(db_path):
        started = _start_background_embedding(root, db_path)
        if not args.json:
            where = "in the background" if started else "by another codesift process"
            _say(
                f"vectors: {coverage.ratio:.0%} of {coverage.embeddable} chunks; the rest are"
                f" being computed {where} (codesift status shows how far)"
            )
    # The query is embedded only when there are vectors to compare it with (the
    # query encoder then loads on this thread, during the search).
    return searcher(embedder if coverage.embedded else None)


# -- commands ------------------------------------------------------------------------


def cmd_index(args: argparse.Namespace) -> int:
    """Build or update the index; writers queue on the index's write lock."""
    if args.path and args.root:
        raise WorkspaceError("give the folder once: as PATH or as --root")
    raw = args.path or args.root
    root = existing_folder(raw, "index") if raw else Path.cwd().resolve()
    settings = load_settings(root)
    db_path = db_path_for(root, settings)
    args.db_path = db_path
    quiet = args.quiet
    note = (lambda _holder: None) if quiet else _waiting_note("this run starts after it")
    with writer_lock(db_path, "codesift index: indexing", on_wait=note):
        if args.rebuild:
            moved = move_aside(db_path)
            if moved is not None:
                _stderr().print(f"moved the old index aside to {moved}")
        conn = open_database(db_path)
        # Damage in pages this run would not touch must not pass for a healthy index
        # (~0.4 s for a 100 MB index: `codesift index` is asked for, not automatic).
        problem = None if args.rebuild else integrity_problem(db_path)
        if problem is not None:
            raise CorruptIndexError(
                f"{db_path} is damaged ({problem}); run `codesift index --rebuild` to move it"
                " aside and build a new one"
            )
        summary = _run_index(root, settings, conn, quiet=quiet, progress_every=args.progress_every)
    embedded = 0
    embedding = "off"
    if settings.embedding.enabled and not args.no_embed:
        lock = _embed_lock(db_path, "codesift index: embedding")
        if lock is None:
            embedding = "elsewhere"
            if not quiet:
                holder = IndexLock(db_path, "embed").holder()
                who = f" ({holder})" if holder else ""
                _say(f"another codesift process{who} is computing this index's vectors")
        else:
            embedding = "done"
            try:
                embedded = _fill_vectors(
                    conn,
                    db_path,
                    _embedder(settings),
                    settings,
                    quiet=quiet,
                    progress_every=args.progress_every,
                )
            except EmbeddingError as exc:
                embedding = "failed"
                _stderr().print(f"[yellow]warning:[/] {escape(str(exc))}; index has no vectors")
            finally:
                lock.release()
    if args.json:
        print(
            json.dumps(
                {
                    **asdict(summary),
                    "embedded": embedded,
                    "embedding": embedding,
                    "root": str(root),
                    "database": str(db_path),
                }
            )
        )
    elif not quiet:
        print(_summary_line(summary, conn))
    return EXIT_OK


def cmd_embed(args: argparse.Namespace) -> int:
    """Compute missing vectors; one embedder per index at a time (the embed lock):
    a second one exits at once, saying who is embedding."""
    root = _root_of(args)
    settings = load_settings(root)
    db_path = db_path_for(root, settings)
    args.db_path = db_path
    conn = open_database(db_path, create=False)
    lock = _embed_lock(db_path, "codesift embed")
    if lock is None:
        holder = IndexLock(db_path, "embed").holder()
        if args.json:
            print(json.dumps({"embedded": 0, "running_elsewhere": True, "holder": holder}))
        elif not args.quiet:
            who = f" ({holder})" if holder else ""
            print(f"another codesift process{who} is computing this index's vectors")
        return EXIT_OK
    try:
        embedded = _fill_vectors(
            conn,
            db_path,
            _embedder(settings),
            settings,
            quiet=args.quiet or args.json,
            progress_every=args.progress_every,
        )
    finally:
        lock.release()
    coverage = vector_coverage(conn, settings.embedding.layers)
    if args.json:
        print(
            json.dumps(
                {
                    "embedded": embedded,
                    "running_elsewhere": False,
                    "vectors": {"embedded": coverage.embedded, "embeddable": coverage.embeddable},
                }
            )
        )
    elif not args.quiet:
        print(f"embedded {embedded} chunks; vectors cover {coverage.ratio:.0%} of the index")
    return EXIT_OK


def _response_json(response: SearchResponse) -> dict[str, Any]:
    data = asdict(response)
    for result in data["results"]:
        result["provenance"] = [dict(h) for h in result["provenance"]]
    return data


def _time_filter(args: argparse.Namespace, root: Path) -> TimeFilter:
    """--as-of/--since/--until as Unix times (tags and commits resolved in `root`)."""
    return time_filter(args.as_of, args.since, args.until, root=root)


def _history_text(info: ChangeInfo | None) -> str:
    """`changed 2024-05-01 (abc1234 subject)` for human output."""
    if info is None or info.changed is None:
        return ""
    if info.source == "uncommitted":
        return "changed: uncommitted"
    if info.source == "mtime":
        return f"modified {info.changed[:10]}"
    subject = (info.subject or "")[:60]
    return f"changed {info.changed[:10]} ({(info.commit or '')[:7]} {subject})"


# How `search --graph` names each edge for people (the JSON keeps relation and kind).
GRAPH_LABELS = {
    "parent": "↑ contained in",
    "callee": "→ calls",
    "caller": "← called by",
    "base": "▷ inherits",
    "subclass": "◁ inherited by",
    "imports": "→ imports",
    "imported_by": "← imported by",
}


def cmd_search(args: argparse.Namespace) -> int:
    root = _root_of(args)
    times = _time_filter(args, root)  # a malformed time fails before any indexing
    settings = load_settings(root)
    request = SearchRequest(
        query=args.query,
        top_k=settings.search.top_k if args.top_k is None else args.top_k,
        layers=tuple(args.layer or ()) or BROAD_LAYERS,
        languages=tuple(args.lang or ()),
        paths=tuple(args.path or ()),
        snippet_chars=(
            settings.search.snippet_chars if args.snippet_chars is None else args.snippet_chars
        ),
        max_tokens=args.max_tokens,
        as_of=times.as_of,
        since=times.since,
        until=times.until,
        include_graph=args.graph,
    )
    request.validated(root=root)  # a bad option fails before any indexing
    root, settings, conn = _prepare(args)
    response = _searcher(root, settings, conn, args).search(request)
    if args.json:
        print(json.dumps(_response_json(response), ensure_ascii=False))
        return EXIT_OK
    console = Console(highlight=False, soft_wrap=True)
    if not response.results:
        console.print(f"no results for {escape(args.query)!r}")
        return EXIT_OK
    for i, result in enumerate(response.results, start=1):
        found_by = " ".join(f"{h.stream}#{h.rank}" for h in result.provenance)
        console.print(
            f"[bold]{i:>2}[/] [cyan]{escape(result.path)}:{result.start_line}-{result.end_line}[/]"
            f"  [green]{escape(result.kind)}[/] [bold]{escape(result.qualified_name)}[/]"
            f"  [dim]{result.layer} · {found_by} · {result.score:.4f}[/]"
        )
        when = _history_text(result.history)
        if when:
            console.print(f"     [dim]{escape(when)}[/]")
        for line in result.snippet.split("\n"):
            console.print(f"     [dim]│[/] {escape(line)}")
        if result.truncated:
            console.print(f"     [dim]│ … (from line {result.snippet_start_line})[/]")
        for edge in result.graph:
            node = edge.node
            console.print(
                f"     [magenta]{GRAPH_LABELS.get(edge.relation, edge.relation)}[/]"
                f" [dim]({edge.kind}, line {edge.line})[/] [green]{escape(node.kind)}[/]"
                f" [bold]{escape(node.qualified_name)}[/]"
                f"  [cyan]{escape(node.path)}:{node.start_line}-{node.end_line}[/]"
            )
    console.print(f"[dim]{len(response.results)} results in {response.took_ms:.0f} ms[/]")
    return EXIT_OK


def _node_json(node: NodeRow, times: dict[int, ChangeInfo] | None = None) -> dict[str, Any]:
    data = asdict(node)
    info = (times or {}).get(node.id)
    data["history"] = asdict(info) if info is not None else None
    return data


def _print_node(
    console: Console,
    node: NodeRow,
    prefix: str = "",
    times: dict[int, ChangeInfo] | None = None,
) -> None:
    when = _history_text((times or {}).get(node.id))
    console.print(
        f"{prefix}[cyan]{escape(node.path)}:{node.start_line}-{node.end_line}[/]  "
        f"[green]{node.kind}[/] [bold]{escape(node.qualified_name)}[/]  "
        f"[dim]{escape(node.signature[:120])}[/]" + (f"  [dim]{escape(when)}[/]" if when else "")
    )


def cmd_symbols(args: argparse.Namespace) -> int:
    root = _root_of(args)
    if args.limit < 1 or args.limit > 200:
        raise QueryError(f"--limit must be between 1 and 200, got {args.limit}")
    times = _time_filter(args, root)
    _, settings, conn = _prepare(args)
    exact = nodes_named(conn, args.name, limit=args.limit, include_modules=True, times=times)
    fuzzy: list[NodeRow] = []
    if len(exact) < args.limit:
        response = Searcher(conn, settings.search).search(
            SearchRequest(
                query=args.name,
                top_k=min(200, args.limit),
                layers=("ast",),
                as_of=times.as_of,
                since=times.since,
                until=times.until,
            )
        )
        seen = {n.id for n in exact}
        ids = [r.node_id for r in response.results if r.node_id is not None]
        found = node_rows(conn, [i for i in ids if i not in seen])
        fuzzy = [found[i] for i in ids if i in found][: args.limit - len(exact)]
    history = node_history(conn, [n.id for n in (*exact, *fuzzy)])
    if args.json:
        print(
            json.dumps(
                {
                    "exact": [_node_json(n, history) for n in exact],
                    "fuzzy": [_node_json(n, history) for n in fuzzy],
                }
            )
        )
        return EXIT_OK
    console = Console(highlight=False, soft_wrap=True)
    if not exact and not fuzzy:
        console.print(f"no definitions match {escape(args.name)!r}")
    for node in exact:
        _print_node(console, node, times=history)
    if fuzzy:
        console.print("[dim]similar names:[/]")
        for node in fuzzy:
            _print_node(console, node, "  ", history)
    return EXIT_OK


def _graph_command(args: argparse.Namespace, direction: str) -> int:
    root = _root_of(args)
    times = _time_filter(args, root)
    _, _, conn = _prepare(args)
    targets = nodes_named(conn, args.name, limit=20, times=times)
    payload: list[dict[str, Any]] = []
    console = Console(highlight=False, soft_wrap=True)
    if not targets:
        if args.json:
            print(json.dumps({"name": args.name, "nodes": []}))
        else:
            console.print(f"no definition named {escape(args.name)!r}")
        return EXIT_OK
    for target in targets:
        if direction == "callers":
            edges = edges_to(conn, target.id, ["calls"])
            others = node_rows(conn, [e.src_id for e in edges])
            pairs = [(others.get(e.src_id), e) for e in edges]
        else:
            edges = edges_from(conn, target.id, ["calls"])
            others = node_rows(conn, [e.dst_id for e in edges if e.dst_id is not None])
            pairs = [(others.get(e.dst_id) if e.dst_id else None, e) for e in edges]
        if times:
            # Neighbours outside the time window are left out (unresolved names stay).
            kept = nodes_in_time(conn, [n.id for n, _ in pairs if n is not None], times)
            pairs = [(n, e) for n, e in pairs if n is None or n.id in kept]
            if direction == "callers":
                pairs = [(n, e) for n, e in pairs if n is not None]
        history = node_history(conn, [target.id, *(n.id for n, _ in pairs if n is not None)])
        if args.json:
            payload.append(
                {
                    "node": _node_json(target, history),
                    direction: [
                        {
                            "edge": {
                                "kind": e.kind,
                                "line": e.line,
                                "name": e.dst_name,
                                "resolution": e.resolution,
                            },
                            "node": _node_json(n, history) if n else None,
                        }
                        for n, e in pairs
                    ],
                }
            )
            continue
        _print_node(console, target, times=history)
        if not pairs:
            console.print(f"  [dim]no {direction} found[/]")
        for other, edge in pairs:
            if other is not None:
                where = f"line {edge.line}" if direction == "callers" else f"called at {edge.line}"
                arrow = "←" if direction == "callers" else "→"
                _print_node(console, other, f"  {arrow} ", history)
                console.print(f"      [dim]{where} ({edge.resolution or 'unresolved'})[/]")
            else:
                console.print(
                    f"  → [bold]{escape(edge.dst_name)}[/] [dim](unresolved, line {edge.line})[/]"
                )
    if args.json:
        print(json.dumps({"name": args.name, "nodes": payload}))
    return EXIT_OK


def cmd_callers(args: argparse.Namespace) -> int:
    return _graph_command(args, "callers")


def cmd_callees(args: argparse.Namespace) -> int:
    return _graph_command(args, "callees")


def cmd_status(args: argparse.Namespace) -> int:
    root = _root_of(args)
    settings = load_settings(root)
    db_path = db_path_for(root, settings)
    args.db_path = db_path
    if not db_path.exists():
        message = f"no index at {db_path}; run `codesift index` in {root}"
        if args.json:
            print(json.dumps({"root": str(root), "database": str(db_path), "exists": False}))
        else:
            print(message)
        return EXIT_OK
    conn = _open_existing(db_path)
    problem = integrity_problem(db_path)  # status is where people look when in doubt
    if problem is not None:
        raise CorruptIndexError(
            f"{db_path} is damaged ({problem}); run `codesift index --rebuild` to move it aside"
            " and build a new one"
        )
    counts = index_counts(conn)
    coverage = vector_coverage(conn, settings.embedding.layers)
    queries, query_error = _query_status(settings)
    size = sum(
        p.stat().st_size for p in (db_path, db_path.with_name(db_path.name + "-wal")) if p.exists()
    )
    data = {
        "root": str(root),
        "database": str(db_path),
        "exists": True,
        "database_bytes": size,
        "files": counts.files,
        "nodes": counts.nodes,
        "edges": counts.edges,
        "chunks": counts.chunks,
        "languages": counts.by_language,
        "vectors": {
            "embedded": coverage.embedded,
            "embeddable": coverage.embeddable,
            "queries": queries,
            "queries_error": query_error,
        },
        "last_update": counts.last_update,
        "history": asdict(history_status(conn)),
        "rerank": _rerank_status(settings),
    }
    if args.json:
        print(json.dumps(data))
        return EXIT_OK
    when = (
        time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(counts.last_update))
        if counts.last_update
        else "never"
    )
    print(f"root        {root}")
    print(f"database    {db_path} ({size / 1e6:.1f} MB)")
    print(f"files       {counts.files}")
    print(f"nodes       {counts.nodes}")
    print(f"edges       {counts.edges}")
    print(f"chunks      {counts.chunks}")
    print(f"vectors     {coverage.embedded} of {coverage.embeddable} chunks ({coverage.ratio:.0%})")
    if query_error:
        print(f"queries     embedded by the batch model: the query model failed: {query_error}")
    else:
        print(f"queries     {_QUERY_PATHS[queries]}")
    print(f"updated     {when}")
    history = history_status(conn)
    if not history.available:
        at = f" at {history.head[:10]}" if history.head else ""
        print(
            f"history     unavailable{at}: {history.error}"
            f" ({history.mtime_files} files dated by modification time)"
        )
    else:
        print(f"history     {'git' if history.source == 'git' else 'file modification times'}")
    print("languages   " + ", ".join(f"{k} {v}" for k, v in counts.by_language.items()))
    rerank = data["rerank"]
    assert isinstance(rerank, dict)
    if not rerank["enabled"]:
        print("rerank      off")
    elif rerank["active"]:
        print(f"rerank      {rerank['provider']} ({rerank['model_path']})")
    else:
        print(f"rerank      off: {rerank['warning']}")
    return EXIT_OK


def cmd_serve(args: argparse.Namespace) -> int:
    """The language server on stdio (or TCP); logs go to stderr or --log-file."""
    from codesift.lsp import serve  # pygls loads only for this command

    if args.log_file:
        handler: logging.Handler = logging.FileHandler(args.log_file, encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root_logger = logging.getLogger()
        for old in list(root_logger.handlers):
            root_logger.removeHandler(old)
        root_logger.addHandler(handler)
        if args.verbose == 0:
            root_logger.setLevel(logging.INFO)
    tcp = None
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        if not host or not port.isdigit():
            raise CodesiftError(f"--tcp wants HOST:PORT, got {args.tcp!r}")
        tcp = (host, int(port))
    serve(tcp=tcp)
    return EXIT_OK


_QUERY_PATHS = {
    "int8": "embedded by the int8 query encoder",
    "pending": "embedded by the int8 query encoder, built on the first search",
    "batch": "embedded by the batch model (embedding.quantized_queries = false)",
    "off": "not embedded (embeddings are off)",
}


def _query_status(settings: Settings) -> tuple[str, str | None]:
    """How a search here would embed its query (`Embedder.query_path`, without
    loading anything): `int8`, `pending` (the query model is not built yet),
    `batch` or `off`; and, when the int8 encoder is asked for but a build of the
    query model failed lately, why (queries then use the batch model)."""
    if not settings.embedding.enabled:
        return "off", None
    if not settings.embedding.quantized_queries:
        return "batch", None
    root = cache_dir_from(settings.embedding.cache_dir)
    model_dir = model_dir_path(root, settings.embedding.max_tokens)
    if (model_dir / QUERY_MODEL_FILE).is_file():
        return "int8", None
    failed = recent_build_failure(model_dir)
    return ("batch", failed) if failed else ("pending", None)


def _rerank_status(settings: Settings) -> dict[str, Any]:
    """Whether the rerank stage would run: loads the configured model to find out."""
    enabled = settings.rerank.enabled and settings.rerank.provider != "none"
    load = _rerank_load(settings) if enabled else RerankerLoad(None)
    return {
        "enabled": enabled,
        "provider": settings.rerank.provider,
        "model_path": settings.rerank.model_path,
        "active": load.reranker is not None,
        "warning": load.warning,
    }


# -- argument parsing ----------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="codesift",
        description="Local hybrid code search: symbols, signatures and prose questions.",
    )
    parser.add_argument("--version", action="version", version=f"codesift {__version__}")
    parser.add_argument(
        "-v", "--verbose", action="count", default=0, help="log to stderr (-v info, -vv debug)"
    )
    sub = parser.add_subparsers(dest="command", required=True)

    def common(p: argparse.ArgumentParser, *, update: bool = True, times: bool = True) -> None:
        p.add_argument(
            "--root",
            help="workspace folder (default: nearest indexed folder, "
            "else the git work tree, else the current folder)",
        )
        p.add_argument("--json", action="store_true", help="machine-readable output")
        if times:
            p.add_argument(
                "--as-of",
                metavar="TIME",
                help="only content created at or before TIME (date, time, 2w, '3 days ago', tag)",
            )
            p.add_argument(
                "--since", metavar="TIME", help="only content last changed at or after TIME"
            )
            p.add_argument(
                "--until", metavar="TIME", help="only content last changed at or before TIME"
            )
        if update:
            p.add_argument(
                "--no-update",
                action="store_true",
                help="search the index as it is, without updating it first",
            )

    def progress_option(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--progress-every",
            type=_positive_seconds,
            default=DEFAULT_INTERVAL_SECONDS,
            metavar="SECONDS",
            help="when stderr is not a terminal, print a progress line this often (default 5)",
        )

    p = sub.add_parser("index", help="build or update the index of a folder")
    p.add_argument("path", nargs="?", help="workspace folder (default: current folder)")
    p.add_argument("--root", help="workspace folder (the same as PATH)")
    p.add_argument(
        "--rebuild",
        action="store_true",
        help="move the existing index aside (never deleted) and build a new one",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    p.add_argument("--json", action="store_true", help="print the run summary as JSON")
    p.add_argument("--no-embed", action="store_true", help="do not compute vectors")
    progress_option(p)
    p.set_defaults(func=cmd_index)

    p = sub.add_parser("embed", help="compute the missing vectors of an index")
    p.add_argument("--root", help="workspace folder")
    p.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    progress_option(p)
    p.set_defaults(func=cmd_embed)

    p = sub.add_parser("search", help="hybrid search: symbols, signatures or prose")
    p.add_argument("query")
    p.add_argument("-k", "--top-k", type=int, help="number of results, 1..200 (default 10)")
    p.add_argument("--lang", action="append", help="only this language (repeatable)")
    p.add_argument("--path", action="append", help="only paths matching this glob (repeatable)")
    p.add_argument(
        "--layer",
        action="append",
        choices=["code", "ast", "summary", "doc"],
        help="search these layers (repeatable; default code, summary, doc)",
    )
    p.add_argument("--snippet-chars", type=int, help="snippet size, 80..4000 (default 600)")
    p.add_argument("--max-tokens", type=int, help="fit the whole answer in this many tokens")
    p.add_argument(
        "--graph",
        action="store_true",
        help="show each code result's parent, callees and callers (at most 20 in all)",
    )
    p.add_argument(
        "--no-embed", action="store_true", help="lexical and symbol streams only (no vectors)"
    )
    common(p)
    p.set_defaults(func=cmd_search)

    p = sub.add_parser("symbols", help="find definitions by name: exact first, then fuzzy")
    p.add_argument("name")
    p.add_argument("--limit", type=int, default=20)
    common(p)
    p.set_defaults(func=cmd_symbols)

    for name, func, text in (
        ("callers", cmd_callers, "who calls a function or method"),
        ("callees", cmd_callees, "what a function or method calls"),
    ):
        p = sub.add_parser(name, help=text)
        p.add_argument("name", help="name or qualified name of the definition")
        common(p)
        p.set_defaults(func=func)

    p = sub.add_parser("status", help="what is indexed: counts by language, size, last update")
    common(p, update=False, times=False)
    p.set_defaults(func=cmd_status)

    p = sub.add_parser("serve", help="run the language server (LSP over stdio)")
    p.add_argument("--tcp", metavar="HOST:PORT", help="listen on TCP instead of stdio (debugging)")
    p.add_argument("--log-file", help="write logs to this file instead of stderr")
    p.set_defaults(func=cmd_serve)
    return parser


def _positive_seconds(raw: str) -> float:
    try:
        value = float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {raw!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, got {raw}")
    return value


def _sqlite_error_message(exc: apsw.Error, db_path: Path | None) -> str:
    """One line a person can act on, for an SQLite error that reached the top."""
    where = f"the index {db_path}" if db_path is not None else "the index"
    if isinstance(exc, apsw.FullError):
        return (
            f"the disk holding {where} is full; the index keeps every file completed so far:"
            " free some space and run `codesift index` again"
        )
    if isinstance(exc, apsw.ReadOnlyError):
        return f"{where} cannot be written (read-only for this user or on a read-only disk)"
    if isinstance(exc, (apsw.CorruptError, apsw.NotADBError)):
        problem = integrity_problem(db_path) if db_path is not None else None
        detail = f" ({problem})" if problem else f" ({exc})"
        return (
            f"{where} is damaged{detail}; run `codesift index --rebuild` to move it aside"
            " and build a new one"
        )
    if isinstance(exc, apsw.BusyError):
        return (
            f"{where} stayed locked by another process; try again when it has finished"
            " (codesift status shows what is running)"
        )
    if isinstance(exc, apsw.IOError):
        return f"cannot read or write {where}: disk I/O error ({exc})"
    if isinstance(exc, apsw.CantOpenError):
        return f"cannot open {where}: {exc}"
    return f"{where}: {exc}"


def _os_error_message(exc: OSError) -> str:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return (
            "the disk is full; the index keeps every file completed so far: free some space"
            " and run `codesift index` again"
        )
    what = exc.strerror or str(exc)
    name = exc.filename if exc.filename is not None else ""
    return f"{what}: {name}" if name else what


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    level = {0: logging.WARNING, 1: logging.INFO}.get(args.verbose, logging.DEBUG)
    logging.basicConfig(
        level=level, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s"
    )
    db_path: Path | None = None
    try:
        return int(args.func(args))
    except CodesiftError as exc:
        message = str(exc)
        code = EXIT_ERROR
    except KeyboardInterrupt:
        _stderr().print("interrupted; the index keeps every file completed so far")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return EXIT_OK
    except apsw.Error as exc:
        db_path = getattr(args, "db_path", None)
        log.debug("SQLite error", exc_info=True)
        message, code = _sqlite_error_message(exc, db_path), EXIT_ERROR
    except OSError as exc:
        log.debug("OS error", exc_info=True)
        message, code = _os_error_message(exc), EXIT_ERROR
    except Exception as exc:  # a bug: one line for the user, the traceback with -vv
        log.debug("unexpected failure", exc_info=True)
        message = f"unexpected failure: {type(exc).__name__}: {exc} (run with -vv for the details)"
        code = EXIT_INTERNAL
    _stderr().print(f"[red]error:[/] {escape(message)}", soft_wrap=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
