#!/usr/bin/env python3
"""Indexing speed: cold index, single-file update latency, database size, peak RSS.

Run by hand from the repository root (with the project's interpreter):

    PYTHONPATH=server python bench/index_speed.py [--corpus python|go|all] [--write]
        [--out bench/RESULTS.md] [--repeat 3] [--mmap-compare] [--profile cprofile]
    PYTHONPATH=server python bench/index_speed.py --embed-only [--embed-corpus go|rust|all]
        [--embed-limit 4000] [--write]
    PYTHONPATH=server python bench/index_speed.py --side-by-side [--side-repeat 3]
        [--side-corpora stdlib,devset2,deep] [--minilm-limit 2000] [--write]

--side-by-side (bench/index_phases.py) times, in one run, when a cold index is
ready for lexical search, with static vectors, with git history and with MiniLM,
beside the peer (semble) and ctags, on the stdlib copy, the 20 dev-set-2 corpora
and a synthetic deep-history repository; its --write section is
`<!-- index_speed_side:begin -->` ... `<!-- index_speed_side:end -->`.

Corpora (prepared under bench/.data/, which git ignores):

- python-stdlib: a copy of the running interpreter's stdlib without site-packages
  and __pycache__, made exactly as ../shared/devset/corpora.json says.
- go-stdlib: /usr/share/go-1.19/src (Debian golang-1.19-src=1.19.8-2), indexed in
  place with the database in bench/.data; the update test edits a `cp -a` copy,
  never /usr/share.

Each cold index runs in a fresh subprocess so its peak RSS (ru_maxrss) is its
own. `ctags -R` runs on the same tree in the same run, first, so both see a warm
page cache. The update test runs in one warm process with the index open: it
appends a small function to a mid-sized file, times `apply(plan_paths([path]))`
(what the file watcher calls), restores the file (content and mtime) and
re-indexes it. Timings are noisy on a shared 2-core machine: cold runs report
the median and best of --repeat, and the load average is recorded around each step.

Embedding (--embed-only) is measured apart from lexical indexing: a fresh
subprocess opens a copy of the corpus's lexical index (built first, in its own
subprocess, when missing) and computes its vectors as `codesift index` and
`codesift embed` do (`fill_vectors` with the default settings), for the first
--embed-limit pending chunks (0: all; the Go tree's ~71k take most of an hour).
It reports the process's peak RSS (ru_maxrss), the process's RSS sampled every
half second against chunks done (flat once the largest batches have run, which
shows the peak does not grow with the number of chunks), and chunks/s. Corpora:
go-stdlib and rust-std (/usr/src/rustc-1.63.0/library, Debian
rust-src=1.63.0+dfsg1-2). Its --write section is `<!-- index_speed_embed:begin -->`
... `<!-- index_speed_embed:end -->`.

With --write, the section between `<!-- index_speed:begin -->` and
`<!-- index_speed:end -->` in the --out file is replaced; the rest is kept.
Full raw results go to bench/.data/index_speed-last.json (embedding:
bench/.data/index_speed_embed-last.json).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO, TypeVar

import index_phases
from runinfo import head_commit, markdown_tables, server_changes, write_results

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
SERVER_DIR = REPO_DIR / "server"
DATA_DIR = BENCH_DIR / ".data"
CORPORA_DIR = DATA_DIR / "corpora"
DB_DIR = DATA_DIR / "db"
LOG_DIR = DATA_DIR / "logs"
PROFILE_DIR = DATA_DIR / "profiles"
RAW_RESULTS = DATA_DIR / "index_speed-last.json"
LOCK_FILE = DATA_DIR / "index_speed.lock"
DEFAULT_OUT = BENCH_DIR / "RESULTS.md"

GO_ROOT = Path("/usr/share/go-1.19/src")
GO_APT = "apt-get update && apt-get install -y golang-1.19-src=1.19.8-2"
RUST_ROOT = Path("/usr/src/rustc-1.63.0/library")
RUST_APT = "apt-get update && apt-get install -y rust-src=1.63.0+dfsg1-2"
RAW_EMBED_RESULTS = DATA_DIR / "index_speed_embed-last.json"
EMBED_SECTION_BEGIN = "<!-- index_speed_embed:begin -->"
EMBED_SECTION_END = "<!-- index_speed_embed:end -->"
TARGET_EMBED_RSS_MB = 350.0
DEFAULT_EMBED_LIMIT = 4000
CTAGS = "/usr/bin/ctags"
SECTION_BEGIN = "<!-- index_speed:begin -->"
SECTION_END = "<!-- index_speed:end -->"
MIB = 1024 * 1024

# Targets from the issue.
TARGET_COLD_S = 15.0
AIM_COLD_S = 8.0
TARGET_UPDATE_P95_MS = 100.0
TARGET_DB_RATIO = 3.0
TARGET_RSS_MB = 300.0

T = TypeVar("T")
Json = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Corpus:
    key: str  # --corpus value
    name: str  # as in corpora.json
    language: str  # the language whose files the update test edits
    root: Path  # the tree that is cold-indexed
    in_place: bool  # a read-only tree: the update test edits a copy
    probe: str  # appended to a file by the update test; {n} is a counter

    @property
    def db(self) -> Path:
        return DB_DIR / f"{self.name}.db"


PY_PROBE = (
    "\n\ndef codesift_bench_probe_{n}(value):\n"
    '    """Added by bench/index_speed.py; removed again right away."""\n'
    "    return value + {n}\n"
)
GO_PROBE = (
    "\n// codesiftBenchProbe{n} is added by bench/index_speed.py and removed right away.\n"
    "func codesiftBenchProbe{n}(value int) int {{\n\treturn value + {n}\n}}\n"
)


def probe_name(corpus_language: str, n: int) -> str:
    return f"codesift_bench_probe_{n}" if corpus_language == "python" else f"codesiftBenchProbe{n}"


# --- small helpers --------------------------------------------------------------------


def loadavg() -> tuple[float, float, float]:
    return os.getloadavg()


def fmt_load(load: Sequence[float]) -> str:
    return "/".join(f"{x:.2f}" for x in load)


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100)."""
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]


def dir_bytes(root: Path) -> tuple[int, int]:
    """(regular files, bytes) of a tree, symlinks not followed."""
    files = 0
    total = 0
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            st = os.lstat(os.path.join(dirpath, name))
            if not os.path.islink(os.path.join(dirpath, name)):
                files += 1
                total += st.st_size
    return files, total


def db_bytes(db: Path) -> tuple[int, int]:
    """(main file bytes, -wal bytes)."""
    main = db.stat().st_size if db.exists() else 0
    wal_path = db.with_name(db.name + "-wal")
    wal = wal_path.stat().st_size if wal_path.exists() else 0
    return main, wal


