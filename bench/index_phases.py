#!/usr/bin/env python3
"""When each phase of a cold index is ready, side by side with the peer and ctags.

Run from the repository root (with the project's interpreter), through index_speed.py:

    PYTHONPATH=server python bench/index_speed.py --side-by-side [--side-repeat 3]
        [--side-corpora stdlib,devset2,deep] [--minilm-limit 2000] [--write]

For each corpus, in one run and interleaved round by round (so that every tool sees
the same machine load), each measured as a fresh process from start to exit:

- ctags: `ctags -R` of the tree.
- peer: semble 0.7.0 building its index (`SembleIndex.from_path`) as
  bench/peer_baseline.py runs it: a stand-in model2vec model, so its BM25 side and
  its chunking are what is built (the interpreter starting and importing semble
  included, as codesift's own start is).
- lexical-ready: `codesift index --no-embed` into a new database: search works (a
  run of 200 source files or more leaves the targets of its calls to the call pass).
- calls-ready: that run, then `codesift resolve` (which waits for the background
  call pass the run started, then finishes it), timed together: callers, callees
  and graph complete. The same as lexical-ready when the run resolved its calls.
- static-ready: `codesift index` into a new database with the static vectors.
  The default settings compute the same static vectors and then start MiniLM in a
  detached `codesift embed`; these runs set `embedding.model = "static"`, which
  computes the same vectors and starts nothing, so that no background process runs
  into the next measurement.
- history-ready: a corpus outside git has no history pass (its times come from file
  modification times, written with the rows): the lexical-ready time. In a git
  repository: `codesift index --no-embed` then `codesift history` (which completes
  the pass in the foreground, waiting for the background one the index started),
  timed together.
- MiniLM-ready (python-stdlib only): MiniLM over all of it takes many minutes, so a
  fresh process embeds the first --minilm-limit chunks of a copy of a lexical index
  (bench/index_speed.py's `_embed` child); the figure shown is static-ready plus the
  embeddable chunks at that rate, an estimate.

Corpora: the python-stdlib copy (bench/corpora.py), the 20 dev-set-2 corpora
(DEVSET2_NAMES), and a synthetic deep-history git repository (bench/history_speed.py's
`make_repo`: --deep-commits commits over --deep-files files with renames and merges,
generated once under bench/.data/history-deep-repo; the runs use a local clone so the
history benchmark's own index there is never touched).

Times are medians of --side-repeat rounds; the process tree's memory (the index
workers included) is sampled from /proc. With --write, the section between
`<!-- index_speed_side:begin -->` and `<!-- index_speed_side:end -->` of --out is
replaced (added after the index_speed section when missing); raw figures go to
bench/.data/index_phases-last.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
SERVER_DIR = REPO_DIR / "server"
DATA_DIR = BENCH_DIR / ".data"
WORK_DIR = DATA_DIR / "index-phases"
RAW_RESULTS = DATA_DIR / "index_phases-last.json"
SECTION_BEGIN = "<!-- index_speed_side:begin -->"
SECTION_END = "<!-- index_speed_side:end -->"
PEER_VERSION = "0.7.0"
MIB = 1024 * 1024

# Targets (issue 31).
TARGET_STDLIB_STATIC = 1.0  # static-ready / peer
TARGET_STDLIB_LEXICAL = 0.7  # lexical-ready / peer
TARGET_DEVSET2_SUM = 1.5  # summed lexical-ready / summed peer
TARGET_DEVSET2_WORST = 3.0  # no corpus above
TARGET_TREE_RSS_MIB = 350.0

Json = dict[str, Any]


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --- inside the peer's interpreter --------------------------------------------------------


def peer_runner(root: str) -> int:
    """Build semble's index of `root` as bench/peer_baseline.py does; print its own
    timing as JSON (run with an interpreter that has semble)."""
    started = time.perf_counter()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sys.path.insert(0, str(BENCH_DIR))
    import peer_baseline

    os.environ["SEMBLE_CACHE_LOCATION"] = str(peer_baseline.PEER_CACHE)
    from semble import SembleIndex

    peer_baseline._stand_in_model(peer_baseline.PEER_MODEL)
    imported = time.perf_counter()
    index = SembleIndex.from_path(Path(root), model_path=str(peer_baseline.PEER_MODEL))
    done = time.perf_counter()
    print(
        json.dumps(
            {
                "import_s": imported - started,
                "index_s": done - imported,
                "files": index.stats.indexed_files,
                "chunks": index.stats.total_chunks,
            }
        )
    )
    return 0


def peer_interpreter() -> str:
    """This interpreter when it has semble PEER_VERSION, else bench/peer_baseline.py's
    own environment (created on first use)."""
    probe = subprocess.run(
        [sys.executable, "-c", "import semble; print(semble.__version__)"],
        capture_output=True,
        text=True,
        check=False,
    )
    if probe.returncode == 0 and probe.stdout.strip() == PEER_VERSION:
        return sys.executable
    sys.path.insert(0, str(BENCH_DIR))
    import peer_baseline

    return str(peer_baseline.ensure_peer_venv())


# --- timing one process ----------------------------------------------------------------------


def timed(
    cmd: Sequence[str], *, cwd: Path | None = None, env: dict[str, str] | None = None
) -> Json:
    """Run `cmd` to its end: wall and CPU seconds (its whole tree), peak memory of the
    tree sampled from /proc, its stdout."""
    from index_speed import SAMPLE_SECONDS, TreeMemory

    sampler = TreeMemory()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    started = time.perf_counter()
    with subprocess.Popen(
        list(cmd),
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        out_parts: list[str] = []
        err_parts: list[str] = []
        # Pipes are drained by threads so that a chatty child never blocks.
        import threading

        readers = [
            threading.Thread(
                target=lambda: out_parts.append(proc.stdout.read() if proc.stdout else "")
            ),
            threading.Thread(
                target=lambda: err_parts.append(proc.stderr.read() if proc.stderr else "")
            ),
        ]
        for reader in readers:
            reader.start()
        while proc.poll() is None:
            sampler.sample(proc.pid)
            time.sleep(SAMPLE_SECONDS)
        for reader in readers:
            reader.join()
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(
            f"{' '.join(cmd)} failed ({proc.returncode}):\n" + "".join(err_parts)[-3000:]
        )
    return {
        "wall": wall,
        "cpu": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime),
        "load": load,
        "stdout": "".join(out_parts),
        **sampler.as_json(),
    }


def remove_db(db: Path) -> None:
    for suffix in ("", "-wal", "-shm", ".sock"):
        db.with_name(db.name + suffix).unlink(missing_ok=True)
    for lock in db.parent.glob(db.name + "*.lock"):
        lock.unlink(missing_ok=True)


def codesift_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(SERVER_DIR), env.get("PYTHONPATH", "")) if p
    )
    env["HF_HUB_OFFLINE"] = "1"
    env["CODESIFT_NO_SERVER"] = "1"  # never answered by a running server
    return env


def codesift(*args: str) -> list[str]:
    return [sys.executable, "-m", "codesift.cli", *args]


def settings_file(name: str, db: Path | None, static: bool) -> Path:
    """A settings file putting the index at `db` (None: its default place, in the
    folder) and, `static`, choosing the static model."""
    WORK_DIR.mkdir(parents=True, exist_ok=True)
    path = WORK_DIR / f"{name}{'-static' if static else ''}.toml"
    text = f'[index]\ndb_path = "{db}"\n' if db is not None else ""
    if static:
        text += '\n[embedding]\nmodel = "static"\n'
    path.write_text(text, encoding="utf-8")
    return path


# --- one corpus ------------------------------------------------------------------------------


def calls_ready(lexical: Json, resolve_args: list[str], env: dict[str, str]) -> Json:
    """The call graph complete: `codesift resolve` right after the index run (it
    waits for the background pass the run started, then finishes it), timed
    together with the run; the run itself when it resolved its calls at once."""
    done = timed(codesift("resolve", "--json", *resolve_args), env=env)
    deferred = json.loads(done["stdout"].strip().splitlines()[-1])["files"] > 0
    if not deferred:
        return {**lexical, "pass_wall": 0.0}
    return {
        "wall": lexical["wall"] + done["wall"],
        "cpu": lexical["cpu"] + done["cpu"],
        "pass_wall": done["wall"],
        "peak_rss": max(lexical["peak_rss"], done["peak_rss"]),
        "peak_pss": max(lexical["peak_pss"], done["peak_pss"]),
    }


def measure_round(name: str, root: Path, in_git: bool, peer_python: str) -> Json:
    """One round: ctags, the peer, codesift lexical, calls, static and history."""
    from index_speed import CTAGS

    env = codesift_env()
    out: Json = {}
    if Path(CTAGS).exists():
        tags = WORK_DIR / f"{name}.tags"
        out["ctags"] = timed([CTAGS, "-R", "-f", str(tags), str(root)])
        tags.unlink(missing_ok=True)
    peer = timed([peer_python, str(Path(__file__).resolve()), "_peer", str(root)])
    peer.update(json.loads(peer["stdout"].strip().splitlines()[-1]))
    out["peer"] = peer
    if in_git:
        # The index in its default place (codesift history has no settings option):
        # a clone the benchmark owns.
        shutil.rmtree(root / ".codesift", ignore_errors=True)
        lexical = timed(codesift("index", "--no-embed", "--quiet", str(root)), env=env)
        out["calls"] = calls_ready(lexical, ["--root", str(root)], env)
        history = timed(codesift("history", "--quiet", "--root", str(root)), env=env)
        out["lexical"] = lexical
        out["history"] = {
            "wall": lexical["wall"] + history["wall"],
            "cpu": lexical["cpu"] + history["cpu"],
            "pass_wall": history["wall"],
            "peak_rss": max(lexical["peak_rss"], history["peak_rss"]),
            "peak_pss": max(lexical["peak_pss"], history["peak_pss"]),
        }
        # The background history pass an index run starts opens the index in its
        # default place too: the static run's index is there as well, and the pass
        # it started is waited for (untimed) before the next measurement.
        shutil.rmtree(root / ".codesift", ignore_errors=True)
        cfg = settings_file(name, None, static=True)
        out["static"] = timed(
            codesift("index", "--quiet", "--config", str(cfg), str(root)), env=env
        )
        timed(codesift("resolve", "--quiet", "--root", str(root)), env=env)
        timed(codesift("history", "--quiet", "--root", str(root)), env=env)
        shutil.rmtree(root / ".codesift", ignore_errors=True)
        return out
    db = WORK_DIR / f"{name}.db"
    remove_db(db)
    cfg = settings_file(name, db, static=False)
    out["lexical"] = timed(
        codesift("index", "--no-embed", "--quiet", "--config", str(cfg), str(root)), env=env
    )
    # The background pass the run starts does not find an index placed by --config:
    # this one resolves it (and would wait for a background one first).
    out["calls"] = calls_ready(out["lexical"], ["--config", str(cfg), "--root", str(root)], env)
    lexical_copy = WORK_DIR / f"{name}-lexical.db"
    remove_db(lexical_copy)
    shutil.copyfile(db, lexical_copy)  # for the MiniLM estimate (closed: WAL folded in)
    remove_db(db)
    cfg = settings_file(name, db, static=True)
    out["static"] = timed(codesift("index", "--quiet", "--config", str(cfg), str(root)), env=env)
    timed(codesift("resolve", "--quiet", "--config", str(cfg), "--root", str(root)), env=env)
    remove_db(db)
    return out


def minilm_estimate(name: str, root: Path, limit: int) -> Json:
    """MiniLM over the first `limit` pending chunks of a copy of the lexical index, in
    a fresh process (index_speed.py's `_embed` child)."""
    from index_speed import run_child

    lexical = WORK_DIR / f"{name}-lexical.db"
    db = WORK_DIR / f"{name}-minilm.db"
    remove_db(db)
    shutil.copyfile(lexical, db)
    try:
        result = run_child(
            "_embed",
            f"{name}-minilm",
            ["--root", str(root), "--db", str(db), "--limit", str(limit)],
        )
    finally:
        remove_db(db)
    rate = result["embedded"] / max(result["seconds"], 1e-9)
    return {
        "limit": limit,
        "embedded": result["embedded"],
        "embeddable": result["embeddable"],
        "seconds": result["seconds"],
        "load_seconds": result["load_seconds"],
        "chunks_per_s": rate,
        "all_seconds": result["embeddable"] / rate if rate else float("nan"),
    }


def deep_repo(commits: int, files: int) -> Path:
    """A local clone of the synthetic deep-history repository (generated once)."""
    import history_speed

    repo = DATA_DIR / "history-deep-repo"
    marker = DATA_DIR / f"history-deep-{commits}-{files}.done"
    if not marker.exists() or not repo.exists():
        log(f"generating {repo}: {commits} commits over {files} files (git fast-import)")
        history_speed.make_repo(repo, files, commits, merges=True)
        marker.write_text("")
    clone = WORK_DIR / "deep-clone"
    if not (clone / ".git").exists() or _head(clone) != _head(repo):
        shutil.rmtree(clone, ignore_errors=True)
        WORK_DIR.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "clone", "-q", "--local", str(repo), str(clone)], check=True)
    return clone


