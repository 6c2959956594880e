"""One-shot CLI latency: `codesift search` with and without a server on the workspace.

    python bench/cli_latency.py [--rounds 10] [--work-dir DIR] [--no-vectors] [--no-several]
        [--write] [--out bench/RESULTS.md]

On a copy of the running interpreter's stdlib (bench/corpora.py prepares the
shared corpus; the copy under --work-dir is the one indexed, with embeddings off
in its .codesift.toml, so the figures are the lexical and symbol streams'), the
`codesift` console script of this environment is run as a user would, once per
query and mode, the modes interleaved within each round (so load on the machine
falls on all of them alike):

- `server`: a `codesift mcp --root COPY` runs (its stdin held open); the CLI
  asks it over the index's local socket (docs/protocol.md). Every answer is
  checked to have come through the socket (`-vv` says which path answered).
- `in-process`: the same command with `CODESIFT_NO_SERVER=1`: imports, opens the
  index, checks it is up to date, searches, as without a server.
- `python`: `python -c pass` with the same interpreter, the floor of any one-shot
  command.
- `several` (not a target; --no-several leaves it out): `codesift search QUERY
  --root A ... --root G` over seven dev-set 2 corpora (copies under --work-dir,
  each its own git repository, embeddings off), routed first as
  engine/folder_search.py does, against `codesift search QUERY --root F` of the
  question's own folder alone; two short questions of each corpus.
- `vectors` (not a target; --no-vectors leaves it out): the in-process search on
  a second copy with the default configuration (no .codesift.toml), whose index
  has the static first tier's vectors for every chunk, as `codesift index` leaves
  it while MiniLM's replace them in a background `codesift embed`. The bench holds
  the index's embed lock meanwhile, as that background process would, so that no
  search starts one (hours of CPU on this corpus): each search embeds its query
  and runs the vector streams over sqlite-vec, with what loading the models takes.

Before measuring, the codesift package the console script imports is compiled to
bytecode (compileall), as an installed package is: with PYTHONDONTWRITEBYTECODE
set (as in some development shells) every module edited since its last
compilation would otherwise be compiled again on every run (~70-80 ms of CPU per
search here), which no user's installed codesift does.

Times are wall clock around the subprocess, from start to exit. With --write, the
section between `<!-- cli_latency:begin -->` and `<!-- cli_latency:end -->` of
--out is replaced (added if missing).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
sys.path[:0] = [str(REPO_DIR / "server"), str(BENCH_DIR)]

from corpora import DATA_DIR, prepare_corpus  # noqa: E402
from index_speed import machine_info  # noqa: E402
from timing import compile_codesift, log, percentile  # noqa: E402

SECTION = "cli_latency"
DEFAULT_OUT = BENCH_DIR / "RESULTS.md"
CODESIFT = Path(sys.executable).with_name("codesift")
QUERIES = (
    "TimedRotatingFileHandler",
    "parse an HTTP header",
    "how does the json decoder handle surrogate pairs",
    "def urlsplit(url, scheme",
    "thread pool executor shutdown",
    "Pool.imap",
    "read a zip file member",
    "ssl context verify hostname",
    "OrderedDict move_to_end",
    "retry a failed connection",
)
ANSWERED = "DEBUG codesift.cli: answered by"
# The folders of the `several` mode (dev set 2 corpora: web frameworks with questions
# about the same things, and two others).
SEVERAL = ("echo", "hapi", "hono", "slim", "uvicorn", "jq", "koin")
SEVERAL_QUESTIONS = 2  # per corpus: its first short questions

Json = dict[str, Any]


def summary(values: list[float]) -> Json:
    return {
        "n": len(values),
        "p50": percentile(values, 50),
        "p95": percentile(values, 95),
        "mean": statistics.fmean(values),
        "min": min(values),
    }


def env(**extra: str) -> dict[str, str]:
    out = dict(os.environ)
    for name in ("CODESIFT_NO_SERVER", "FORCE_COLOR", "TTY_COMPATIBLE"):
        out.pop(name, None)
    out.update(extra)
    return out


def prepare_copy(work_dir: Path, name: str = "python-stdlib", *, embeddings: bool = False) -> Path:
    """A stdlib copy this bench indexes (made once; the shared corpus is never
    written): embeddings off, or (`embeddings`) the default configuration."""
    corpus = prepare_corpus("python-stdlib", log)
    dest = work_dir / name
    marker = work_dir / f"{name}.copied"
    if not (dest.is_dir() and marker.is_file()):
        if dest.exists():
            shutil.rmtree(dest)
        log(f"copying {corpus.root} to {dest}")
        shutil.copytree(corpus.root, dest, symlinks=True)
        marker.write_text(str(corpus.root))
    config = dest / ".codesift.toml"
    if embeddings:
        config.unlink(missing_ok=True)
    else:
        config.write_text("[embedding]\nenabled = false\n", encoding="utf-8")
    return dest


def prepare_several(work_dir: Path) -> tuple[list[Path], list[tuple[str, str]]]:
    """Copies of the SEVERAL corpora (each a git repository of its own, embeddings
    off; made once) and the questions asked of them: (corpus, query)."""
    from quality import load_queries

    roots: list[Path] = []
    questions: list[tuple[str, str]] = []
    for name in SEVERAL:
        corpus = prepare_corpus(name, log)
        dest = work_dir / "several" / name
        marker = dest.with_name(f"{name}.copied")
        if not (dest.is_dir() and marker.is_file()):
            if dest.exists():
                shutil.rmtree(dest)
            log(f"copying {corpus.root} to {dest}")
            shutil.copytree(corpus.root, dest, symlinks=True, ignore=shutil.ignore_patterns(".git"))
            (dest / ".codesift.toml").write_text("[embedding]\nenabled = false\n", encoding="utf-8")
            for git in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "corpus"]):
                subprocess.run(
                    ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", *git],
                    cwd=dest,
                    env=env(),
                    check=True,
                    capture_output=True,
                )
            marker.write_text(str(corpus.root))
        roots.append(dest)
        short = load_queries(corpus, ("short",))[:SEVERAL_QUESTIONS]
        questions.extend((name, q.text) for q in short)
    return roots, questions


def measure_several(roots: list[Path], questions: list[tuple[str, str]], rounds: int) -> Json:
    """The `several` mode: every question over all the folders, then in its own folder
    alone, in-process; and how often the router searched the question's folder."""
    every = [arg for root in roots for arg in ("--root", str(root))]
    by_name = {root.name: root for root in roots}
    no_server = env(CODESIFT_NO_SERVER="1")
    routed_right = 0
    for name, query in questions:  # indexes built, and the router's choice checked
        answer = subprocess.run(
            [str(CODESIFT), "search", "--json", query, *every],
            cwd=roots[0].parent,
            env=no_server,
            capture_output=True,
            text=True,
            check=True,
        )
        routed_right += name in json.loads(answer.stdout)["searched"]
        alone = [str(CODESIFT), "search", query, "--root", str(by_name[name])]
        run(alone, roots[0].parent, no_server)
    times: dict[str, list[float]] = {"several": [], "one folder": []}
    for number in range(rounds):
        log(f"several folders: round {number + 1}/{rounds}")
        for name, query in questions:
            took, _ = run([str(CODESIFT), "search", query, *every], roots[0].parent, no_server)
            times["several"].append(took)
            one = [str(CODESIFT), "search", query, "--root", str(by_name[name])]
            took, _ = run(one, roots[0].parent, no_server)
            times["one folder"].append(took)
    return {
        "folders": len(roots),
        "questions": len(questions),
        "rounds": rounds,
        "routed_right": routed_right / len(questions),
        "modes": {mode: summary(values) for mode, values in times.items()},
    }