def remove_db(db: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        db.with_name(db.name + suffix).unlink(missing_ok=True)


def scalar(conn: Any, sql: str, params: tuple[Any, ...] = ()) -> int:
    row = conn.execute(sql, params).fetchone()
    return int(row[0]) if row and row[0] is not None else 0


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def children_cpu_seconds() -> float:
    """CPU of waited-for child processes (the index workers once their pool shut down)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def maxrss_bytes() -> int:
    # Linux reports kilobytes.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def package_digest() -> str:
    """A digest of the package's sources, to tell whether they changed during a run."""
    import hashlib

    digest = hashlib.blake2b(digest_size=8)
    for path in sorted((SERVER_DIR / "codesift").rglob("*")):
        if path.suffix in (".py", ".scm") and path.is_file():
            digest.update(path.as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def machine_info() -> Json:
    mem_total = 0
    cpu_model = ""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_total = int(line.split()[1]) * 1024
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    nproc = shutil.which("nproc")
    cores = (
        subprocess.run([nproc], capture_output=True, text=True, check=False).stdout.strip()
        if nproc
        else str(os.cpu_count())
    )
    commit = head_commit()
    return {
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "dirty": server_changes(),
        "sources": package_digest(),
        "nproc": cores,
        "mem_gib": mem_total / 1024**3,
        "cpu": cpu_model,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "platform": platform.platform(),
        "commit": commit,
    }


# --- corpora --------------------------------------------------------------------------


def prepare_python() -> Corpus:
    import sysconfig

    stdlib = Path(sysconfig.get_paths()["stdlib"])
    dest = CORPORA_DIR / "python-stdlib"
    marker = CORPORA_DIR / "python-stdlib.prepared"  # beside the tree, not in it
    stamp = f"{sys.version}\n{stdlib}\n"
    if not (dest.is_dir() and marker.is_file() and marker.read_text() == stamp):
        log(f"copying the stdlib {stdlib} to {dest}")
        if dest.exists():
            shutil.rmtree(dest)
        dest.mkdir(parents=True)
        # corpora.json: tar --exclude=./site-packages --exclude=__pycache__ -C "$STD" -cf - .
        pack = subprocess.Popen(
            [
                "tar",
                "--exclude=./site-packages",
                "--exclude=__pycache__",
                "-C",
                str(stdlib),
                "-cf",
                "-",
                ".",
            ],
            stdout=subprocess.PIPE,
        )
        unpack = subprocess.run(
            ["tar", "-C", str(dest), "-xf", "-"], stdin=pack.stdout, check=False
        )
        assert pack.stdout is not None
        pack.stdout.close()
        if pack.wait() != 0 or unpack.returncode != 0:
            raise SystemExit("copying the stdlib failed")
        marker.write_text(stamp)
    if platform.python_version() != "3.11.7":
        log(f"note: corpora.json pins Python 3.11.7, this is {platform.python_version()}")
    return Corpus("python", "python-stdlib", "python", dest, in_place=False, probe=PY_PROBE)


def prepare_go() -> Corpus | None:
    if not GO_ROOT.is_dir():
        log(f"{GO_ROOT} is missing; install it with:\n    {GO_APT}\nskipping the Go corpus")
        return None
    return Corpus("go", "go-stdlib", "go", GO_ROOT, in_place=True, probe=GO_PROBE)


def prepare_rust() -> Corpus | None:
    if not RUST_ROOT.is_dir():
        log(f"{RUST_ROOT} is missing; install it with:\n    {RUST_APT}\nskipping the Rust corpus")
        return None
    # Only embedded (--embed-only): the update test has no Rust probe.
    return Corpus("rust", "rust-std", "rust", RUST_ROOT, in_place=True, probe="")


def copy_tree_for_updates(corpus: Corpus) -> Path:
    """A writable copy of a read-only tree, with the same mtimes (cp -a)."""
    dest = CORPORA_DIR / f"{corpus.name}-copy"
    if dest.exists():
        shutil.rmtree(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["cp", "-a", str(corpus.root), str(dest)], check=True)
    return dest


# --- child processes ------------------------------------------------------------------


class WarningCounter(logging.Handler):
    """Counts WARNING+ records by logger and message template; keeps a few examples."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.counts: Counter[str] = Counter()
        self.examples: dict[str, list[str]] = {}

    def emit(self, record: logging.LogRecord) -> None:
        key = f"{record.levelname} {record.name}: {record.msg}"
        self.counts[key] += 1
        examples = self.examples.setdefault(key, [])
        if len(examples) < 3:
            examples.append(record.getMessage())

    def as_json(self) -> Json:
        return {"counts": dict(self.counts), "examples": self.examples}


def install_warning_counter() -> WarningCounter:
    counter = WarningCounter()
    root = logging.getLogger()
    root.setLevel(logging.WARNING)
    stderr = logging.StreamHandler(sys.stderr)
    stderr.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root.addHandler(stderr)
    root.addHandler(counter)
    return counter


def _timed(fn: Callable[..., T], record: list[tuple[float, int]]) -> Callable[..., T]:
    def wrapper(*args: Any, **kwargs: Any) -> T:
        started = time.perf_counter()
        result = fn(*args, **kwargs)
        record.append((time.perf_counter() - started, maxrss_bytes()))
        return result

    return wrapper


def top_cprofile(stats_path: Path, limit: int) -> list[Json]:
    import pstats

    stats = pstats.Stats(str(stats_path))
    raw: dict[tuple[str, int, str], tuple[int, int, float, float, Any]] = stats.stats  # type: ignore[attr-defined]
    rows: list[Json] = [
        {
            "function": f"{_short_path(key[0])}:{key[1]}({key[2]})",
            "calls": nc,
            "tottime": tt,
            "cumtime": ct,
        }
        for key, (_cc, nc, tt, ct, _callers) in raw.items()
    ]
    rows.sort(key=lambda r: r["tottime"], reverse=True)
    return rows[:limit]


def _short_path(path: str) -> str:
    for marker in ("/server/codesift/", "/site-packages/", "/lib/python3.11/"):
        cut = path.find(marker)
        if cut >= 0:
            return path[cut + 1 :]
    return path


def pyinstrument_flat(session_root: Any, limit: int) -> list[Json]:
    """Self time per function from a pyinstrument frame tree."""
    totals: dict[str, float] = {}
    stack = [session_root]
    while stack:
        frame = stack.pop()
        if frame is None:
            continue
        stack.extend(frame.children)
        if frame.is_synthetic:  # its time is in its parent's total_self_time
            continue
        ident = f"{_short_path(frame.file_path or '')}:{frame.line_no}({frame.function})"
        totals[ident] = totals.get(ident, 0.0) + float(frame.total_self_time)
    ranked = sorted(totals.items(), key=lambda kv: kv[1], reverse=True)
    return [{"function": k, "self": v} for k, v in ranked[:limit]]


def child_cold(args: argparse.Namespace) -> Json:
    """Cold-index one tree into a fresh database; report counts, timings, RSS."""
    sys.path.insert(0, str(SERVER_DIR))
    counter = install_warning_counter()
    from codesift.config import load_settings
    from codesift.indexer import Indexer, IndexProgress
    from codesift.store.database import open_database

    root = Path(args.root)
    db = Path(args.db)
    remove_db(db)
    load_start = loadavg()
    overrides: dict[str, Any] = {"db_path": str(db)}
    if args.workers is not None:
        overrides["workers"] = args.workers  # a ConfigError if the setting does not exist
    settings = load_settings(root, {"index": overrides})
    workers = int(getattr(settings.index, "workers", 1))
    started = time.perf_counter()
    conn = open_database(db)
    if args.mmap_size is not None:
        conn.execute(f"PRAGMA mmap_size={int(args.mmap_size)}")
    mmap_size = scalar(conn, "PRAGMA mmap_size")
    opened = time.perf_counter()
    indexer = Indexer(root, settings, conn)
    resolve_calls: list[tuple[float, int]] = []
    compact_calls: list[tuple[float, int]] = []
    writer: Any = indexer.writer  # patched per instance to time the phases
    writer.resolve_edges = _timed(writer.resolve_edges, resolve_calls)
    writer.compact = _timed(writer.compact, compact_calls)
    children_before = children_cpu_seconds()
    phase_at: dict[str, tuple[float, int]] = {}

    def on_progress(event: IndexProgress) -> None:
        if event.phase not in phase_at:
            phase_at[event.phase] = (time.perf_counter(), maxrss_bytes())

    profiler: Any = None
    if args.profile == "cprofile":
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    elif args.profile == "pyinstrument":
        from pyinstrument import Profiler

        profiler = Profiler(interval=0.001)
        profiler.start()
    cpu_started = cpu_seconds()
    run_started = time.perf_counter()
    summary = indexer.run(progress=on_progress)
    run_seconds = time.perf_counter() - run_started
    run_cpu = cpu_seconds() - cpu_started
    workers_cpu = children_cpu_seconds() - children_before
    profile_top: list[Json] = []
    if args.profile == "cprofile":
        profiler.disable()
        out = Path(args.profile_out)
        profiler.dump_stats(str(out))
        profile_top = top_cprofile(out, 40)
    elif args.profile == "pyinstrument":
        session = profiler.stop()
        out = Path(args.profile_out)
        out.write_text(profiler.output_text(unicode=False, color=False, show_all=False))
        profile_top = pyinstrument_flat(session.root_frame(), 40)
    load_end = loadavg()

    main_open, wal_open = db_bytes(db)

    def one(sql: str) -> int:
        return scalar(conn, sql)

    counts = {
        "files": one("SELECT count(*) FROM files"),
        "source_bytes": one("SELECT coalesce(sum(size), 0) FROM files"),
        "lines": one("SELECT coalesce(sum(line_count), 0) FROM files"),
        "nodes": one("SELECT count(*) FROM nodes"),
        "edges": one("SELECT count(*) FROM edges"),
        "chunks": one("SELECT count(*) FROM chunks"),
        "parse_error_files": one("SELECT count(*) FROM files WHERE parse_errors > 0"),
        "invalid_utf8_files": one("SELECT count(*) FROM files WHERE invalid_utf8 != 0"),
    }
    by_language = {
        str(lang): {"files": int(n), "bytes": int(b), "lines": int(lines)}
        for lang, n, b, lines in conn.execute(
            "SELECT language, count(*), sum(size), sum(line_count) FROM files"
            " GROUP BY language ORDER BY count(*) DESC"
        )
    }
    edges_by = {
        f"{kind}/{res}": int(n)
        for kind, res, n in conn.execute(
            "SELECT kind, coalesce(resolution, 'unresolved'), count(*) FROM edges"
            " GROUP BY 1, 2 ORDER BY 3 DESC"
        )
    }
    chunks_by = {
        str(layer): int(n)
        for layer, n in conn.execute("SELECT layer, count(*) FROM chunks GROUP BY layer")
    }
    conn.close()
    main_closed, wal_closed = db_bytes(db)
    skipped = Counter(reason for _path, reason in summary.skipped)

    def phase(name: str) -> float:
        return phase_at[name][0] - run_started if name in phase_at else float("nan")

    return {
        "root": str(root),
        "mmap_size": mmap_size,
        "open_seconds": opened - started,
        "seconds": run_seconds,
        "cpu_seconds": run_cpu + workers_cpu,
        "cpu_main": run_cpu,
        "cpu_workers": workers_cpu,
        "workers": workers,
        "summary_seconds": summary.seconds,
        "phases": {
            "scan": phase("parsing"),
            "parse_write": phase("resolving") - phase("parsing"),
            "resolve": sum(t for t, _ in resolve_calls),
            "compact": sum(t for t, _ in compact_calls),
        },
        "rss": {
            "peak": maxrss_bytes(),
            "worker_peak": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024,
            "after_parse": phase_at.get("resolving", (0.0, 0))[1],
            "after_resolve": resolve_calls[-1][1] if resolve_calls else 0,
            "after_compact": compact_calls[-1][1] if compact_calls else 0,
        },
        "summary": {
            "files": summary.files,
            "indexed": summary.indexed,
            "unchanged": summary.unchanged,
            "deleted": summary.deleted,
            "skipped": len(summary.skipped),
            "nodes": summary.nodes,
            "edges": summary.edges,
            "chunks": summary.chunks,
        },
        "skipped_by_reason": dict(skipped.most_common()),
        "counts": counts,
        "by_language": by_language,
        "edges_by": edges_by,
        "chunks_by": chunks_by,
        "db": {
            "main_open": main_open,
            "wal_open": wal_open,
            "main_closed": main_closed,
            "wal_closed": wal_closed,
        },
        "warnings": counter.as_json(),
        "load": {"start": load_start, "end": load_end},
        "profile_top": profile_top,
    }


def _pick_files(conn: Any, language: str, count: int) -> list[tuple[str, int]]:
    """`count` mid-sized files (40th-60th size percentile) of `language`, spread evenly."""
    rows = [
        (str(p), int(s))
        for p, s in conn.execute(
            "SELECT path, size FROM files WHERE language = ? AND parse_errors = 0"
            " ORDER BY size, path",
            (language,),
        )
        if "/testdata/" not in f"/{p}"
    ]
    band = rows[int(len(rows) * 0.4) : int(len(rows) * 0.6)]
    if len(band) < count:
        band = rows
    step = len(band) / count
    return [band[int(i * step)] for i in range(count)]


def child_update(args: argparse.Namespace) -> Json:
    """Warm process, index open: single-file updates and no-op / one-change runs."""
    sys.path.insert(0, str(SERVER_DIR))
    counter = install_warning_counter()
    import importlib

    from codesift.config import load_settings
    from codesift.indexer import Indexer
    from codesift.parsing import parse_source as original_parse_source
    from codesift.store.database import open_database

    root = Path(args.root)
    db = Path(args.db)
    settings = load_settings(root, {"index": {"db_path": str(db)}})
    conn = open_database(db, create=False)
    if args.mmap_size is not None:
        conn.execute(f"PRAGMA mmap_size={int(args.mmap_size)}")
    indexer = Indexer(root, settings, conn)
    anomalies: list[str] = []
    # Time the parts of apply(): parsing and edge resolution (patched per instance/module).
    resolve_log: list[tuple[float, int]] = []
    parse_log: list[float] = []
    writer: Any = indexer.writer
    resolve_edges = writer.resolve_edges

    def timed_resolve(*a: Any, **kw: Any) -> Any:
        names = a[0] if a else kw.get("names")
        if names is not None:  # an iterable may be consumed once: count a list copy
            names = list(names)
            if a:
                a = (names, *a[1:])
            else:
                kw["names"] = names
        t0 = time.perf_counter()
        changed = resolve_edges(*a, **kw)
        resolve_log.append((time.perf_counter() - t0, -1 if names is None else len(names)))
        return changed

    writer.resolve_edges = timed_resolve
    parse_source = original_parse_source

    def timed_parse(*a: Any, **kw: Any) -> Any:
        t0 = time.perf_counter()
        parsed = parse_source(*a, **kw)
        parse_log.append(time.perf_counter() - t0)
        return parsed

    # Patched in the namespace of whichever module calls it (it moves as the code does).
    parse_patched: list[str] = []
    for module_name in ("codesift.preparation", "codesift.indexer"):
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        if vars(module).get("parse_source") is original_parse_source:
            vars(module)["parse_source"] = timed_parse
            parse_patched.append(module_name)
    if not parse_patched:
        anomalies.append("parse_source is not called where expected: parse time not measured")
    load_start = loadavg()
    samples: int = args.samples
    runs: int = args.runs
    picked = _pick_files(conn, args.language, samples + runs + 1)
    probe_no = 0

    def probe_count(name: str) -> int:
        return scalar(conn, "SELECT count(*) FROM nodes WHERE name = ?", (name,))

    def modify(rel: str) -> tuple[Path, bytes, int, int, str]:
        nonlocal probe_no
        probe_no += 1
        path = root / rel
        original = path.read_bytes()
        st = path.stat()
        path.write_bytes(original + args.probe.format(n=probe_no).encode())
        return path, original, st.st_atime_ns, st.st_mtime_ns, probe_name(args.language, probe_no)

    def restore(path: Path, original: bytes, atime_ns: int, mtime_ns: int) -> None:
        path.write_bytes(original)
        os.utime(path, ns=(atime_ns, mtime_ns))

    # run() with nothing changed; the first call in the process is reported apart.
    noop: list[float] = []
    noop_indexed: list[int] = []
    for _ in range(runs + 1):
        t0 = time.perf_counter()
        summary = indexer.run()
        noop.append(time.perf_counter() - t0)
        noop_indexed.append(summary.indexed)
    plan = indexer.plan()
    noop_plan_to_index = [s.path for s in plan.to_index]

    # Warm-up: the first update in the process (grammar load, statement cache).
    warm_rel = picked[0][0]
    path, original, atime_ns, mtime_ns, _name = modify(warm_rel)
    try:
        t0 = time.perf_counter()
        indexer.apply(indexer.plan_paths([warm_rel]))
        first_update = time.perf_counter() - t0
    finally:
        restore(path, original, atime_ns, mtime_ns)
    indexer.apply(indexer.plan_paths([warm_rel]))

    update_total: list[float] = []
    update_plan: list[float] = []
    update_apply: list[float] = []
    update_parse: list[float] = []
    update_resolve: list[float] = []
    update_names: list[int] = []
    restore_total: list[float] = []
    files: list[Json] = []
    for rel, size in picked[1 : samples + 1]:
        path, original, atime_ns, mtime_ns, name = modify(rel)
        resolve_mark, parse_mark = len(resolve_log), len(parse_log)
        try:
            t0 = time.perf_counter()
            plan = indexer.plan_paths([rel])
            t1 = time.perf_counter()
            summary = indexer.apply(plan)
            t2 = time.perf_counter()
        finally:
            restore(path, original, atime_ns, mtime_ns)
        if summary.indexed != 1 or probe_count(name) != 1:
            anomalies.append(f"update of {rel}: indexed={summary.indexed}, probe not found")
        update_plan.append(t1 - t0)
        update_apply.append(t2 - t1)
        update_parse.append(sum(parse_log[parse_mark:]))
        update_resolve.append(sum(t for t, _ in resolve_log[resolve_mark:]))
        update_names.append(sum(n for _, n in resolve_log[resolve_mark:]))
        update_total.append(t2 - t0)
        t3 = time.perf_counter()
        indexer.apply(indexer.plan_paths([rel]))
        restore_total.append(time.perf_counter() - t3)
        if probe_count(name) != 0:
            anomalies.append(f"restore of {rel}: probe still indexed")
        files.append({"path": rel, "size": size, "ms": (t2 - t0) * 1000})

    # Change one file, then the full plan path: run().
    change_run: list[float] = []
    for rel, _size in picked[samples + 1 : samples + 1 + runs]:
        path, original, atime_ns, mtime_ns, name = modify(rel)
        try:
            t0 = time.perf_counter()
            summary = indexer.run()
            change_run.append(time.perf_counter() - t0)
        finally:
            restore(path, original, atime_ns, mtime_ns)
        if summary.indexed != 1 or probe_count(name) != 1:
            anomalies.append(f"run() after changing {rel}: indexed={summary.indexed}")
        indexer.run()
    final = indexer.run()
    if final.indexed:
        anomalies.append(f"final no-op run indexed {final.indexed} files")
    conn.close()
    return {
        "root": str(root),
        "samples": samples,
        "first_update": first_update,
        "update_total": update_total,
        "update_plan_paths": update_plan,
        "update_apply": update_apply,
        "update_parse": update_parse if parse_patched else [],
        "update_resolve": update_resolve,
        "update_resolve_names": update_names,
        "restore_total": restore_total,
        "files": files,
        "noop_first": noop[0],
        "noop": noop[1:],
        "noop_indexed": noop_indexed,
        "noop_plan_to_index": noop_plan_to_index,
        "change_run": change_run,
        "anomalies": anomalies,
        "warnings": counter.as_json(),
        "peak_rss": maxrss_bytes(),
        "load": {"start": load_start, "end": loadavg()},
    }


class ChildFailed(Exception):
    """A benchmark subprocess exited with an error."""

    def __init__(self, message: str, summary: str) -> None:
        super().__init__(message)
        self.summary = summary


def run_child(mode: str, name: str, extra: list[str]) -> Json:
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(suffix=".json", dir=DATA_DIR, delete=False) as handle:
        out = Path(handle.name)
    log_path = LOG_DIR / f"{name}.log"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(SERVER_DIR), env.get("PYTHONPATH", "")) if p
    )
    cmd = [sys.executable, str(Path(__file__).resolve()), mode, "--json-out", str(out), *extra]
    sampler = TreeMemory()
    with log_path.open("w") as log_file:
        proc = subprocess.Popen(cmd, stdout=log_file, stderr=subprocess.STDOUT, env=env)
        # Sampled from here, not in the child, so the child's own timings are undisturbed.
        while proc.poll() is None:
            sampler.sample(proc.pid)
            time.sleep(SAMPLE_SECONDS)
    if proc.returncode != 0:
        tail = log_path.read_text().strip().splitlines()
        raise ChildFailed(
            f"{mode} child failed ({proc.returncode}); log {log_path}:\n" + "\n".join(tail[-25:]),
            tail[-1] if tail else f"exit status {proc.returncode}",
        )
    result: Json = json.loads(out.read_text())
    out.unlink()
    result["log"] = str(log_path)
    result["tree_memory"] = sampler.as_json()
    return result


SAMPLE_SECONDS = 0.1
# Listing the process tree scans /proc (~3 ms): done less often than sampling.
TREE_SECONDS = 1.0


class TreeMemory:
    """Peak memory of a process and its descendants (index workers), sampled from
    /proc: the sum of RSS (counts shared pages once per process) and of PSS (shares
    them out, so the sum is what the tree really occupies)."""

    def __init__(self) -> None:
        self.peak_rss = 0
        self.peak_pss = 0
        self.max_processes = 0
        self.samples = 0
        self._pids: list[int] = []
        self._listed = 0.0

    @staticmethod
    def _tree(root_pid: int) -> list[int]:
        children: dict[int, list[int]] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry))
        found = [root_pid]
        for pid in found:  # grows while iterating: breadth-first
            found.extend(children.get(pid, []))
        return found

    def sample(self, root_pid: int) -> None:
        rss = pss = 0
        now = time.monotonic()
        if now - self._listed > TREE_SECONDS:
            self._pids = self._tree(root_pid)
            self._listed = now
        pids = self._pids
        for pid in pids:
            try:
                text = Path(f"/proc/{pid}/smaps_rollup").read_text()
            except OSError:
                continue
            for line in text.splitlines():
                if line.startswith("Rss:"):
                    rss += int(line.split()[1]) * 1024
                elif line.startswith("Pss:"):
                    pss += int(line.split()[1]) * 1024
        self.samples += 1
        self.peak_rss = max(self.peak_rss, rss)
        self.peak_pss = max(self.peak_pss, pss)
        self.max_processes = max(self.max_processes, len(pids))

    def as_json(self) -> Json:
        return {
            "peak_rss": self.peak_rss,
            "peak_pss": self.peak_pss,
            "max_processes": self.max_processes,
            "samples": self.samples,
        }


# --- ctags ----------------------------------------------------------------------------


def run_ctags(root: Path, repeat: int) -> Json | None:
    if not Path(CTAGS).exists():
        log(f"{CTAGS} missing (apt-get install universal-ctags); skipping the ctags baseline")
        return None
    times: list[float] = []
    tags = 0
    for _ in range(repeat):
        with tempfile.NamedTemporaryFile(suffix=".tags", dir=DATA_DIR) as tmp:
            t0 = time.perf_counter()
            subprocess.run(
                [CTAGS, "-R", "-f", tmp.name, str(root)],
                check=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            times.append(time.perf_counter() - t0)
            with open(tmp.name, "rb") as handle:
                tags = sum(1 for line in handle if not line.startswith(b"!_"))
    return {"times": times, "best": min(times), "median": statistics.median(times), "tags": tags}


# --- the benchmark --------------------------------------------------------------------


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


MMAP_256 = 268435456
# Profile with every file prepared in the profiled process (no worker pool).
PROFILE_WORKERS = ["--workers", "1"]


def cold_runs(corpus: Corpus, repeat: int, label: str, extra: list[str], db: Path) -> list[Json]:
    runs: list[Json] = []
    for i in range(repeat):
        load = fmt_load(loadavg())
        log(f"[{corpus.name}] cold index ({label}) {i + 1}/{repeat} (load {load})")
        tag = label.replace("=", "-")
        run = run_child(
            "_cold",
            f"{corpus.name}-cold-{tag}-{i + 1}",
            ["--root", str(corpus.root), "--db", str(db), *extra],
        )
        runs.append(run)
        mem = run["tree_memory"]
        log(
            f"    {run['seconds']:.2f} s, CPU {run['cpu_seconds']:.2f} s, main peak RSS "
            f"{run['rss']['peak'] / MIB:.0f} MiB, tree peak PSS {mem['peak_pss'] / MIB:.0f} MiB"
        )
    return runs


def bench_corpus(corpus: Corpus, args: argparse.Namespace) -> Json:
    result: Json = {"name": corpus.name, "root": str(corpus.root), "load_start": loadavg()}
    tree_files, tree_bytes = dir_bytes(corpus.root)
    result["tree"] = {"files": tree_files, "bytes": tree_bytes}
    log(f"[{corpus.name}] tree: {tree_files} files, {tree_bytes / MIB:.1f} MiB")

    # ctags first: it also warms the page cache for our runs.
    log(f"[{corpus.name}] ctags -R x{args.ctags_repeat}")
    result["ctags"] = run_ctags(corpus.root, args.ctags_repeat)

    result["cold"] = cold_runs(corpus, args.repeat, "default", [], corpus.db)
    default_mmap = int(result["cold"][-1]["mmap_size"])
    variants: list[tuple[str, list[str]]] = []
    if args.mmap_compare:
        # The other setting than the package's: 0 against 256 MiB (the earlier default).
        other = 0 if default_mmap else MMAP_256
        variants.append((f"mmap_size={other}", ["--mmap-size", str(other)]))
    if args.workers_compare:
        variants.append(("workers=1", ["--workers", "1"]))
    result["variants"] = {}
    for label, extra in variants:
        db_variant = DB_DIR / f"{corpus.name}-variant.db"
        result["variants"][label] = cold_runs(corpus, args.variant_repeat, label, extra, db_variant)
        remove_db(db_variant)

    if args.samples > 0:
        root, db = corpus.root, corpus.db
        if corpus.in_place:
            log(f"[{corpus.name}] copying the tree for the update test (cp -a)")
            root = copy_tree_for_updates(corpus)
            db = DB_DIR / f"{corpus.name}-copy.db"
            remove_db(db)
            shutil.copyfile(corpus.db, db)
        log(f"[{corpus.name}] update latency, {args.samples} files (load {fmt_load(loadavg())})")
        update_args = [
            "--root",
            str(root),
            "--db",
            str(db),
            "--language",
            corpus.language,
            "--probe",
            corpus.probe,
            "--samples",
            str(args.samples),
            "--runs",
            str(args.runs),
        ]
        try:
            result["update"] = run_child("_update", f"{corpus.name}-update", update_args)
        except ChildFailed as exc:
            log(str(exc))
            result["update_error"] = exc.summary
        finally:
            if corpus.in_place:
                shutil.rmtree(root)
                remove_db(db)

    if args.profile != "none":
        for kind in ("cprofile", "pyinstrument") if args.profile == "both" else (args.profile,):
            PROFILE_DIR.mkdir(parents=True, exist_ok=True)
            suffix = "pstats" if kind == "cprofile" else "txt"
            out = PROFILE_DIR / f"{corpus.name}-{kind}.{suffix}"
            db = DB_DIR / f"{corpus.name}-profile.db"
            log(f"[{corpus.name}] profiling one cold index with {kind} -> {out}")
            try:
                profiled = run_child(
                    "_cold",
                    f"{corpus.name}-profile-{kind}",
                    [
                        "--root",
                        str(corpus.root),
                        "--db",
                        str(db),
                        "--profile",
                        kind,
                        "--profile-out",
                        str(out),
                        *PROFILE_WORKERS,
                    ],
                )
            except ChildFailed as exc:
                log(str(exc))
                result[f"profile_{kind}_error"] = exc.summary
                continue
            finally:
                remove_db(db)
            profiled["profile_out"] = str(out)
            result[f"profile_{kind}"] = profiled
    result["load_end"] = loadavg()
    return result


# --- report ---------------------------------------------------------------------------


def _n(value: float) -> str:
    return f"{value:,.0f}"


def _mb(value: float) -> str:
    return f"{value / MIB:,.1f} MiB"


def _ms(value: float) -> str:
    return f"{value * 1000:,.0f} ms" if value >= 0.01 else f"{value * 1000:.1f} ms"


def _mark(ok: bool) -> str:
    return "ok" if ok else "**over**"


def summarise(r: Json) -> dict[str, str]:
    """One column of the table (figure -> text) for a corpus result."""
    cold = r["cold"]
    last = cold[-1]
    counts = last["counts"]
    secs = [c["seconds"] for c in cold]
    med = statistics.median(secs)
    best = min(secs)
    db_main, db_wal = last["db"]["main_open"], last["db"]["wal_open"]
    db_total = db_main + db_wal
    col: dict[str, str] = {}
    skipped = last["summary"]["skipped"]
    col["files indexed (tree files)"] = (
        f"{_n(counts['files'])} ({_n(r['tree']['files'])}; {_n(skipped)} skipped)"
    )
    col["source bytes indexed / tree bytes"] = (
        f"{_mb(counts['source_bytes'])} / {_mb(r['tree']['bytes'])}"
    )
    col["lines indexed"] = _n(counts["lines"])
    col["cold index, s (median; best)"] = f"{med:.2f} ({best:.2f}) of {len(secs)}"
    cpu = [c["cpu_seconds"] for c in cold]
    cpu_main = statistics.median(c.get("cpu_main", c["cpu_seconds"]) for c in cold)
    col["cold index CPU (user+sys): all; main process, s, median"] = (
        f"{statistics.median(cpu):.2f}; {cpu_main:.2f} (workers: {last.get('workers', 1)})"
    )
    col["files/s; lines/s (median run)"] = (
        f"{_n(counts['files'] / med)}; {_n(counts['lines'] / med)}"
    )
    ph = last["phases"]
    col["phases (last run): scan / parse+write / resolve / compact, s"] = (
        f"{ph['scan']:.2f} / {ph['parse_write']:.2f} / {ph['resolve']:.2f} / {ph['compact']:.2f}"
    )
    ct = r.get("ctags")
    if ct:
        col["ctags -R, s (best; median)"] = (
            f"{ct['best']:.2f}; {ct['median']:.2f} ({_n(ct['tags'])} tags)"
        )
        col["cold index / ctags (median/best)"] = f"{med / ct['best']:.1f}x"
    closed = last["db"]["main_closed"] + last["db"]["wal_closed"]
    col["database after run, open: main + wal"] = (
        f"{_mb(db_total)} ({_mb(db_main)} + {_mb(db_wal)})"
    )
    col["database after close (wal checkpointed)"] = _mb(closed)
    src, tree = counts["source_bytes"], r["tree"]["bytes"]
    col["database / indexed source; / tree: open (closed)"] = (
        f"{db_total / src:.2f}x ({closed / src:.2f}x, {_mark(closed / src <= TARGET_DB_RATIO)}); "
        f"{db_total / tree:.2f}x ({closed / tree:.2f}x)"
    )
    pss = max(c["tree_memory"]["peak_pss"] for c in cold)
    col["peak memory, all processes: PSS (RSS sum), max of runs"] = (
        f"{_mb(pss)} ({_mb(max(c['tree_memory']['peak_rss'] for c in cold))}; "
        f"{_mark(pss / MIB <= TARGET_RSS_MB)})"
    )
    col["peak RSS: main process; largest worker"] = (
        f"{_mb(max(c['rss']['peak'] for c in cold))}; "
        f"{_mb(max(c['rss'].get('worker_peak', 0) for c in cold))}"
    )
    col["main RSS after parse / resolve / compact"] = " / ".join(
        _mb(last["rss"][k]) for k in ("after_parse", "after_resolve", "after_compact")
    )
    for label, runs in r.get("variants", {}).items():
        secs_v = statistics.median(c["seconds"] for c in runs)
        cpu_v = statistics.median(c["cpu_seconds"] for c in runs)
        col[f"{label}: cold s; CPU s (medians)"] = f"{secs_v:.2f}; {cpu_v:.2f}"
        col[f"{label}: peak PSS all (main RSS; worker RSS)"] = (
            f"{_mb(max(c['tree_memory']['peak_pss'] for c in runs))} "
            f"({_mb(max(c['rss']['peak'] for c in runs))}; "
            f"{_mb(max(c['rss'].get('worker_peak', 0) for c in runs))})"
        )
        col[f"{label}: main RSS after parse / resolve / compact"] = " / ".join(
            _mb(runs[-1]["rss"][k]) for k in ("after_parse", "after_resolve", "after_compact")
        )
    col["nodes / edges / chunks"] = (
        f"{_n(counts['nodes'])} / {_n(counts['edges'])} / {_n(counts['chunks'])}"
    )
    up = r.get("update")
    if "update_error" in r:
        col["single-file update p50 / p95 / max"] = f"failed: `{r['update_error']}`"
    if up:
        tot = up["update_total"]
        p95 = percentile(tot, 95)
        col["single-file update p50 / p95 / max"] = (
            f"{_ms(percentile(tot, 50))} / {_ms(p95)} / {_ms(max(tot))} of {len(tot)} files "
            f"({_mark(p95 * 1000 <= TARGET_UPDATE_P95_MS)})"
        )
        col["  of which plan_paths / apply, p50"] = (
            f"{_ms(percentile(up['update_plan_paths'], 50))} / "
            f"{_ms(percentile(up['update_apply'], 50))}"
        )
        if up.get("update_resolve"):
            parse_p50 = _ms(percentile(up["update_parse"], 50)) if up["update_parse"] else "n/a"
            col["  in apply: parse / resolve_edges, p50 (names resolved p50)"] = (
                f"{parse_p50} / "
                f"{_ms(percentile(up['update_resolve'], 50))} "
                f"({_n(percentile(up['update_resolve_names'], 50))})"
            )
        col["  first update in process; restore p50"] = (
            f"{_ms(up['first_update'])}; {_ms(percentile(up['restore_total'], 50))}"
        )
        col["run() no-op, median (first in process)"] = (
            f"{_ms(statistics.median(up['noop']))} ({_ms(up['noop_first'])})"
        )
        col["run() after changing one file, median"] = _ms(statistics.median(up["change_run"]))
        col["update process peak RSS"] = _mb(up["peak_rss"])
    warnings = sum(last["warnings"]["counts"].values())
    col["warnings logged (cold run)"] = _n(warnings)
    col["load avg at start / end"] = f"{fmt_load(r['load_start'])} / {fmt_load(r['load_end'])}"
    return col


TARGETS: dict[str, str] = {
    "cold index, s (median; best)": f"stdlib <= {TARGET_COLD_S:.0f} s (aim {AIM_COLD_S:.0f} s)",
    "database / indexed source; / tree: open (closed)": f"<= {TARGET_DB_RATIO:.0f}x source",
    "peak memory, all processes: PSS (RSS sum), max of runs": f"<= {TARGET_RSS_MB:.0f} MB",
    "single-file update p50 / p95 / max": f"p95 <= {TARGET_UPDATE_P95_MS:.0f} ms",
}


def render(results: list[Json], machine: Json, args: argparse.Namespace) -> str:
    cols = [summarise(r) for r in results]
    keys: list[str] = []
    for col in cols:
        keys.extend(k for k in col if k not in keys)
    lines: list[str] = []
    dirty = (
        " with uncommitted changes to " + ", ".join(f"`{p}`" for p in machine["dirty"])
        if machine["dirty"]
        else ""
    )
    if machine["sources"] != machine["sources_end"]:
        dirty += " (**the package sources changed during the run**)"
    lines.append("## Indexing speed (`bench/index_speed.py`)")
    lines.append("")
    lines.append(
        f"Run {machine['date']} at commit `{machine['commit']}`{dirty}; "
        f"machine: nproc {machine['nproc']}, {machine['mem_gib']:.1f} GiB RAM, "
        f"{machine['cpu']}; {machine['python']} on {machine['platform']}; load average "
        f"(1/5/15 min) {fmt_load(machine['load_start'])} at start, "
        f"{fmt_load(machine['load_end'])} at end."
    )
    lines.append("")
    lines.append(
        f"Cold index: {args.repeat} fresh subprocesses per corpus ({args.variant_repeat} per "
        "variant), each into a new database "
        "(default settings; page cache warm: ctags reads the tree first); memory of the "
        f"child and its index workers is sampled every {SAMPLE_SECONDS * 1000:.0f} ms from /proc "
        "(workers listed every second; PSS sums shared pages "
        "once). Variants repeat the cold index with one setting changed. Single-file update: "
        "one warm process with the index open appends a small function to a mid-sized file "
        "(40th-60th size percentile), times `apply(plan_paths([path]))`, then restores the "
        "file and re-indexes it. `run()` figures are medians of "
        f"{args.runs}. Go is indexed in place; its update test edits a `cp -a` copy."
    )
    for r in results:
        if r.get("date", machine["date"]) != machine["date"]:
            lines.append("")
            lines.append(
                f"The {r['name']} figures come from an earlier run of the same script: "
                f"{r['date']} at commit `{r.get('commit', '?')}`."
            )
    lines.append("")
    header = "| figure | " + " | ".join(r["name"] for r in results) + " | target |"
    lines.append(header)
    lines.append("|" + "---|" * (len(results) + 2))
    for key in keys:
        target = TARGETS.get(key, "")
        cells = [col.get(key, "") for col in cols]
        lines.append(f"| {key} | " + " | ".join(cells) + f" | {target} |")
    lines.append("")
    for r in results:
        lines.extend(_details(r))
    for r in results:
        lines.extend(_profile_lines(r))
    return "\n".join(lines).rstrip() + "\n"


def _details(r: Json) -> list[str]:
    last = r["cold"][-1]
    root = str(r["root"])
    shown = os.path.relpath(root, REPO_DIR) if root.startswith(str(REPO_DIR.parent)) else root
    out = [f"**{r['name']}** ({shown}):"]
    langs = ", ".join(f"{lang} {v['files']}" for lang, v in list(last["by_language"].items())[:8])
    out.append(f"- files by language: {langs}")
    skipped = ", ".join(f"{reason}: {n}" for reason, n in last["skipped_by_reason"].items())
    out.append(f"- skipped by reason: {skipped or 'none'}")
    out.append(
        f"- parse errors in {last['counts']['parse_error_files']} files; invalid UTF-8 in "
        f"{last['counts']['invalid_utf8_files']}"
    )
    warns = last["warnings"]["counts"]
    if warns:
        out.append(
            "- warnings: " + "; ".join(f"{n} x `{msg}`" for msg, n in Counter(warns).most_common(6))
        )
    for key, value in r.items():
        if key.endswith("_error"):
            out.append(f"- {key.removesuffix('_error').replace('_', ' ')} failed: `{value}`")
    up = r.get("update")
    if up:
        if up["noop_plan_to_index"]:
            shown = ", ".join(up["noop_plan_to_index"][:5])
            out.append(
                f"- a no-op plan() still lists {len(up['noop_plan_to_index'])} files to index "
                f"(read again on every run): {shown}"
            )
        if up["anomalies"]:
            out.append("- anomalies: " + "; ".join(up["anomalies"][:5]))
    out.append("")
    return out


def _profile_lines(r: Json) -> list[str]:
    out: list[str] = []
    for kind in ("cprofile", "pyinstrument"):
        prof = r.get(f"profile_{kind}")
        if not prof:
            continue
        out.append(
            f"**{r['name']}, {kind}** (one cold index, {prof['seconds']:.1f} s wall / "
            f"{prof['cpu_seconds']:.1f} s CPU under the profiler), top 10 by self time:"
        )
        out.append("")
        out.append("| self s | function |")
        out.append("|---|---|")
        for row in prof["profile_top"][:10]:
            self_time = row.get("tottime", row.get("self", 0.0))
            out.append(f"| {self_time:.2f} | `{row['function']}` |")
        out.append("")
    return out


def write_section(out: Path, body: str) -> None:
    section = f"{SECTION_BEGIN}\n{body.rstrip()}\n{SECTION_END}\n"
    if out.exists():
        text = out.read_text()
        pattern = re.compile(
            re.escape(SECTION_BEGIN) + r".*?" + re.escape(SECTION_END) + r"\n?", re.DOTALL
        )
        if pattern.search(text):
            text = pattern.sub(lambda _m: section, text, count=1)
        else:
            text = text.rstrip() + "\n\n" + section
    else:
        text = (
            "# Benchmark results\n\n"
            "Latest figures from the scripts in `bench/`. Each script owns the section\n"
            "between its `<!-- name:begin -->` / `<!-- name:end -->` markers and rewrites\n"
            "only that; each section says when, where and under what load it ran.\n\n" + section
        )
    out.write_text(text)


# --- embedding memory ---------------------------------------------------------------

EMBED_SAMPLE_SECONDS = 0.5


def current_rss() -> int:
    """This process's resident size now (VmRSS), in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def child_embed(args: argparse.Namespace) -> Json:
    """Compute the vectors of a lexical index (no vectors yet) as `codesift embed`
    does; report chunks, time, peak RSS and RSS over time."""
    import threading

    sys.path.insert(0, str(SERVER_DIR))
    from codesift.config import load_settings
    from codesift.embedding import Embedder, fill_vectors, vector_coverage
    from codesift.embedding.model import cache_dir_from
    from codesift.store.database import open_database

    root, db = Path(args.root), Path(args.db)
    load_start = loadavg()
    settings = load_settings(root, {"index": {"db_path": str(db)}})
    rss_start = current_rss()
    conn = open_database(db)
    layers = settings.embedding.layers
    coverage = vector_coverage(conn, layers)
    if coverage.embedded:
        raise SystemExit(f"{db} already has {coverage.embedded} vectors")
    # As the CLI makes it (cli.py).
    embedder = Embedder(
        cache_dir_from(settings.embedding.cache_dir),
        max_tokens=settings.embedding.max_tokens,
        batch_size=settings.embedding.batch_size,
        quantized_queries=settings.embedding.quantized_queries,
        model=settings.embedding.model,
    )
    load_started = time.perf_counter()
    embedder.embed(["load the model"])
    load_seconds = time.perf_counter() - load_started
    rss_model = current_rss()
    peak_before = maxrss_bytes()
    samples: list[tuple[float, int, int]] = []  # (seconds, chunks done, rss)
    done_now = [0]
    stop = threading.Event()
    started = time.perf_counter()

    def sample() -> None:
        while not stop.wait(EMBED_SAMPLE_SECONDS):
            samples.append((time.perf_counter() - started, done_now[0], current_rss()))

    def progress(done: int, total: int) -> None:
        done_now[0] = done

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    cpu_started = cpu_seconds()
    embedded = fill_vectors(
        conn,
        embedder,
        layers=layers,
        progress=progress,
        max_chunks=args.limit or None,
    )
    seconds = time.perf_counter() - started
    cpu = cpu_seconds() - cpu_started
    stop.set()
    sampler.join()
    samples.append((seconds, embedded, current_rss()))
    conn.close()
    return {
        "root": str(root),
        "layers": list(layers),
        "model": settings.embedding.model,
        "batch_size": settings.embedding.batch_size,
        "max_tokens": settings.embedding.max_tokens,
        "embeddable": coverage.embeddable,
        "limit": args.limit,
        "embedded": embedded,
        "seconds": seconds,
        "cpu_seconds": cpu,
        "load_seconds": load_seconds,
        "rss": {
            "start": rss_start,
            "after_model": rss_model,
            "peak_before_fill": peak_before,
            "peak": maxrss_bytes(),
        },
        "samples": samples,
        "load": {"start": load_start},
    }


def rss_by_progress(samples: Sequence[Sequence[float]], embedded: int) -> list[tuple[int, int]]:
    """(chunks done, highest RSS so far) at each tenth of the chunks embedded."""
    marks: list[tuple[int, int]] = []
    highest = 0
    index = 0
    for tenth in range(1, 11):
        goal = embedded * tenth // 10
        while index < len(samples) and samples[index][1] <= goal:
            highest = max(highest, int(samples[index][2]))
            index += 1
        marks.append((goal, highest))
    return marks


def bench_embedding(corpus: Corpus, limit: int) -> Json:
    """Build the corpus's lexical index when missing (own subprocess), then embed a
    copy of it in a fresh subprocess."""
    lexical = DB_DIR / f"{corpus.name}-lexical.db"
    if not lexical.exists():
        log(f"[{corpus.name}] building the lexical index {lexical} (not measured here)")
        run_child(
            "_cold", f"{corpus.name}-lexical", ["--root", str(corpus.root), "--db", str(lexical)]
        )
    db = DB_DIR / f"{corpus.name}-embed.db"
    remove_db(db)
    shutil.copyfile(lexical, db)
    log(
        f"[{corpus.name}] embedding {limit or 'all'} chunks in a fresh process "
        f"(load {fmt_load(loadavg())})"
    )
    try:
        result = run_child(
            "_embed",
            f"{corpus.name}-embed",
            ["--root", str(corpus.root), "--db", str(db), "--limit", str(limit)],
        )
    finally:
        remove_db(db)
    result["name"] = corpus.name
    result["load"]["end"] = loadavg()
    log(
        f"    {result['embedded']} chunks in {result['seconds']:.1f} s "
        f"({result['embedded'] / max(result['seconds'], 1e-9):.1f}/s), peak RSS "
        f"{result['rss']['peak'] / MIB:.0f} MiB"
    )
    return result


def render_embedding(results: list[Json], machine: Json) -> str:
    lines = ["## Embedding memory and speed (`bench/index_speed.py --embed-only`)", ""]
    dirty = (
        " with uncommitted changes to " + ", ".join(f"`{p}`" for p in machine["dirty"])
        if machine["dirty"]
        else ""
    )
    lines.append(
        f"Run {machine['date']} at commit `{machine['commit']}`{dirty}; "
        f"machine: nproc {machine['nproc']}, {machine['mem_gib']:.1f} GiB RAM, "
        f"{machine['cpu']}; {machine['python']}; load average (1/5/15 min) "
        f"{fmt_load(machine['load_start'])} at start, {fmt_load(machine['load_end'])} at end."
    )
    lines.append("")
    first = results[0]
    lines.append(
        "Each corpus's lexical index is built first in its own process; a fresh process "
        "then opens a copy and computes vectors as `codesift index` / `codesift embed` do "
        f"(default settings: layers {', '.join(first['layers'])}, batch size "
        f"{first['batch_size']}, {first['max_tokens']} tokens). Peak RSS is the embedding "
        "process's ru_maxrss (model load included); RSS is also sampled every "
        f"{EMBED_SAMPLE_SECONDS:.1f} s against chunks done. When the run is limited "
        "(--embed-limit), the peak was measured over that many chunks, the first pending "
        "ones by id: the RSS by progress row shows it flat well before the end."
    )
    lines.append("")
    header = "| figure | " + " | ".join(r["name"] for r in results) + " | target |"
    lines.append(header)
    lines.append("|" + "---|" * (len(results) + 2))
    rows: dict[str, list[str]] = {}

    def add(key: str, values: list[str], target: str = "") -> None:
        rows[key] = [*values, target]

    add(
        "chunks embedded (of embeddable)",
        [f"{_n(r['embedded'])} (of {_n(r['embeddable'])})" for r in results],
    )
    add(
        "time, s; chunks/s",
        [f"{r['seconds']:.1f}; {r['embedded'] / max(r['seconds'], 1e-9):.1f}" for r in results],
    )
    add(
        "CPU s (user+sys) per chunk",
        [f"{r['cpu_seconds'] / max(r['embedded'], 1):.3f}" for r in results],
    )
    add(
        "peak RSS of the embedding process",
        [
            f"{_mb(r['rss']['peak'])} ({_mark(r['rss']['peak'] / MIB <= TARGET_EMBED_RSS_MB)})"
            for r in results
        ],
        f"<= {TARGET_EMBED_RSS_MB:.0f} MB",
    )
    add(
        "peak PSS / RSS sampled from outside",
        [
            f"{_mb(r['tree_memory']['peak_pss'])} / {_mb(r['tree_memory']['peak_rss'])}"
            for r in results
        ],
    )
    add(
        "RSS at start; with the model loaded (load s)",
        [
            f"{_mb(r['rss']['start'])}; {_mb(r['rss']['after_model'])} ({r['load_seconds']:.1f})"
            for r in results
        ],
    )
    add(
        "highest RSS by chunks done (each tenth)",
        [
            ", ".join(
                f"{done}: {rss / MIB:.0f}"
                for done, rss in rss_by_progress(r["samples"], r["embedded"])
            )
            for r in results
        ],
    )
    add(
        "load avg at start / end",
        [f"{fmt_load(r['load']['start'])} / {fmt_load(r['load']['end'])}" for r in results],
    )
    for key, values in rows.items():
        lines.append(f"| {key} | " + " | ".join(values) + " |")
    return "\n".join(lines).rstrip() + "\n"


def write_embed_section(out: Path, body: str) -> None:
    section = f"{EMBED_SECTION_BEGIN}\n{body.rstrip()}\n{EMBED_SECTION_END}\n"
    text = out.read_text() if out.exists() else "# Benchmark results\n"
    pattern = re.compile(
        re.escape(EMBED_SECTION_BEGIN) + r".*?" + re.escape(EMBED_SECTION_END) + r"\n?",
        re.DOTALL,
    )
    if pattern.search(text):
        text = pattern.sub(lambda _m: section, text, count=1)
    elif SECTION_END in text:  # right after the lexical indexing section
        text = text.replace(SECTION_END + "\n", SECTION_END + "\n\n" + section, 1)
    else:
        text = text.rstrip() + "\n\n" + section
    out.write_text(text)


def embed_main(args: argparse.Namespace) -> int:
    machine = machine_info()
    machine["load_start"] = loadavg()
    corpora: list[Corpus] = []
    if args.embed_corpus in ("go", "all"):
        go = prepare_go()
        if go is not None:
            corpora.append(go)
    if args.embed_corpus in ("rust", "all"):
        rust = prepare_rust()
        if rust is not None:
            corpora.append(rust)
    if args.embed_corpus == "python":
        corpora.append(prepare_python())
    results: list[Json] = []
    for corpus in corpora:
        try:
            results.append(bench_embedding(corpus, args.embed_limit))
        except ChildFailed as exc:
            log(f"[{corpus.name}] {exc}")
    if not results:
        return 1
    machine["load_end"] = loadavg()
    RAW_EMBED_RESULTS.write_text(json.dumps({"machine": machine, "results": results}, indent=1))
    report = render_embedding(results, machine)
    print(report)
    if args.write:
        write_embed_section(args.out, report)
        write_results(
            "index_speed_embed", {"tables": markdown_tables(report)}, machine_info=machine
        )
        log(f"updated {args.out}")
    return 0


# --- entry points ---------------------------------------------------------------------


def child_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="index_speed.py " + argv[0])
    parser.add_argument("--json-out", required=True)
    parser.add_argument("--root", required=True)
    parser.add_argument("--db", required=True)
    parser.add_argument("--mmap-size", type=int, default=None)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--profile", choices=["none", "cprofile", "pyinstrument"], default="none")
    parser.add_argument("--profile-out", default="")
    parser.add_argument("--language", default="python")
    parser.add_argument("--probe", default=PY_PROBE)
    parser.add_argument("--samples", type=int, default=30)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args(argv[1:])
    if argv[0] == "_embed":
        result = child_embed(args)
    else:
        result = child_cold(args) if argv[0] == "_cold" else child_update(args)
    Path(args.json_out).write_text(json.dumps(result))
    return 0


def take_run_lock() -> TextIO | None:
    """One run at a time: two runs share the databases under bench/.data/db and
    would slow each other down. The lock lasts as long as the returned file is open."""
    import fcntl

    handle = LOCK_FILE.open("a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "unknown"
        log(f"another bench/index_speed.py run holds {LOCK_FILE} ({holder}); try again later")
        handle.close()
        return None
    handle.seek(0)
    handle.truncate()
    handle.write(f"pid {os.getpid()}, started {datetime.now(UTC):%Y-%m-%d %H:%M:%S} UTC\n")
    handle.flush()
    return handle


def earlier_results(corpora: list[Corpus]) -> list[Json]:
    """Results of corpora not run now, from the last raw results (for --merge)."""
    if not RAW_RESULTS.exists():
        return []
    earlier = json.loads(RAW_RESULTS.read_text())
    names = {corpus.name for corpus in corpora}
    kept: list[Json] = []
    for result in earlier.get("results", []):
        if result["name"] not in names:
            result.setdefault("date", earlier["machine"]["date"])
            result.setdefault("commit", earlier["machine"]["commit"])
            kept.append(result)
    return kept


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("_cold", "_update", "_embed"):
        return child_main(argv)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--corpus", choices=["python", "go", "all"], default="all")
    parser.add_argument("--repeat", type=int, default=3, help="cold runs per corpus")
    parser.add_argument("--variant-repeat", type=int, default=2, help="cold runs per variant")
    parser.add_argument("--ctags-repeat", type=int, default=3)
    parser.add_argument("--samples", type=int, default=30, help="single-file updates (0: skip)")
    parser.add_argument("--runs", type=int, default=5, help="timed run() calls of each kind")
    parser.add_argument(
        "--workers-compare", action="store_true", help="also cold-index with index.workers=1"
    )
    parser.add_argument(
        "--mmap-compare",
        action="store_true",
        help="also cold-index with the other writer mmap_size (0 or 256 MiB)",
    )
    parser.add_argument(
        "--profile",
        choices=["none", "cprofile", "pyinstrument", "both"],
        default="none",
        help="profile one extra cold index",
    )
    parser.add_argument("--write", action="store_true", help="update the section in --out")
    parser.add_argument(
        "--merge",
        action="store_true",
        help="also report the other corpora's figures from the last run (bench/.data)",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument(
        "--embed-only",
        action="store_true",
        help="measure only embedding (vectors of a lexical index): peak RSS, chunks/s",
    )
    parser.add_argument("--embed-corpus", choices=["go", "rust", "python", "all"], default="all")
    parser.add_argument(
        "--embed-limit",
        type=int,
        default=DEFAULT_EMBED_LIMIT,
        help="embed only the first N pending chunks (0: all)",
    )
    index_phases.add_arguments(parser)
    args = parser.parse_args(argv)

    for folder in (CORPORA_DIR, DB_DIR, LOG_DIR):
        folder.mkdir(parents=True, exist_ok=True)
    lock = take_run_lock()
    if lock is None:
        return 2
    if args.embed_only:
        return embed_main(args)
    if args.side_by_side:
        return index_phases.main(args)
    machine = machine_info()
    machine["load_start"] = loadavg()
    corpora: list[Corpus] = []
    if args.corpus in ("python", "all"):
        corpora.append(prepare_python())
    if args.corpus in ("go", "all"):
        go = prepare_go()
        if go is not None:
            corpora.append(go)
    kept = earlier_results(corpora) if args.merge else []
    results: list[Json] = []
    for corpus in corpora:
        try:
            result = bench_corpus(corpus, args)
        except ChildFailed as exc:  # its cold index failed: nothing to report for it
            log(f"[{corpus.name}] {exc}")
            continue
        result["date"], result["commit"] = machine["date"], machine["commit"]
        results.append(result)
        # Saved after each corpus, so a later failure does not lose the figures.
        RAW_RESULTS.write_text(
            json.dumps({"machine": machine, "results": kept + results}, indent=1)
        )
    if not results:
        return 1
    results = kept + results
    machine["load_end"] = loadavg()
    machine["sources_end"] = package_digest()
    RAW_RESULTS.write_text(json.dumps({"machine": machine, "results": results}, indent=1))
    report = render(results, machine, args)
    print(report)
    for r in results:
        for kind in ("cprofile", "pyinstrument"):
            prof = r.get(f"profile_{kind}")
            if prof:
                print(
                    f"\n{r['name']} {kind} top 15 (self time), profiled run "
                    f"{prof['seconds']:.2f} s:"
                )
                for row in prof["profile_top"][:15]:
                    self_time = row.get("tottime", row.get("self", 0.0))
                    print(f"  {self_time:7.2f} s  {row['function']}")
    if args.write:
        write_section(args.out, report)
        write_results("index_speed", {"tables": markdown_tables(report)}, machine_info=machine)
        log(f"updated {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
