"""`codesift web` latency: POST /api/search from one client and from 16 at once,
and the /search console from Enter to the first result in headless Chromium.

    python bench/http_latency.py [--rounds 10] [--clients 16] [--seconds 300]
        [--browser-rounds 3] [--caches 256,0] [--work-dir DIR] [--write]
        [--out bench/RESULTS.md]

On the stdlib copy bench/cli_latency.py indexes (bench/corpora.py prepares the
shared corpus; embeddings off in the copy's .codesift.toml), the `codesift web`
console script of this environment serves the copy on a loopback port, as a
user starts it (no tokens: authentication off). Once its first index is built:

- one client: each query of cli_latency.QUERIES once per round, one after the
  other on one keep-alive connection; wall clock per request, ms;
- `--clients` clients: as many threads, each on its own connection, each asking
  the queries in turn without pause for `--seconds`; every answer must be 200
  (errors are counted), the server's RSS (VmRSS of its process) is sampled every
  5 s;
- the console (`--browser-rounds`, 0 to leave it out; needs chromium and
  chromium-driver): Chromium opens /search, types each query and presses Enter;
  the page records the time from the keypress to the first result rendered
  (window.codesiftTimings), which is read back.

The phases run once per `--caches` value, each on a server of its own started
with `--answer-cache N`: the default (256) answers the queries asked again from
its answer cache while the index is unchanged, 0 keeps none (every request is
the engine's search; the console runs with the first value only).

Each phase also gives the server's CPU time per request (user + system of its
process, every thread, from /proc: the steadier figure on a shared machine) and
the load average as it started.

With --write, the section between `<!-- http_latency:begin -->` and
`<!-- http_latency:end -->` of --out is replaced (added if missing).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
sys.path[:0] = [str(REPO_DIR / "server"), str(BENCH_DIR)]

from cli_latency import QUERIES, env, prepare_copy  # noqa: E402
from corpora import DATA_DIR  # noqa: E402
from index_speed import machine_info  # noqa: E402
from runinfo import write_section  # noqa: E402
from timing import log, percentile  # noqa: E402

SECTION = "http_latency"
DEFAULT_OUT = BENCH_DIR / "RESULTS.md"
CODESIFT = Path(sys.executable).with_name("codesift")
Json = dict[str, Any]
# How many searches the console has rendered.
COUNT = "return window.codesiftTimings.length"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds(pid: int) -> float:
    """The process's CPU time so far (user + system, all its threads), seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def summary(values: list[float]) -> Json:
    return {
        "p50": percentile(values, 50),
        "p95": percentile(values, 95),
        "mean": statistics.fmean(values) if values else float("nan"),
        "min": min(values) if values else float("nan"),
        "n": len(values),
    }