def prepare_static_vectors(root: Path) -> Any:
    """Index `root` (default configuration) with the static first tier's vectors
    for every chunk and no MiniLM vector computed; returns the index's embed lock,
    held (the caller releases it) so that no search starts MiniLM's background
    embedding."""
    from codesift.engine import Workspace
    from codesift.engine.access import fill_first_tier
    from codesift.engine.models import make_embedder
    from codesift.store.database import open_database
    from codesift.store.locks import IndexLock

    log(f"indexing {root} (default configuration, static vectors)")
    subprocess.run(
        [str(CODESIFT), "index", "--no-embed", "--quiet"], cwd=root, env=env(), check=True
    )
    ws = Workspace.at(root)
    lock = IndexLock(ws.db_path, "embed", purpose="bench/cli_latency.py: static vectors only")
    if not lock.try_acquire():
        raise RuntimeError(f"another process is embedding {ws.db_path}; stop it first")
    conn = open_database(ws.db_path)
    try:
        started = time.perf_counter()
        filled = fill_first_tier(ws, conn, make_embedder(ws.settings.embedding))
        log(f"static vectors: {filled} computed in {time.perf_counter() - started:.1f}s")
    finally:
        conn.close()
    return lock


def run(argv: list[str], cwd: Path, environ: dict[str, str]) -> tuple[float, str]:
    started = time.perf_counter()
    result = subprocess.run(argv, cwd=cwd, env=environ, capture_output=True, text=True, check=False)
    took = (time.perf_counter() - started) * 1000
    if result.returncode != 0:
        raise RuntimeError(f"{argv} exited {result.returncode}: {result.stderr[-500:]}")
    return took, result.stderr


