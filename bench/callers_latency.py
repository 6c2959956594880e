"""One-shot `codesift callers NAME`: with a server on the workspace, and cold.

    python bench/callers_latency.py [--rounds 20] [--work-dir DIR] [--write]
        [--out bench/RESULTS.md]

On the stdlib copy of bench/cli_latency.py (made under --work-dir, default
bench/.data/callers-latency, embeddings off), the `codesift` console script of
this environment is run as a user would, once per name and mode, the modes
interleaved within each round:

- `server`: a `codesift mcp --root COPY` runs; the CLI asks it over the index's
  local socket (every answer is checked to have come that way, `-vv`);
- `cold`: the same command with `CODESIFT_NO_SERVER=1`: imports, opens the index,
  checks it is up to date, walks the graph, prints;
- `python`: `python -c pass`, the floor of any one-shot command.

The server's own time per answer is read from its log (`answered ... over the
local socket in N ms`).

Per mode: the median and p95 of wall-clock ms over rounds x names, and the
median CPU-ms of the child process (user + system, from its rusage). Targets:
server <= 60 ms, cold <= 200 ms. With --write, the section between
`<!-- callers_latency:begin -->` and `<!-- callers_latency:end -->` of --out is
replaced and bench/results/callers_latency.json written.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH_DIR.parent / "server"), str(BENCH_DIR)]

from cli_latency import ANSWERED, CODESIFT, compile_package, env, prepare_copy  # noqa: E402
from corpora import DATA_DIR  # noqa: E402
from runinfo import head_commit, markdown_tables, write_results, write_section  # noqa: E402
from timing import log, percentile  # noqa: E402

SECTION = "callers_latency"
# Names with few and many callers, plain and qualified.
NAMES = ("urlsplit", "Pool.imap", "doRollover", "_check_closed", "getLogger")
TARGETS = {"server": 60.0, "cold": 200.0}


def run(argv: list[str], cwd: Path, environ: dict[str, str]) -> tuple[float, float, str]:
    """Wall-clock ms, CPU ms of the child, stderr."""
    before = os.times()
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=environ, capture_output=True, text=True, check=False)
    took = (time.perf_counter() - started) * 1000
    after = os.times()
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    if done.returncode != 0:
        raise RuntimeError(f"{argv} exited {done.returncode}: {done.stderr[-500:]}")
    return took, cpu * 1000, done.stderr


def measure(root: Path, rounds: int) -> dict[str, Any]:
    log(f"indexing {root} (embeddings off)")
    subprocess.run(
        [str(CODESIFT), "index", "--no-embed", "--quiet"], cwd=root, env=env(), check=True
    )
    log(f"compiled {compile_package()}")
    server_log = root.parent / "callers-latency-server.log"
    server = subprocess.Popen(
        [str(CODESIFT), "-v", "mcp", "--root", str(root), "--log-file", str(server_log)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env(),
    )
    wall: dict[str, list[float]] = {"server": [], "cold": [], "python": []}
    cpu: dict[str, list[float]] = {"server": [], "cold": [], "python": []}
    cold_env = env(CODESIFT_NO_SERVER="1")
    load_start = os.getloadavg()
    try:
        deadline = time.monotonic() + 600
        while True:  # the server's first look at the index must be over
            _, _, stderr = run([str(CODESIFT), "-vv", "callers", NAMES[0]], root, env())
            if ANSWERED in stderr:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"the server never answered: {stderr[-500:]}")
            time.sleep(0.5)
        for name in NAMES:  # one unmeasured pass of each mode
            run([str(CODESIFT), "callers", name], root, env())
            run([str(CODESIFT), "callers", name], root, cold_env)
        for number in range(rounds):
            log(f"round {number + 1}/{rounds}")
            for name in NAMES:
                took, spent, stderr = run([str(CODESIFT), "-vv", "callers", name], root, env())
                if ANSWERED not in stderr:
                    raise RuntimeError(f"not answered by the server: {stderr[-500:]}")
                wall["server"].append(took)
                cpu["server"].append(spent)
                took, spent, _ = run([str(CODESIFT), "callers", name], root, cold_env)
                wall["cold"].append(took)
                cpu["cold"].append(spent)
                took, spent, _ = run([sys.executable, "-c", "pass"], root, env())
                wall["python"].append(took)
                cpu["python"].append(spent)
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(60)
    load_end = os.getloadavg()
    served = server_log.read_text(encoding="utf-8")
    server_ms = [float(m) for m in re.findall(r"over the local socket in ([0-9.]+) ms", served)]
    server_ms = server_ms[-len(wall["server"]) :]
    return {
        # the server's own time per answer (its log): what the socket path costs
        # beyond the client's start
        "server_side_p50": statistics.median(server_ms) if server_ms else None,
        "names": list(NAMES),
        "rounds": rounds,
        "modes": {
            mode: {
                "n": len(values),
                "p50": statistics.median(values),
                "p95": percentile(values, 95),
                "cpu_p50": statistics.median(cpu[mode]),
            }
            for mode, values in wall.items()
        },
        "load_start": "/".join(f"{x:.2f}" for x in load_start),
        "load_end": "/".join(f"{x:.2f}" for x in load_end),
    }


def machine() -> str:
    cpu = ""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    return f"nproc {os.cpu_count()}, {cpu}, CPython {sys.version.split()[0]}"


def render(figures: dict[str, Any], commit: str) -> str:
    side = figures.get("server_side_p50")
    server_side = f"{side:.1f}" if side is not None else "-"
    rows = []
    for mode, label in (
        ("server", "a server keeps the index (local socket)"),
        ("cold", "no server (`CODESIFT_NO_SERVER=1`)"),
        ("python", "`python -c pass` (the floor)"),
    ):
        m = figures["modes"][mode]
        target = f"<= {TARGETS[mode]:.0f} ms" if mode in TARGETS else ""
        rows.append(
            f"| {label} | {m['p50']:.1f} | {m['p95']:.1f} | {m['cpu_p50']:.0f} | {target} |"
        )
    return "\n".join(
        [
            "## One-shot `codesift callers` (`bench/callers_latency.py`)",
            "",
            f"Run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} at commit `{commit}`;"
            f" {machine()}; load average {figures['load_start']} at start,"
            f" {figures['load_end']} at end. `codesift callers NAME` on the stdlib copy"
            f" (embeddings off), names {', '.join(f'`{n}`' for n in figures['names'])},"
            f" {figures['rounds']} rounds, the modes interleaved; wall clock from start"
            " to exit, CPU of the child process (user + system).",
            "",
            "| mode | p50 ms | p95 ms | CPU ms (p50) | target |",
            "|---|---|---|---|---|",
            *rows,
            "",
            f"The server's own time per answer (its log), p50: {server_side} ms.",
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--work-dir", type=Path, default=DATA_DIR / "callers-latency")
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--out", type=Path, default=BENCH_DIR / "RESULTS.md")
    args = parser.parse_args()
    args.work_dir.mkdir(parents=True, exist_ok=True)
    root = prepare_copy(args.work_dir)
    figures = measure(root, args.rounds)
    body = render(figures, head_commit())
    print(body)
    if args.write:
        write_section(args.out, body, f"<!-- {SECTION}:begin -->", f"<!-- {SECTION}:end -->")
        write_results(SECTION, {**figures, "tables": markdown_tables(body)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