class Server:
    """`codesift web --root COPY` on a free loopback port."""

    def __init__(self, root: Path, work_dir: Path, answer_cache: int = 256) -> None:
        import httpx

        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        tokens = work_dir / "no-tokens.json"
        tokens.unlink(missing_ok=True)
        self.log = work_dir / "web.log"
        self.process = subprocess.Popen(
            [
                str(CODESIFT),
                "web",
                "--root",
                str(root),
                "--listen",
                f"127.0.0.1:{self.port}",
                "--tokens",
                str(tokens),
                "--log-file",
                str(self.log),
                "--answer-cache",
                str(answer_cache),
            ],
            env=env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 1800
        with httpx.Client(timeout=60) as client:
            while True:
                if self.process.poll() is not None:
                    raise SystemExit(f"codesift web ended: see {self.log}")
                try:
                    status = client.get(self.base + "/api/status").json()
                    if status.get("index", {}).get("fresh") and status.get("exists"):
                        break
                except (httpx.HTTPError, ValueError):
                    pass
                if time.monotonic() > deadline:
                    raise SystemExit("codesift web did not index the copy in 30 min")
                time.sleep(1.0)
        log(f"codesift web ready on {self.base} (pid {self.process.pid})")

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            self.process.kill()


def one_client(server: Server, rounds: int) -> tuple[Json, int]:
    import httpx

    base = server.base
    times: list[float] = []
    errors = 0
    with httpx.Client(timeout=60) as client:
        for query in QUERIES:  # warm-up: each query once
            client.post(base + "/api/search", json={"query": query})
        cpu = cpu_seconds(server.process.pid)
        for _ in range(rounds):
            for query in QUERIES:
                started = time.perf_counter()
                response = client.post(base + "/api/search", json={"query": query})
                times.append((time.perf_counter() - started) * 1000)
                errors += response.status_code != 200
        cpu = cpu_seconds(server.process.pid) - cpu
    result = summary(times)
    result["cpu_ms"] = cpu * 1000 / max(1, len(times))
    return result, errors


def concurrent(server: Server, clients: int, seconds: float) -> Json:
    import httpx

    stop = threading.Event()
    times: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()

    def client(offset: int) -> None:
        mine: list[float] = []
        with httpx.Client(timeout=120) as http:
            i = offset
            while not stop.is_set():
                query = QUERIES[i % len(QUERIES)]
                i += 1
                started = time.perf_counter()
                try:
                    response = http.post(server.base + "/api/search", json={"query": query})
                    ok = response.status_code == 200
                    said = str(response.status_code)
                except httpx.HTTPError as exc:
                    ok, said = False, type(exc).__name__
                mine.append((time.perf_counter() - started) * 1000)
                if not ok:
                    with lock:
                        errors.append(said)
        with lock:
            times.extend(mine)

    rss: list[tuple[float, float]] = [(0.0, rss_mib(server.process.pid))]
    cpu = cpu_seconds(server.process.pid)
    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    while time.monotonic() - started < seconds:
        time.sleep(5.0)
        rss.append((time.monotonic() - started, rss_mib(server.process.pid)))
    stop.set()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    cpu = cpu_seconds(server.process.pid) - cpu
    result = summary(times)
    result.update(
        {
            "cpu_ms": cpu * 1000 / max(1, len(times)),
            "clients": clients,
            "seconds": round(elapsed, 1),
            "errors": len(errors),
            "error_kinds": sorted(set(errors)),
            "throughput": len(times) / elapsed,
            "rss_start": rss[0][1],
            "rss_after_1min": next((m for t, m in rss if t >= 60), rss[-1][1]),
            "rss_end": rss[-1][1],
            "rss_max": max(m for _, m in rss),
        }
    )
    return result


def console(server: Server, rounds: int) -> Json | None:
    """Enter -> first result rendered in headless Chromium, ms (None without it)."""
    driver_path = shutil.which("chromedriver")
    if rounds <= 0 or driver_path is None or not Path("/usr/bin/chromium").exists():
        log("console: skipped (no rounds, or no chromium / chromium-driver)")
        return None
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    times: list[float] = []
    try:
        driver.get(server.base + "/search")
        wait = WebDriverWait(driver, 120, poll_frequency=0.02)
        box = wait.until(lambda d: d.find_element(By.ID, "q"))
        done = 0
        for round_no in range(rounds + 1):  # the first round warms up
            for query in QUERIES:
                box.clear()
                box.send_keys(query, Keys.ENTER)
                done += 1
                wait.until(lambda d, n=done: d.execute_script(COUNT) >= n)
                if round_no > 0:
                    timing = driver.execute_script("return window.codesiftTimings.at(-1)")
                    times.append(float(timing["ms"]))
    finally:
        driver.quit()
    return summary(times)


def _cache_label(cache: int) -> str:
    return f"answer cache {cache}" if cache > 0 else "no answer cache"


def _rows(run: Json, rounds: int) -> list[str]:
    one, many, label = run["one"], run["many"], _cache_label(run["cache"])
    return [
        f"| one client, {len(QUERIES)} queries x {rounds} rounds ({label})"
        f" | {one['p50']:.1f} | {one['p95']:.1f} | {one['mean']:.1f} | {one['min']:.1f}"
        f" | {one['n']} | {run['one_errors']} | {one.get('cpu_ms', float('nan')):.1f}"
        f" | {run.get('load_one', '')} | p50 <= 15, p95 <= 60 |",
        f"| {many['clients']} clients at once for {many['seconds']:.0f} s ({label})"
        f" | {many['p50']:.1f} | {many['p95']:.1f} | {many['mean']:.1f} | {many['min']:.1f}"
        f" | {many['n']} | {many['errors']} | {many.get('cpu_ms', float('nan')):.1f}"
        f" | {run.get('load_many', '')} | no errors, p95 <= 250 |",
    ]


def render(result: Json, machine: Json) -> str:
    runs, page = result["runs"], result.get("console")
    dirty = machine["dirty"]
    caches = ",".join(str(run["cache"]) for run in runs)
    clients = runs[0]["many"]["clients"]
    lines = [
        "## HTTP API and console (`bench/http_latency.py`)",
        "",
        f"Run {machine['date']} at commit `{machine['commit']}`"
        + (f" (uncommitted changes in {', '.join(dirty)})" if dirty else "")
        + f"; machine: nproc {machine['nproc']}, {machine['mem_gib']:.1f} GiB RAM,"
        f" {machine['cpu']}; {machine['python']} on {machine['platform']}; load average"
        f" (1/5/15 min) {result['load_start']} at start, {result['load_end']} at end"
        " (other jobs shared the machine).",
        "",
        "`codesift web --root COPY --answer-cache N` (the console script, no tokens) on a"
        " copy of the stdlib, embeddings off; `POST /api/search` over loopback with httpx,"
        " wall clock per request, ms. The clients ask the same 10 queries in turn: with"
        " the answer cache (the default, 256 answers) every query after its first is"
        " answered from it while the index is unchanged; without it (0) every request is"
        " the engine's search. Run as `python bench/http_latency.py --rounds"
        f" {result['rounds']} --clients {clients} --seconds {result['seconds']:.0f}"
        f" --browser-rounds {result['browser_rounds']} --caches {caches} --write`.",
        "",
        "CPU-ms: the server process's CPU time (user + system, every thread) over the"
        " phase, per request: the steadier figure on a shared machine. Load: the 1/5/15"
        " min load average as the phase started. The clients run on the same 2 cores.",
        "",
        "| mode | p50 | p95 | mean | min | n | errors | CPU-ms | load | target |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for run in runs:
        lines += _rows(run, result["rounds"])
    if page is not None:
        lines.append(
            f"| console: Enter -> first result rendered (headless Chromium),"
            f" {len(QUERIES)} queries x {result['browser_rounds']} rounds"
            f" ({_cache_label(runs[0]['cache'])})"
            f" | {page['p50']:.1f} | {page['p95']:.1f} | {page['mean']:.1f} | {page['min']:.1f}"
            f" | {page['n']} | | | | <= 300 |"
        )
    lines.append("")
    for run in runs:
        many = run["many"]
        lines.append(
            f"With {many['clients']} clients ({_cache_label(run['cache'])}):"
            f" {many['throughput']:.0f} requests a second; server RSS {many['rss_start']:.0f}"
            f" MiB at start, {many['rss_after_1min']:.0f} MiB after a minute,"
            f" {many['rss_end']:.0f} MiB at the end (max {many['rss_max']:.0f})."
            + (f" Errors: {', '.join(many['error_kinds'])}." if many["error_kinds"] else "")
        )
    return "\n".join(lines)


def _run(root: Path, args: argparse.Namespace, cache: int, browser: int) -> tuple[Json, Any]:
    """The phases on a server with `--answer-cache cache`."""
    server = Server(root, args.work_dir, cache)
    label = _cache_label(cache)
    try:
        load_one = "/".join(f"{v:.2f}" for v in os.getloadavg())
        one, one_errors = one_client(server, args.rounds)
        log(
            f"one client ({label}): p50 {one['p50']:.1f} ms, p95 {one['p95']:.1f} ms,"
            f" {one['cpu_ms']:.1f} CPU-ms a request (load {load_one})"
        )
        load_many = "/".join(f"{v:.2f}" for v in os.getloadavg())
        log(f"{args.clients} clients for {args.seconds:.0f} s ({label})")
        many = concurrent(server, args.clients, args.seconds)
        log(
            f"{args.clients} clients ({label}): p50 {many['p50']:.1f}, p95 {many['p95']:.1f},"
            f" errors {many['errors']}, {many['cpu_ms']:.1f} CPU-ms a request"
            f" (load {load_many} at start)"
        )
        page = console(server, browser)
    finally:
        server.stop()
    run: Json = {
        "cache": cache,
        "one": one,
        "one_errors": one_errors,
        "many": many,
        "load_one": load_one,
        "load_many": load_many,
    }
    return run, page


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=300.0)
    parser.add_argument("--browser-rounds", type=int, default=3)
    parser.add_argument(
        "--caches", default="256,0", help="--answer-cache of each run, comma-separated"
    )
    parser.add_argument("--work-dir", type=Path, default=DATA_DIR / "cli-latency")
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    caches = [max(0, int(value)) for value in args.caches.split(",") if value.strip()]

    args.work_dir.mkdir(parents=True, exist_ok=True)
    root = prepare_copy(args.work_dir)
    machine = machine_info()
    load_start = "/".join(f"{v:.2f}" for v in os.getloadavg())
    runs: list[Json] = []
    page = None
    for i, cache in enumerate(caches):
        run, shown = _run(root, args, cache, args.browser_rounds if i == 0 else 0)
        runs.append(run)
        page = page or shown
    load_end = "/".join(f"{v:.2f}" for v in os.getloadavg())
    result: Json = {
        "rounds": args.rounds,
        "seconds": args.seconds,
        "browser_rounds": args.browser_rounds,
        "runs": runs,
        "console": page,
        "load_start": load_start,
        "load_end": load_end,
    }
    print(json.dumps(result, indent=1))
    body = render(result, machine)
    print(body)
    if args.write:
        write_section(args.out, body, f"<!-- {SECTION}:begin -->", f"<!-- {SECTION}:end -->")
        from runinfo import markdown_tables, write_results

        write_results(SECTION, {"tables": markdown_tables(body)}, machine_info=machine)
        log(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