def check_vector_streams(root: Path, query: str) -> None:
    """The search of `query` in `root` ran a vector stream that found candidates."""
    result = subprocess.run(
        [str(CODESIFT), "search", "--json", query],
        cwd=root,
        env=env(CODESIFT_NO_SERVER="1"),
        capture_output=True,
        text=True,
        check=True,
    )
    streams = json.loads(result.stdout)["streams"]
    found = [s for s in streams if s["stream"].startswith("vector") and s["candidates"] > 0]
    if not found:
        raise RuntimeError(f"no vector stream answered {query!r}: {streams} {result.stderr[-500:]}")


def measure(root: Path, rounds: int, vectors_root: Path | None) -> Json:
    log(f"indexing {root} (embeddings off)")
    started = time.perf_counter()
    subprocess.run(
        [str(CODESIFT), "index", "--no-embed", "--quiet"], cwd=root, env=env(), check=True
    )
    index_s = time.perf_counter() - started
    server_log = root.parent / "cli-latency-server.log"
    server = subprocess.Popen(
        [str(CODESIFT), "-v", "mcp", "--root", str(root), "--log-file", str(server_log)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env(),
    )
    log(f"compiled {compile_codesift(env())}")
    times: dict[str, list[float]] = {"server": [], "in-process": [], "python": []}
    if vectors_root is not None:
        times["vectors"] = []
    embed_lock = prepare_static_vectors(vectors_root) if vectors_root is not None else None
    load_start = os.getloadavg()
    try:
        deadline = time.monotonic() + 600
        while True:  # the server's first look at the index (a rescan) must be over
            _, stderr = run([str(CODESIFT), "-vv", "search", "warmup"], root, env())
            if ANSWERED in stderr:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server never answered: {stderr[-500:]}")
            time.sleep(0.5)
        for query in QUERIES:  # one unmeasured pass of each mode
            run([str(CODESIFT), "search", query], root, env())
            run([str(CODESIFT), "search", query], root, env(CODESIFT_NO_SERVER="1"))
            if vectors_root is not None:
                check_vector_streams(vectors_root, query)
        for number in range(rounds):
            log(f"round {number + 1}/{rounds}")
            for query in QUERIES:
                took, stderr = run([str(CODESIFT), "-vv", "search", query], root, env())
                if ANSWERED not in stderr:
                    raise RuntimeError(f"not answered by the server: {stderr[-500:]}")
                times["server"].append(took)
                took, _ = run([str(CODESIFT), "search", query], root, env(CODESIFT_NO_SERVER="1"))
                times["in-process"].append(took)
                took, _ = run([sys.executable, "-c", "pass"], root, env())
                times["python"].append(took)
                if vectors_root is not None:
                    took, _ = run(
                        [str(CODESIFT), "search", query], vectors_root, env(CODESIFT_NO_SERVER="1")
                    )
                    times["vectors"].append(took)
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(60)
        if embed_lock is not None:
            embed_lock.release()
    load_end = os.getloadavg()
    served = server_log.read_text(encoding="utf-8")
    server_ms = [float(m) for m in re.findall(r"over the local socket in ([0-9.]+) ms", served)]
    return {
        "index_s": index_s,
        "modes": {name: summary(values) for name, values in times.items()},
        "server_side_ms": summary(server_ms[-len(times["server"]) :]) if server_ms else None,
        "load_start": "/".join(f"{x:.2f}" for x in load_start),
        "load_end": "/".join(f"{x:.2f}" for x in load_end),
        "rounds": rounds,
        "queries": len(QUERIES),
    }


def section(result: Json, machine: Json) -> str:
    modes = result["modes"]

    def row(name: str, label: str, target: str) -> str:
        m = modes[name]
        return (
            f"| {label} | {m['p50']:.0f} | {m['p95']:.0f} | {m['mean']:.0f} | {m['min']:.0f} |"
            f" {m['n']} | {target} |"
        )

    side = result["server_side_ms"]
    dirty = machine["dirty"]
    lines = [
        f"<!-- {SECTION}:begin -->",
        "## One-shot CLI search (`bench/cli_latency.py`)",
        "",
        f"Run {machine['date']} at commit `{machine['commit']}`"
        + (f" (uncommitted changes in {', '.join(dirty)})" if dirty else "")
        + f"; machine: nproc {machine['nproc']}, {machine['mem_gib']:.1f} GiB RAM,"
        f" {machine['cpu']}; {machine['python']} on {machine['platform']}; load average"
        f" (1/5/15 min) {result['load_start']} at start, {result['load_end']} at end"
        " (other jobs shared the machine).",
        "",
        "`codesift search QUERY` (the console script) on a copy of the stdlib, embeddings"
        f" off, {result['queries']} queries x {result['rounds']} rounds, the modes"
        " interleaved, codesift's bytecode compiled first; wall clock from process start"
        " to exit, ms.",
        "",
        "| mode | p50 | p95 | mean | min | n | target |",
        "|---|---|---|---|---|---|---|",
        row("server", "a `codesift mcp` serves the workspace (local socket)", "p50 <= 60"),
        row("in-process", "no server (`CODESIFT_NO_SERVER=1`)", "p50 <= 350"),
        row("python", "`python -c pass` (the floor)", ""),
    ]
    if "vectors" in modes:
        lines.append(
            row(
                "vectors",
                "no server, default configuration, static vectors (see below)",
                "not a target",
            )
        )
    lines.append("")
    if "vectors" in modes:
        lines.append(
            "The vectors row (not a target): the same queries on a second copy with the"
            " default configuration, its index holding the static first tier's vector for"
            " every chunk and MiniLM's pending (the bench holds the embed lock, as the"
            " background `codesift embed` would, so that no search starts one): each search"
            " embeds its query and runs the vector streams over sqlite-vec."
        )
        lines.append("")
    if side is not None:
        lines.append(
            f"Inside the server (its log): p50 {side['p50']:.1f} ms, p95 {side['p95']:.1f} ms"
            " per answer (waiting for freshness, the engine's search, the JSON of its answer)."
        )
        lines.append("")
    several = result.get("several")
    if several is not None:
        m = several["modes"]
        lines += [
            "Several folders (not a target): `codesift search QUERY --root A ... --root G`"
            f" over {several['folders']} dev-set 2 corpora ({', '.join(SEVERAL)}; copies,"
            " embeddings off, no server), routed first (the router's best five searched),"
            f" {several['questions']} short questions x {several['rounds']} rounds, against"
            " the same question in its own folder alone (`--root F`); wall clock, ms. The"
            " question's folder was among those searched for"
            f" {several['routed_right']:.2f} of the questions.",
            "",
            "| mode | p50 | p95 | mean | min | n |",
            "|---|---|---|---|---|---|",
            *(
                f"| {label} | {m[key]['p50']:.0f} | {m[key]['p95']:.0f} | {m[key]['mean']:.0f}"
                f" | {m[key]['min']:.0f} | {m[key]['n']} |"
                for key, label in (
                    ("several", f"{several['folders']} folders, routed"),
                    ("one folder", "the question's folder alone"),
                )
            ),
            "",
        ]
    lines.append(f"<!-- {SECTION}:end -->")
    return "\n".join(lines) + "\n"


def write_section(out: Path, text: str) -> None:
    current = out.read_text(encoding="utf-8") if out.exists() else "# Benchmark results\n"
    pattern = re.compile(rf"<!-- {SECTION}:begin -->.*?<!-- {SECTION}:end -->\n?", re.DOTALL)
    if pattern.search(current):
        current = pattern.sub(lambda _: text, current, count=1)
    else:
        current = current.rstrip("\n") + "\n\n" + text
    out.write_text(current, encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--work-dir", type=Path, default=DATA_DIR / "cli-latency")
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument(
        "--no-vectors",
        action="store_true",
        help="leave out the in-process search of an index with static vectors",
    )
    parser.add_argument(
        "--no-several",
        action="store_true",
        help="leave out the search over several folders",
    )
    args = parser.parse_args()
    args.work_dir.mkdir(parents=True, exist_ok=True)
    root = prepare_copy(args.work_dir)
    vectors_root = (
        None
        if args.no_vectors
        else prepare_copy(args.work_dir, "python-stdlib-vectors", embeddings=True)
    )
    several = None if args.no_several else prepare_several(args.work_dir)
    machine = machine_info()
    result = measure(root, args.rounds, vectors_root)
    if several is not None:
        result["several"] = measure_several(*several, max(1, args.rounds // 3))
    print(json.dumps({"machine": machine, **result}, indent=2))
    text = section(result, machine)
    print(text)
    if args.write:
        write_section(args.out, text)
        from runinfo import markdown_tables, write_results

        write_results(SECTION, {"tables": markdown_tables(text)}, machine_info=machine)
    return 0


if __name__ == "__main__":
    sys.exit(main())