def _head(repo: Path) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()


def medians(rounds: list[Json]) -> Json:
    """Median wall / CPU of each tool over the rounds, and the peak memory."""
    out: Json = {}
    for tool in ("ctags", "peer", "lexical", "calls", "static", "history"):
        runs = [r[tool] for r in rounds if tool in r]
        if not runs:
            continue
        out[tool] = {
            "wall": statistics.median(r["wall"] for r in runs),
            "cpu": statistics.median(r["cpu"] for r in runs),
            "walls": [r["wall"] for r in runs],
            "peak_rss": max(r.get("peak_rss", 0) for r in runs),
            "peak_pss": max(r.get("peak_pss", 0) for r in runs),
        }
    out["history_in_git"] = any("pass_wall" in r.get("history", {}) for r in rounds)
    if "history" not in out and "lexical" in out:
        out["history"] = dict(out["lexical"])  # outside git: no pass of its own
    return out


# --- the run ---------------------------------------------------------------------------------


def run(args: argparse.Namespace) -> Json:
    sys.path.insert(0, str(BENCH_DIR))
    from corpora import DEVSET2_NAMES, prepare_corpus
    from index_speed import machine_info

    WORK_DIR.mkdir(parents=True, exist_ok=True)
    wanted = set(args.side_corpora.split(","))
    from timing import compile_codesift, effective_cores

    machine = machine_info()
    machine["load_start"] = os.getloadavg()
    machine["cores_start"] = effective_cores()
    corpora: list[tuple[str, str, Path, bool]] = []  # (group, name, root, in git)
    if "stdlib" in wanted:
        corpora.append(
            ("stdlib", "python-stdlib", prepare_corpus("python-stdlib", log).root, False)
        )
    if "devset2" in wanted:
        for name in DEVSET2_NAMES:
            corpora.append(("devset2", name, prepare_corpus(name, log).root, False))
    if "deep" in wanted:
        corpora.append(
            ("deep", "deep-history", deep_repo(args.deep_commits, args.deep_files), True)
        )
    if args.side_names:
        names = set(args.side_names.split(","))
        corpora = [c for c in corpora if c[1] in names]
    peer_python = peer_interpreter()
    log(f"compiled {compile_codesift(codesift_env())}")
    results: list[Json] = []
    for group, name, root, in_git in corpora:
        rounds: list[Json] = []
        for i in range(args.side_repeat):
            # How many cores the host gives this machine (the peer runs on one, codesift
            # on two): measured before each round of the corpora the targets are on.
            cores = effective_cores() if group != "devset2" else None
            shown = "" if cores is None else f", effective cores {cores:.2f}"
            log(f"[{name}] round {i + 1}/{args.side_repeat} (load {os.getloadavg()[0]:.2f}{shown})")
            rounds.append(measure_round(name, root, in_git, peer_python) | {"cores": cores})
        result: Json = {"group": group, "name": name, "root": str(root), "rounds": rounds}
        result.update(medians(rounds))
        if group == "stdlib" and args.minilm_limit > 0:
            log(f"[{name}] MiniLM over the first {args.minilm_limit} chunks")
            result["minilm"] = minilm_estimate(name, root, args.minilm_limit)
        if in_git:
            result["commits"] = int(
                subprocess.run(
                    ["git", "-C", str(root), "rev-list", "--count", "HEAD"],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
            )
        peer = result["peer"]["wall"]
        log(
            f"[{name}] peer {peer:.2f} s; lexical {result['lexical']['wall']:.2f} s"
            f" ({result['lexical']['wall'] / peer:.2f}x); static {result['static']['wall']:.2f} s"
            f" ({result['static']['wall'] / peer:.2f}x); history {result['history']['wall']:.2f} s"
        )
        results.append(result)
        RAW_RESULTS.write_text(json.dumps({"machine": machine, "results": results}, indent=1))
    machine["load_end"] = os.getloadavg()
    machine["cores_end"] = effective_cores()
    raw: Json = {
        "machine": machine,
        "args": vars(args) | {"out": str(args.out)},
        "results": results,
    }
    RAW_RESULTS.write_text(json.dumps(raw, indent=1, default=str))
    return raw


# --- the table -------------------------------------------------------------------------------


def _s(value: float) -> str:
    return f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def _ratio(value: float, base: float) -> str:
    return f"{value / base:.2f}x" if base > 0 else "-"


def _mark(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def _cores_note(machine: Json) -> str:
    """The effective cores at start and end (runs before they were recorded: none)."""
    if "cores_start" not in machine:
        return ""
    return (
        f" Effective cores (one CPU loop against two at once in two processes; 2.0 when"
        f" the host gives this machine both its cores) at start and end:"
        f" {machine['cores_start']:.2f} / {machine['cores_end']:.2f}. The peer indexes on"
        " one core, codesift on two: with fewer effective cores codesift's walls grow and"
        " the peer's do not."
    )


def _round_cores(r: Json) -> str:
    cores = [round_["cores"] for round_ in r["rounds"] if round_.get("cores") is not None]
    if not cores:
        return ""
    return f" Effective cores before each round: {', '.join(f'{c:.2f}' for c in cores)}."


def devset2_summary(results: Sequence[Json]) -> Json:
    rows = [r for r in results if r["group"] == "devset2"]
    if not rows:
        return {}
    ratios = {r["name"]: r["lexical"]["wall"] / r["peer"]["wall"] for r in rows}
    worst = max(ratios, key=lambda name: ratios[name])
    summed = sum(r["lexical"]["wall"] for r in rows) / sum(r["peer"]["wall"] for r in rows)
    static_summed = sum(r["static"]["wall"] for r in rows) / sum(r["peer"]["wall"] for r in rows)
    return {
        "corpora": len(rows),
        "summed": summed,
        "static_summed": static_summed,
        "median": statistics.median(ratios.values()),
        "worst": worst,
        "worst_ratio": ratios[worst],
        "above_3x": sorted(name for name, ratio in ratios.items() if ratio > TARGET_DEVSET2_WORST),
    }


def render(raw: Json) -> str:
    machine, results = raw["machine"], raw["results"]
    args = raw["args"]
    dirty = (
        " with uncommitted changes to " + ", ".join(f"`{p}`" for p in machine["dirty"])
        if machine.get("dirty")
        else ""
    )
    fmt = "/".join
    lines = [
        "## Indexing phases beside the peer (`bench/index_speed.py --side-by-side`)",
        "",
        f"Run {machine['date']} at commit `{machine['commit']}`{dirty}; machine: nproc"
        f" {machine['nproc']}, {machine['mem_gib']:.1f} GiB RAM, {machine['cpu']};"
        f" {machine['python']}; load average (1/5/15 min)"
        f" {fmt(f'{x:.2f}' for x in machine['load_start'])} at start,"
        f" {fmt(f'{x:.2f}' for x in machine['load_end'])} at end (the machine is shared:"
        " other processes ran beside this one)." + _cores_note(machine),
        "",
        f"Wall seconds from process start to exit, medians of {args['side_repeat']} rounds; each"
        " round runs ctags, the peer and codesift one after the other on the same tree, so"
        " they see the same load. Peer: semble 0.7.0 building its index as"
        " bench/peer_baseline.py runs it (stand-in model: its chunking and BM25), interpreter"
        " start and imports included. lexical: `codesift index --no-embed` into a new"
        " database (search works; a run of 200 source files or more leaves its calls to"
        " the call pass). calls: the call graph complete, that run then `codesift resolve`"
        " (waiting for the background pass the run started, then finishing it). static:"
        " `codesift index` with the static vectors (embedding.model ="
        ' "static": the vectors the default settings compute first, without starting MiniLM'
        " in the background). history: outside git the same as lexical (times come from"
        " modification times, written with the rows); in git, `codesift index --no-embed`"
        " then `codesift history` (the pass completed in the foreground). Both run with"
        " their bytecode compiled (codesift's by compileall before the rounds, the peer's by"
        " pip at its installation), interpreter start and imports included. Ratios are to"
        " the peer's time. Memory: peak RSS of the whole process tree (index workers included),"
        " sampled every 0.1 s; PSS in brackets.",
        "",
        "| corpus | files (peer) | ctags s | peer s | lexical s (x peer) | calls s | static s"
        " (x peer) | history s | MiniLM s | peak tree RSS, static run |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        peer = r["peer"]["wall"]
        ctags = _s(r["ctags"]["wall"]) if "ctags" in r else "-"
        files = r["rounds"][-1]["peer"].get("files", "-")
        history = _s(r["history"]["wall"])
        if r.get("history_in_git"):
            history += f" ({r['commits']:,} commits)"
        else:
            history += " (no git)"
        minilm = "-"
        if "minilm" in r:
            m = r["minilm"]
            minilm = f"~{m['all_seconds'] + r['static']['wall']:.0f} (est.)"
        lines.append(
            f"| {r['name']} | {files} | {ctags} | {_s(peer)} | {_s(r['lexical']['wall'])}"
            f" ({_ratio(r['lexical']['wall'], peer)}) | {_calls(r)} | {_s(r['static']['wall'])}"
            f" ({_ratio(r['static']['wall'], peer)}) | {history} | {minilm} |"
            f" {r['static']['peak_rss'] / MIB:.0f} MiB ({r['static']['peak_pss'] / MIB:.0f}) |"
        )
    lines.append("")
    for r in results:
        if r["group"] != "stdlib":
            continue
        peer = r["peer"]
        lexical, static = r["lexical"], r["static"]
        lexical_ok = _mark(lexical["wall"] <= TARGET_STDLIB_LEXICAL * peer["wall"])
        rss = max(lexical["peak_rss"], static["peak_rss"]) / MIB
        lines.append(
            f"**{r['name']}**: lexical {_ratio(lexical['wall'], peer['wall'])} of the peer"
            f" (target <= {TARGET_STDLIB_LEXICAL}x: {lexical_ok}),"
            f" static {_ratio(static['wall'], peer['wall'])} (target <= {TARGET_STDLIB_STATIC}x:"
            f" {_mark(static['wall'] <= TARGET_STDLIB_STATIC * peer['wall'])}); peak tree RSS"
            f" {rss:.0f} MiB (target <="
            f" {TARGET_TREE_RSS_MIB:.0f}: {_mark(rss <= TARGET_TREE_RSS_MIB)})."
            f" CPU seconds (median, whole tree): peer {peer['cpu']:.1f}, lexical"
            f" {lexical['cpu']:.1f}, static {static['cpu']:.1f}. Walls per round: peer"
            f" {', '.join(_s(x) for x in peer['walls'])}; lexical"
            f" {', '.join(_s(x) for x in lexical['walls'])}; static"
            f" {', '.join(_s(x) for x in static['walls'])}." + _round_cores(r)
        )
        if "minilm" in r:
            m = r["minilm"]
            lines.append(
                f"MiniLM-ready is an estimate: a fresh process embedded the first"
                f" {m['embedded']:,} of {m['embeddable']:,} embeddable chunks of the lexical"
                f" index in {m['seconds']:.1f} s ({m['chunks_per_s']:.0f} chunks/s, model load"
                f" {m['load_seconds']:.1f} s apart), so all of them take ~{m['all_seconds']:.0f} s"
                " after the static vectors (MiniLM runs in a background `codesift embed` while"
                " search already works)."
            )
        lines.append("")
    summary = devset2_summary(results)
    if summary:
        above = "; above: " + ", ".join(summary["above_3x"]) if summary["above_3x"] else ""
        lines.append(
            f"**dev set 2** ({summary['corpora']} corpora): lexical-ready summed"
            f" {summary['summed']:.2f}x the peer (target <= {TARGET_DEVSET2_SUM}x:"
            f" {_mark(summary['summed'] <= TARGET_DEVSET2_SUM)}), median ratio"
            f" {summary['median']:.2f}x, worst {summary['worst']} {summary['worst_ratio']:.2f}x"
            f" (target: none above {TARGET_DEVSET2_WORST:.0f}x:"
            f" {_mark(not summary['above_3x'])}{above});"
            f" static-ready summed {summary['static_summed']:.2f}x."
        )
        lines.append("")
    for r in results:
        if r["group"] == "deep":
            pass_walls = [x["history"]["pass_wall"] for x in r["rounds"]]
            lines.append(
                f"**{r['name']}** ({r['commits']:,} commits, bench/history_speed.py's"
                f" `make_repo` with merges and renames): lexical-ready"
                f" {_s(r['lexical']['wall'])} s, history complete {_s(r['history']['wall'])} s"
                f" after the start (the `codesift history` part: median"
                f" {_s(statistics.median(pass_walls))} s)."
            )
            lines.append("")
    names = f" --side-names {args['side_names']}" if args.get("side_names") else ""
    if args.get("side_corpora") != "stdlib,devset2,deep":
        names = f" --side-corpora {args['side_corpora']}{names}"
    lines.append(
        "Command: `PYTHONPATH=server python bench/index_speed.py --side-by-side"
        f" --side-repeat {args['side_repeat']} --minilm-limit {args['minilm_limit']}{names}"
        " --write`"
        " (raw figures: bench/.data/index_phases-last.json)."
    )
    return "\n".join(lines).rstrip() + "\n"


def write_section(out: Path, body: str) -> None:
    section = f"{SECTION_BEGIN}\n{body.rstrip()}\n{SECTION_END}\n"
    text = out.read_text() if out.exists() else "# Benchmark results\n"
    pattern = re.compile(
        re.escape(SECTION_BEGIN) + r".*?" + re.escape(SECTION_END) + r"\n?", re.DOTALL
    )
    if pattern.search(text):
        text = pattern.sub(lambda _m: section, text, count=1)
    elif "<!-- index_speed:end -->\n" in text:
        text = text.replace(
            "<!-- index_speed:end -->\n", "<!-- index_speed:end -->\n\n" + section, 1
        )
    else:
        text = text.rstrip() + "\n\n" + section
    out.write_text(text)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--side-by-side",
        action="store_true",
        help="time lexical / static / history / MiniLM readiness beside the peer and ctags",
    )
    parser.add_argument("--side-repeat", type=int, default=3, help="rounds per corpus")
    parser.add_argument(
        "--side-corpora",
        default="stdlib,devset2,deep",
        help="comma-separated groups: stdlib, devset2, deep",
    )
    parser.add_argument(
        "--minilm-limit", type=int, default=2000, help="chunks MiniLM embeds (0: skip)"
    )
    parser.add_argument(
        "--side-names", default="", help="only these corpora (comma-separated names)"
    )
    parser.add_argument("--deep-commits", type=int, default=100_000)
    parser.add_argument("--deep-files", type=int, default=2000)


def _calls(r: Json) -> str:
    calls = r.get("calls")
    if not isinstance(calls, dict):
        return "-"
    if calls["wall"] == r["lexical"]["wall"]:
        return f"{_s(calls['wall'])} (at once)"
    return _s(calls["wall"])


def results_figures(raw: Json) -> Json:
    """bench/results/index_speed_side.json's figures: per corpus and tool, the
    median wall and CPU seconds and the peak memory (not every round)."""
    tools = ("ctags", "peer", "lexical", "calls", "static", "history")
    keep = ("wall", "cpu", "peak_rss", "peak_pss")
    return {
        "corpora": {
            r["name"]: {
                "group": r.get("group"),
                **{t: {k: r[t].get(k) for k in keep} for t in tools if isinstance(r.get(t), dict)},
            }
            for r in raw["results"]
        },
        "args": {k: v for k, v in raw.get("args", {}).items() if k not in ("out", "write")},
    }


def main(args: argparse.Namespace) -> int:
    raw = run(args)
    report = render(raw)
    print(report)
    if args.write:
        write_section(args.out, report)
        from runinfo import markdown_tables, write_results

        figures = {**results_figures(raw), "tables": markdown_tables(report)}
        write_results("index_speed_side", figures, machine_info=raw["machine"])
        log(f"updated {args.out}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "_peer":
        raise SystemExit(peer_runner(sys.argv[2]))
    raise SystemExit("run through bench/index_speed.py --side-by-side")
