#!/usr/bin/env python3
"""Git history speed: full and incremental line-history passes, the cost of a
since-filter in queries, and `git blame` of every file as the reference.

Run from the repository root (with the project's interpreter):

    PYTHONPATH=server python bench/history_speed.py [--commits 5000] [--files 1000]
        [--write] [--out bench/RESULTS.md]

A repository is generated under bench/.data/history-repo (git fast-import): one
commit adds --files Python files of ~12 small functions each, then each later
commit edits 1-3 files (changes a line, adds, deletes or moves a function), one
commit per hour of committer time. Then, in one run:

1. the index is built (the Indexer, no vectors; its history hook does a full pass);
2. full pass: history tables cleared, `update_history` walks every commit and
   times every file's nodes and chunks (median of --repeat);
3. incremental pass: 10 new commits (git commit), then `update_history` alone,
   then `Indexer.run()` (re-index the changed files + history) end to end;
4. query overhead: the same queries with and without a since-filter (lexical and
   symbol streams through Searcher, and the vector stream over random vectors
   given to every chunk), medians of warm runs;
5. reference: `git blame --porcelain` of every file (subprocesses, sequential),
   and the share of lines whose last commit equals blame's;
6. size: history_files / history_commits bytes (dbstat), database growth.

With --write the section between `<!-- history_speed:begin -->` and
`<!-- history_speed:end -->` in --out is replaced; raw figures go to
bench/.data/history_speed-last.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from runinfo import head_commit, markdown_tables, write_results, write_section

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
DATA_DIR = BENCH_DIR / ".data"
sys.path.insert(0, str(REPO_DIR / "server"))

import numpy as np  # noqa: E402

from codesift.config import load_settings  # noqa: E402
from codesift.history.update import update_history  # noqa: E402
from codesift.indexer import Indexer  # noqa: E402
from codesift.retrieval import Searcher, SearchRequest  # noqa: E402
from codesift.retrieval.streams import StreamFilters, vector_stream  # noqa: E402
from codesift.store.database import open_database, scalar  # noqa: E402
from codesift.store.sqlite.search import SqliteSearchStore  # noqa: E402
from codesift.timespec import TimeFilter  # noqa: E402

SECTION_BEGIN = "<!-- history_speed:begin -->"
SECTION_END = "<!-- history_speed:end -->"
DEEP_BEGIN = "<!-- history_deep:begin -->"
DEEP_END = "<!-- history_deep:end -->"
START_TIME = 1_600_000_000
WORDS = "ledger invoice charge refund account balance payment retry schedule audit".split()


def loadavg() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def machine() -> str:
    cpu = ""
    mem = 0
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            mem = int(line.split()[1]) * 1024
    return (
        f"nproc {os.cpu_count()}, {mem / 2**30:.1f} GiB RAM, {cpu}; CPython "
        f"{platform.python_version()} on {platform.platform()}; git "
        + subprocess.run(["git", "--version"], capture_output=True, text=True).stdout.split()[-1]
    )


# --- the generated repository ---------------------------------------------------------


class Generator:
    def __init__(self, files: int, seed: int = 5) -> None:
        self.rng = random.Random(seed)
        self.counter = 0
        self.renamed = 0
        self.files: dict[str, list[list[str]]] = {}
        for i in range(files):
            path = f"pkg{i % 40:02d}/mod_{i:04d}.py"
            self.files[path] = [self.function() for _ in range(self.rng.randint(8, 16))]

    def function(self) -> list[str]:
        self.counter += 1
        word = self.rng.choice(WORDS)
        name = f"{word}_{self.counter}"
        body = [
            f"    value = {self.rng.choice(WORDS)}.get({self.rng.randrange(1000)})"
            for _ in range(self.rng.randint(2, 8))
        ]
        return [
            f"def {name}({word}):",
            f'    """Handle the {word} {self.counter}."""',
            *body,
            "    return value",
            "",
        ]

    def text(self, path: str) -> bytes:
        return "\n".join(line for fn in self.files[path] for line in fn).encode() + b"\n"

    def edit(self) -> list[str]:
        """Edit 1-3 files (a line, a function added, deleted or moved); about one
        commit in 60 also renames a file. Returns the paths whose content changed."""
        touched = []
        for _ in range(self.rng.randint(1, 3)):
            path = self.rng.choice(list(self.files))
            fns = self.files[path]
            op = self.rng.random()
            if op < 0.45 and fns:
                fn = self.rng.choice(fns)
                at = self.rng.randrange(2, len(fn) - 2)
                fn[at] = f"    value = {self.rng.choice(WORDS)}.put({self.rng.randrange(1000)})"
            elif op < 0.75 or len(fns) < 4:
                fns.insert(self.rng.randint(0, len(fns)), self.function())
            elif op < 0.9:
                fns.pop(self.rng.randrange(len(fns)))
            else:
                fns.insert(self.rng.randint(0, len(fns) - 1), fns.pop(self.rng.randrange(len(fns))))
            touched.append(path)
        return sorted(set(touched))

    def rename(self) -> tuple[str, str]:
        """Move a file to another package (its content unchanged)."""
        old = self.rng.choice(list(self.files))
        self.renamed += 1
        new = f"pkg{self.rng.randrange(40):02d}/moved_{self.renamed:04d}_{old.rsplit('/', 1)[1]}"
        self.files[new] = self.files.pop(old)
        return old, new


def fast_import(repo: Path, gen: Generator, commits: int, *, merges: bool = False) -> None:
    """Write `commits` commits on main. With `merges`, about every 40th commit of
    main is a merge of a side branch of 1-3 commits (counted in `commits`), and
    about one commit in 60 renames a file."""
    proc = subprocess.Popen(["git", "fast-import", "--quiet"], cwd=repo, stdin=subprocess.PIPE)
    assert proc.stdin is not None
    out = proc.stdin

    def data(payload: bytes) -> None:
        out.write(f"data {len(payload)}\n".encode() + payload + b"\n")

    def commit(
        ref: str,
        mark: int,
        parent: int | None,
        merge: int | None,
        paths: list[str],
        renames: list[tuple[str, str]],
        message: str,
    ) -> None:
        out.write(f"commit {ref}\n".encode())
        out.write(f"mark :{mark}\n".encode())
        when = START_TIME + mark * 3600
        out.write(f"committer Bench <bench@example.com> {when} +0000\n".encode())
        data(message.encode())
        if parent is not None:
            out.write(f"from :{parent}\n".encode())
        if merge is not None:
            out.write(f"merge :{merge}\n".encode())
        for old, new in renames:
            out.write(f'R "{old}" "{new}"\n'.encode())
        for path in paths:
            out.write(f"M 100644 inline {path}\n".encode())
            data(gen.text(path))

    n = 1
    commit("refs/heads/main", 1, None, None, list(gen.files), [], "change 1: the first files")
    main = 1
    while n < commits:
        if merges and commits - n > 4 and gen.rng.random() < 1 / 40:
            side_paths: set[str] = set()
            side = main
            for _ in range(gen.rng.randint(1, 3)):
                n += 1
                paths = gen.edit()
                side_paths.update(paths)
                commit("refs/heads/side", n, side, None, paths, [], f"side {n}: {', '.join(paths)}")
                side = n
            n += 1
            # The merge's tree is the side branch's (main did not move meanwhile).
            commit("refs/heads/main", n, main, side, sorted(side_paths), [], f"merge side {n}")
            main = n
            continue
        n += 1
        renames = [gen.rename()] if merges and gen.rng.random() < 1 / 60 else []
        paths = gen.edit()
        label = ", ".join(p.rsplit("/", 1)[-1] for p in paths[:3])
        commit("refs/heads/main", n, main, None, paths, renames, f"change {n}: {label}")
        main = n
    out.close()
    if proc.wait() != 0:
        raise SystemExit("git fast-import failed")


def make_repo(path: Path, files: int, commits: int, *, merges: bool = False) -> Generator:
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    git = ["git", "-C", str(path)]
    subprocess.run([*git, "init", "-q", "-b", "main"], check=True)
    for key, value in (
        ("user.name", "Bench"),
        ("user.email", "bench@example.com"),
        ("commit.gpgsign", "false"),
        ("gc.auto", "0"),
    ):
        subprocess.run([*git, "config", key, value], check=True)
    gen = Generator(files)
    fast_import(path, gen, commits, merges=merges)
    subprocess.run([*git, "reset", "-q", "--hard", "main"], check=True)
    return gen


def commit_more(path: Path, gen: Generator, count: int, base: int) -> None:
    for n in range(count):
        for rel in gen.edit():
            (path / rel).write_bytes(gen.text(rel))
        when = f"@{START_TIME + (base + n + 1) * 3600} +0000"
        env = {**os.environ, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
        subprocess.run(["git", "-C", str(path), "add", "-A"], check=True)
        subprocess.run(["git", "-C", str(path), "commit", "-qm", f"more {n}"], check=True, env=env)


# --- measurements ---------------------------------------------------------------------


def median_ms(fn: Any, runs: int) -> float:
    fn()
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples)


def blame_reference(repo: Path, paths: list[str]) -> tuple[float, dict[str, list[str]]]:
    started = time.perf_counter()
    out: dict[str, list[str]] = {}
    for rel in paths:
        text = subprocess.run(
            ["git", "-C", str(repo), "blame", "--porcelain", "--", rel],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        shas = []
        for line in text.splitlines():
            parts = line.split()
            if len(parts) >= 3 and len(parts[0]) == 40 and parts[1].isdigit():
                shas.append(parts[0])
        out[rel] = shas
    return time.perf_counter() - started, out


def table_bytes(conn: Any, names: list[str]) -> dict[str, int]:
    try:
        rows = conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name").fetchall()
        sizes = {str(n): int(s) for n, s in rows}
        return {name: sizes.get(name, 0) for name in names}
    except Exception:  # dbstat not compiled in
        return {}


def run(args: argparse.Namespace) -> dict[str, Any]:
    from codesift.history.lines import decode_lines

    results: dict[str, Any] = {"load_start": loadavg(), "machine": machine()}
    repo = DATA_DIR / "history-repo"
    t0 = time.perf_counter()
    gen = make_repo(repo, args.files, args.commits)
    results["generate_s"] = time.perf_counter() - t0
    results["commits"] = args.commits
    results["files"] = len(gen.files)
    results["lines"] = sum(len(gen.text(p).splitlines()) for p in gen.files)
    db_path = DATA_DIR / "history-bench.db"
    for suffix in ("", "-wal", "-shm"):
        Path(str(db_path) + suffix).unlink(missing_ok=True)
    settings = load_settings(repo, {"index": {"workers": 1}})
    conn = open_database(db_path)
    t0 = time.perf_counter()
    summary = Indexer(repo, settings, conn).run()
    results["index_s"] = time.perf_counter() - t0  # searchable from here
    update_history(conn, repo)
    results["index_with_history_s"] = time.perf_counter() - t0
    results["nodes"] = int(scalar(conn, "SELECT count(*) FROM nodes"))
    results["chunks"] = int(scalar(conn, "SELECT count(*) FROM chunks"))
    results["indexed_files"] = summary.files

    full = []
    for _ in range(args.repeat):
        with conn:
            conn.execute("DELETE FROM history_files")
            conn.execute("DELETE FROM history_commits")
            conn.execute("DELETE FROM meta WHERE key LIKE 'history_%'")
            conn.execute("UPDATE files SET history_at = NULL")
        conn.execute("VACUUM")
        stats = update_history(conn, repo)
        full.append((stats.seconds, stats.walk_seconds, stats.commits, stats.files_timed))
    full.sort()
    mid = full[len(full) // 2]
    results["full_s"], results["full_walk_s"] = mid[0], mid[1]
    results["full_runs_s"] = [round(f[0], 2) for f in full]
    results["full_commits"], results["full_files_timed"] = mid[2], mid[3]
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    sizes = table_bytes(
        conn,
        ["history_files", "history_commits", "chunks_changed", "chunks_created", "chunks", "nodes"],
    )
    results["table_bytes"] = sizes
    results["history_blob_bytes"] = int(
        scalar(conn, "SELECT sum(length(lines)) FROM history_files")
    )
    results["db_bytes"] = db_path.stat().st_size

    # the reference: git blame of every file, and agreement of our last-change column
    paths = sorted(gen.files)
    blame_s, blamed = blame_reference(repo, paths)
    results["blame_s"] = blame_s
    oid = {int(i): str(o) for i, o in conn.execute("SELECT id, oid FROM history_commits")}
    same = total = files_same = 0
    for rel in paths:
        row = conn.execute("SELECT lines FROM history_files WHERE path = ?", (rel,)).fetchone()
        ours = [oid[n] for n in decode_lines(bytes(row[0])).last] if row else []
        ref = blamed[rel]
        total += len(ref)
        same += sum(1 for a, b in zip(ours, ref, strict=False) if a == b)
        files_same += ours == ref
    results["blame_lines_equal"] = (same, total)
    results["blame_files_equal"] = (files_same, len(paths))

    # incremental: 10 new commits
    commit_more(repo, gen, 10, args.commits)
    t0 = time.perf_counter()
    stats = update_history(conn, repo)
    results["incr_s"] = time.perf_counter() - t0
    results["incr_walk_s"] = stats.walk_seconds
    results["incr_commits"] = stats.commits
    results["incr_files_timed"] = stats.files_timed
    commit_more(repo, gen, 10, args.commits + 10)
    t0 = time.perf_counter()
    summary = Indexer(repo, settings, conn).run()
    update_history(conn, repo)
    results["incr_index_s"] = time.perf_counter() - t0
    results["incr_index_files"] = summary.indexed
    t0 = time.perf_counter()
    Indexer(repo, settings, conn).run()
    update_history(conn, repo)
    results["noop_index_s"] = time.perf_counter() - t0

    # query overhead
    searcher = Searcher(conn)
    head_time = START_TIME + (args.commits + 20) * 3600
    recent = head_time - 30 * 24 * 3600  # the last month: ~720 of the commits
    queries = ["ledger balance", "refund", "payment retry schedule", "audit_120", "charge account"]
    query_rows = []
    for since, label in (
        (None, "none"),
        (recent, "since last month"),
        (START_TIME + 3600 * args.commits // 2, "since mid-history"),
    ):

        def one(since: float | None = since) -> None:
            for q in queries:
                searcher.search(SearchRequest(query=q, since=since, layers=("code", "summary")))

        query_rows.append((label, median_ms(one, args.query_runs) / len(queries)))
    results["query_ms"] = query_rows
    passing = {
        label: int(scalar(conn, "SELECT count(*) FROM chunks WHERE changed >= ?", (since,)))
        for since, label in (
            (recent, "since last month"),
            (START_TIME + 3600 * args.commits // 2, "since mid-history"),
        )
    }
    results["chunks_passing"] = passing

    rng = np.random.default_rng(1)
    rows = conn.execute("SELECT id, layer FROM chunks WHERE layer IN ('code','summary')").fetchall()
    with conn:
        conn.execute("DELETE FROM chunk_vectors")
        for cid, layer in rows:
            conn.execute(
                "INSERT INTO chunk_vectors (chunk_id, layer, embedding) VALUES (?, ?, vec_int8(?))",
                (cid, layer, rng.integers(-127, 127, 384, dtype=np.int8).tobytes()),
            )
    qv = rng.integers(-127, 127, 384, dtype=np.int8).tobytes()
    vec_rows = []
    store = SqliteSearchStore(conn)
    for since, label in (
        (None, "none"),
        (recent, "since last month"),
        (START_TIME + 3600 * args.commits // 2, "since mid-history"),
    ):
        filters = StreamFilters(("code", "summary"), times=TimeFilter(since=since))
        vec_rows.append(
            (label, median_ms(lambda f=filters: vector_stream(store, qv, f, 300), args.query_runs))
        )
    results["vector_ms"] = vec_rows
    results["vectors"] = len(rows)
    results["load_end"] = loadavg()
    conn.close()
    return results


def render(r: dict[str, Any], commit: str) -> str:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    eq_lines, total_lines = r["blame_lines_equal"]
    eq_files, total_files = r["blame_files_equal"]
    tb = r.get("table_bytes", {})
    mib = 2**20
    lines = [
        "## Git history speed (`bench/history_speed.py`)",
        "",
        f"Run {now} at commit `{commit}`; machine: {r['machine']}; load average "
        f"(1/5/15 min) {r['load_start']} at start, {r['load_end']} at end.",
        "",
        f"Generated repository: {r['commits']:,} commits (one per hour, linear) over "
        f"{r['files']:,} Python files, {r['lines']:,} lines at HEAD; each commit after the "
        "first edits 1-3 files (change a line, add, delete or move a function). "
        f"Index: {r['nodes']:,} nodes, {r['chunks']:,} chunks, no vectors except for the "
        "vector-stream row. Full pass: history tables cleared, `update_history` "
        f"(median of {len(r['full_runs_s'])}: {r['full_runs_s']} s).",
        "",
        "| figure | value |",
        "|---|---|",
        f"| full pass: walk {r['full_commits']:,} commits + time {r['full_files_timed']:,} "
        f"files' nodes and chunks, s | {r['full_s']:.2f} (walk {r['full_walk_s']:.2f}) |",
        f"| reference: `git blame --porcelain` of every file, sequential, s | {r['blame_s']:.1f} |",
        f"| full pass / blame of every file | {r['full_s'] / r['blame_s']:.3f} |",
        f"| last-change commit equal to git blame: lines; files | {eq_lines:,} / "
        f"{total_lines:,} ({eq_lines / max(total_lines, 1):.2%}); {eq_files} / {total_files} |",
        f"| incremental pass after {r['incr_commits']} new commits (`update_history`), ms "
        f"| {r['incr_s'] * 1000:.0f} (walk {r['incr_walk_s'] * 1000:.0f}; "
        f"{r['incr_files_timed']} files re-timed) |",
        f"| `Indexer.run()` + `update_history` after 10 more commits ({r['incr_index_files']}"
        f" files re-indexed), ms | {r['incr_index_s'] * 1000:.0f} |",
        f"| `Indexer.run()` + `update_history` with nothing new, ms"
        f" | {r['noop_index_s'] * 1000:.0f} |",
        f"| index build (searchable), then its full history pass, s | {r['index_s']:.1f},"
        f" {r['index_with_history_s']:.1f} |",
        f"| history_files blobs (RLE + zlib) / table pages | {r['history_blob_bytes'] / mib:.2f} "
        f"MiB / {tb.get('history_files', 0) / mib:.2f} MiB |",
        f"| history_commits table; chunks_changed + chunks_created indexes | "
        f"{tb.get('history_commits', 0) / mib:.2f} MiB; "
        f"{(tb.get('chunks_changed', 0) + tb.get('chunks_created', 0)) / mib:.2f} MiB |",
        f"| database after full pass (VACUUMed) | {r['db_bytes'] / mib:.1f} MiB |",
    ]
    for label, ms in r["query_ms"]:
        extra = f" ({r['chunks_passing'][label]:,} chunks pass)" if label != "none" else ""
        lines.append(
            f"| search (lexical + symbol), per query, filter {label}{extra}, ms | {ms:.1f} |"
        )
    for label, ms in r["vector_ms"]:
        lines.append(
            f"| vector stream k=300 over {r['vectors']:,} int8 vectors, filter {label},"
            f" ms | {ms:.1f} |"
        )
    lines += [
        "",
        "Search rows are Searcher.search medians over 5 queries (code + summary layers), "
        "warm; the filter runs inside each stream's SQL (vector: a chunk-id constraint "
        "in the KNN).",
    ]
    return "\n".join(lines)


def cli_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO_DIR / "server"), "HF_HUB_OFFLINE": "1"}


def codesift_cli(*args: str, cwd: Path) -> tuple[float, float, str]:
    """Run `codesift ARGS` in `cwd`: (wall seconds, CPU seconds of it and its
    children, git included, stdout)."""
    env = cli_env()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "codesift.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def finish_background_passes(repo: Path) -> None:
    """Wait for the background passes an index run of `repo` started, then finish
    what is left (untimed): `codesift resolve` waits for the detached call pass (a
    large run's `codesift resolve --background`, which goes on with the git history)
    and `codesift history` for the history pass, each then completing its own. A
    pass left running would take a core from the next measurement."""
    codesift_cli("resolve", "--quiet", cwd=repo)
    codesift_cli("history", "--quiet", cwd=repo)


def deep_pass(repo: Path) -> dict[str, Any]:
    """The first answer on a fresh clone (`codesift search` builds the index, then
    answers), the index alone (`codesift index`), then the whole history pass in the
    foreground (`codesift history`, from scratch) for its time and CPU."""
    out: dict[str, Any] = {}
    shutil.rmtree(repo / ".codesift", ignore_errors=True)
    wall, _, _ = codesift_cli("search", "ledger balance", "--no-embed", "--json", cwd=repo)
    out["first_answer_s"] = wall
    finish_background_passes(repo)  # the passes the search started
    shutil.rmtree(repo / ".codesift", ignore_errors=True)
    wall, cpu, _ = codesift_cli("index", "--no-embed", "--quiet", cwd=repo)
    out["index_s"], out["index_cpu_s"] = wall, cpu
    finish_background_passes(repo)
    conn = open_database(repo / ".codesift" / "index.db")
    with conn:
        conn.execute("DELETE FROM history_files")
        conn.execute("DELETE FROM history_commits")
        conn.execute("DELETE FROM meta WHERE key LIKE 'history_%'")
        conn.execute("UPDATE files SET history_at = NULL")
    conn.close()
    wall, cpu, stdout = codesift_cli("history", "--json", cwd=repo)
    data = json.loads(stdout)
    out.update(history_s=wall, history_cpu_s=cpu, commits=data["commits"])
    out["files_timed"] = data["files_timed"]
    return out


def run_deep(args: argparse.Namespace) -> dict[str, Any]:
    results: dict[str, Any] = {"load_start": loadavg(), "machine": machine()}
    repo = DATA_DIR / "history-deep-repo"
    marker = DATA_DIR / f"history-deep-{args.commits}-{args.files}.done"
    if not marker.exists() or not repo.exists():
        t0 = time.perf_counter()
        make_repo(repo, args.files, args.commits, merges=True)
        results["generate_s"] = time.perf_counter() - t0
        marker.write_text("")
    results["repo_commits"] = args.commits
    results["repo_files"] = args.files
    results["merges"] = int(
        subprocess.run(
            ["git", "rev-list", "--merges", "--count", "HEAD"],
            cwd=repo,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    from timing import compile_codesift

    compile_codesift(cli_env())  # its bytecode, as an installed package has it
    results["deep"] = deep_pass(repo)
    own = DATA_DIR / "history-own-clone"
    shutil.rmtree(own, ignore_errors=True)
    subprocess.run(["git", "clone", "-q", str(REPO_DIR), str(own)], check=True)
    results["own_commits"] = int(
        subprocess.run(
            ["git", "rev-list", "--first-parent", "--count", "HEAD"],
            cwd=own,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    results["own"] = deep_pass(own)
    results["load_end"] = loadavg()
    return results


def render_deep(r: dict[str, Any], commit: str) -> str:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    rows = []
    for key, label in (("deep", "generated deep history"), ("own", "codesift's own history")):
        d = r[key]
        rows.append(
            f"| {label} | {d['commits']:,} | {d['files_timed']:,} | {d['index_s']:.1f} |"
            f" {d['first_answer_s']:.1f} | {d['history_s']:.1f} | {d['history_cpu_s']:.1f} |"
        )
    return "\n".join(
        [
            "### Deep histories: the first answer, then the history pass"
            " (`bench/history_speed.py --deep`)",
            "",
            f"Run {now} at commit `{commit}`; machine: {r['machine']}; load average"
            f" {r['load_start']} at start, {r['load_end']} at end.",
            "",
            f"Generated repository: {r['repo_commits']:,} commits ({r['merges']:,} merges of side"
            f" branches, a rename about every 60 commits) over {r['repo_files']:,} Python files,"
            " 1-3 files and hunks per commit (git fast-import). Own history: a clone of this"
            " repository. First answer: `codesift search --no-embed` in the fresh clone (it"
            " builds the index, answers, and leaves the history pass to the background). Index:"
            " `codesift index --no-embed` alone. History pass: cleared, then run whole in the"
            " foreground (`codesift history`; its CPU counts git's too).",
            "",
            "| repository | commits walked | files timed | index, s |"
            " first answer (index + search), s | history pass, s | history CPU, s |",
            "|---|---|---|---|---|---|---|",
            *rows,
            "",
            "Targets (issue: first answer in seconds): the first search within the parse time"
            " + 1 s; the whole history of 100,000 commits over 2,000 files in 30 s or less.",
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--commits", type=int, default=5000)
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--query-runs", type=int, default=20)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--out", type=Path, default=BENCH_DIR / "RESULTS.md")
    parser.add_argument(
        "--deep",
        action="store_true",
        help="the deep-history table instead: 100,000 commits over 2,000 files with merges and"
        " renames (unless --commits/--files say otherwise), and this repository's own history",
    )
    args = parser.parse_args()
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    if args.deep:
        if args.commits == 5000 and args.files == 1000:
            args.commits, args.files = 100_000, 2000
        deep = run_deep(args)
        (DATA_DIR / "history_deep-last.json").write_text(json.dumps(deep, indent=1))
        body = render_deep(deep, head_commit())
        print(body)
        if args.write:
            write_section(args.out, body, DEEP_BEGIN, DEEP_END)
            figures = {k: v for k, v in deep.items() if k != "machine"}
            figures["tables"] = markdown_tables(body)
            write_results("history_deep", figures, machine_info=deep.get("machine"))
        return 0
    results = run(args)
    commit = head_commit()
    (DATA_DIR / "history_speed-last.json").write_text(json.dumps(results, indent=1))
    body = render(results, commit)
    print(body)
    if args.write:
        write_section(args.out, body, SECTION_BEGIN, SECTION_END)
        figures = {k: v for k, v in results.items() if k != "machine"}
        figures["tables"] = markdown_tables(body)
        write_results("history_speed", figures, machine_info=results.get("machine"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
