"""Language server latency: save-to-searchable, workspace/symbol, hover, memory.

    python bench/lsp_latency.py [--work-dir DIR] [--saves 30] [--write] [--out bench/RESULTS.md]

Runs `codesift serve` in a subprocess and talks to it over stdio with pygls's
LanguageClient (tests/lsp/harness.py), like an editor would:

1. Lexical, on a copy of the running interpreter's stdlib (bench/corpora.py
   prepares it; the copy under --work-dir is edited, never the shared corpus),
   embeddings off: the cold index in the server (time, server RSS after it, peak
   RSS), then save-to-searchable latency: a new function is written to a file and
   the time until codesift/search returns it is measured, (a) with a didSave
   notification as editors send, (b) from the watcher alone (no didSave); then
   workspace/symbol latency (names sampled from the index: whole names, prefixes,
   a typo, word initials) and hover latency on sampled definitions. Round trips
   are measured in the client, so they include JSON-RPC over stdio.
2. With vectors, on a copy of the stdlib's `email` package (all vectors computed
   first): save-to-searchable where "searchable" means the vector stream finds the
   new function for a paraphrase of its docstring.

With --write, the section between `<!-- lsp_latency:begin -->` and
`<!-- lsp_latency:end -->` of --out is replaced (added if missing).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
sys.path[:0] = [str(REPO_DIR / "server"), str(REPO_DIR / "tests" / "lsp"), str(BENCH_DIR)]

import apsw  # noqa: E402
from harness import LspSession  # noqa: E402
from lsprotocol import types  # noqa: E402

from corpora import DATA_DIR, prepare_corpus  # noqa: E402
from index_speed import machine_info  # noqa: E402
from timing import percentile  # noqa: E402

SECTION = "lsp_latency"
DEFAULT_OUT = BENCH_DIR / "RESULTS.md"

Json = dict[str, Any]


def summary(values: list[float]) -> Json:
    return {
        "n": len(values),
        "p50": percentile(values, 50),
        "p95": percentile(values, 95),
        "max": max(values) if values else float("nan"),
        "mean": statistics.fmean(values) if values else float("nan"),
    }


def rss_kib(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a process, KiB."""
    rss = hwm = 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1])
        elif line.startswith("VmHWM:"):
            hwm = int(line.split()[1])
    return rss, hwm


def loadavg() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def copy_tree(source: Path, dest: Path) -> Path:
    if not dest.exists():
        shutil.copytree(source, dest, symlinks=True)
    return dest


def wait_searchable(
    lsp: LspSession, query: str, qname: str, stream: str | None, timeout: float
) -> float:
    """Seconds until a search for `query` returns `qname` (found by `stream` if given)."""
    started = time.perf_counter()
    while True:
        reply = lsp.request("codesift/search", {"query": query, "top_k": 20})
        for result in reply["results"]:
            if result["qualified_name"] == qname and (
                stream is None or any(h["stream"] == stream for h in result["provenance"])
            ):
                return time.perf_counter() - started
        if time.perf_counter() - started > timeout:
            raise TimeoutError(f"{qname} not searchable after {timeout} s")
        time.sleep(0.005)


def save_latencies(
    lsp: LspSession,
    root: Path,
    rel_dir: str,
    count: int,
    *,
    did_save: bool,
    vectors: bool,
    timeout: float,
) -> list[float]:
    """Write a new function into a probe file `count` times; time until searchable."""
    out: list[float] = []
    probe = root / rel_dir / "codesift_lsp_probe.py"
    module = f"{rel_dir.replace('/', '.')}.codesift_lsp_probe" if rel_dir else "codesift_lsp_probe"
    words = ["ledger", "invoice", "parcel", "voucher", "tariff", "rebate", "escrow", "payout"]
    for i in range(count):
        word = words[i % len(words)]
        name = f"reconcile_{word}_batch_{i}_{random.randrange(10**6)}"
        doc = f"Reconcile the {word} batch number {i} against the bank statement."
        probe.write_text(f'def {name}(rows):\n    """{doc}"""\n    return rows\n')
        if did_save:
            lsp.notify("textDocument/didSave", {"textDocument": {"uri": probe.as_uri()}})
        query = f"match {word} entries with the bank statement" if vectors else name
        out.append(
            wait_searchable(lsp, query, f"{module}.{name}", "vector" if vectors else None, timeout)
        )
        time.sleep(0.3)  # let the watcher's duplicate event settle
    probe.unlink()
    if did_save:
        lsp.notify("textDocument/didSave", {"textDocument": {"uri": probe.as_uri()}})
    time.sleep(0.5)
    return out


def sample_symbols(db: Path, count: int) -> list[str]:
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    names = [
        str(r[0])
        for r in conn.execute(
            "SELECT name FROM nodes WHERE kind != 'module' AND length(name) >= 5"
            " ORDER BY random() LIMIT ?",
            (count,),
        )
    ]
    conn.close()
    queries: list[str] = []
    for i, name in enumerate(names):
        kind = i % 4
        if kind == 0:
            queries.append(name)
        elif kind == 1:
            queries.append(name[: max(3, len(name) // 2)])
        elif kind == 2 and len(name) > 5:  # swap two letters: a typo
            j = len(name) // 2
            queries.append(name[:j] + name[j + 1] + name[j] + name[j + 2 :])
        else:
            parts = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", name)
            initials = "".join(p[0] for p in parts).lower()
            queries.append(initials if len(initials) >= 2 else name)
    return queries


def sample_definitions(db: Path, root: Path, count: int) -> list[tuple[Path, int, int]]:
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    rows: list[tuple[str, str, int]] = conn.execute(  # type: ignore[assignment]
        "SELECT f.path, n.name, n.start_line FROM nodes n JOIN files f ON f.id = n.file_id"
        " WHERE n.kind IN ('function', 'method', 'class') AND f.language = 'python'"
        " ORDER BY random() LIMIT ?",
        (count * 3,),
    ).fetchall()
    conn.close()
    out: list[tuple[Path, int, int]] = []
    for path, name, line in rows:
        text = (root / path).read_text(encoding="utf-8", errors="replace").splitlines()
        for offset in range(4):
            index = line - 1 + offset
            if index < len(text) and (col := text[index].find(str(name))) >= 0:
                out.append((root / path, index, col + 1))
                break
        if len(out) >= count:
            break
    return out


def timed(fn: Any) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def run_lexical(work: Path, saves: int) -> Json:
    corpus = prepare_corpus("python-stdlib", lambda m: print(m, file=sys.stderr))
    root = copy_tree(corpus.root, work / "python-stdlib")
    db = work / "python-stdlib.db"
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    options = {"embeddings": False, "index": {"db_path": str(db)}}
    result: Json = {"corpus": str(root), "load_start": loadavg()}
    with LspSession([root], options, log_file=work / "lexical.log") as lsp:
        assert lsp.pid is not None
        started = time.perf_counter()
        lsp.wait_ready(timeout=1800)
        result["cold_index_s"] = time.perf_counter() - started
        status = lsp.request("codesift/status")["folders"][0]
        result["index"] = {k: status[k] for k in ("files", "nodes", "edges", "chunks")}
        result["database_bytes"] = status["database_bytes"]
        rss, hwm = rss_kib(lsp.pid)
        result["rss_after_index_kib"], result["peak_rss_kib"] = rss, hwm
        # Searches and symbol lookups warm the page cache the way an editor session does.
        lsp.request("codesift/search", {"query": "warm up"})
        result["save_did_save_s"] = summary(
            save_latencies(lsp, root, "email", saves, did_save=True, vectors=False, timeout=10)
        )
        result["save_watcher_s"] = summary(
            save_latencies(
                lsp, root, "json", max(10, saves // 2), did_save=False, vectors=False, timeout=10
            )
        )
        queries = sample_symbols(db, 200)
        symbol_ms = []
        hits = 0
        found: list[Any] = []
        for query in queries:

            def ask(q: str = query) -> None:
                found[:] = (
                    lsp.request(types.WORKSPACE_SYMBOL, types.WorkspaceSymbolParams(query=q)) or []
                )

            symbol_ms.append(timed(ask))
            hits += bool(found)
        result["workspace_symbol_ms"] = summary(symbol_ms)
        result["workspace_symbol_queries"] = {"n": len(queries), "with_results": hits}
        hover_ms = []
        for path, line, col in sample_definitions(db, root, 100):
            params = types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=path.as_uri()),
                position=types.Position(line=line, character=col),
            )
            hover_ms.append(timed(lambda p=params: lsp.request(types.TEXT_DOCUMENT_HOVER, p)))
        result["hover_ms"] = summary(hover_ms)
        rss, hwm = rss_kib(lsp.pid)
        result["rss_end_kib"], result["peak_rss_kib"] = rss, max(hwm, result["peak_rss_kib"])
    result["exit_code"] = lsp.returncode
    result["load_end"] = loadavg()
    return result


def run_vectors(work: Path, saves: int) -> Json:
    corpus = prepare_corpus("python-stdlib", lambda m: print(m, file=sys.stderr))
    root = work / "email-ws"
    if not root.exists():
        shutil.copytree(corpus.root / "email", root / "email")
    db = work / "email.db"
    for suffix in ("", "-wal", "-shm"):
        Path(str(db) + suffix).unlink(missing_ok=True)
    options = {
        "embeddings": True,
        "index": {"db_path": str(db)},
        "embedding": {"cache_dir": str(work / "embedding-cache")},
    }
    result: Json = {"corpus": "stdlib email/ package", "load_start": loadavg()}
    with LspSession([root], options, log_file=work / "vectors.log") as lsp:
        assert lsp.pid is not None
        started = time.perf_counter()
        lsp.wait_ready(timeout=600)
        while True:
            vectors = lsp.request("codesift/status")["folders"][0]["vectors"]
            if vectors["embedded"] >= vectors["embeddable"]:
                break
            time.sleep(0.2)
        result["index_and_vectors_s"] = time.perf_counter() - started
        result["vectors"] = vectors
        result["save_vectors_s"] = summary(
            save_latencies(lsp, root, "email", saves, did_save=True, vectors=True, timeout=30)
        )
        result["rss_end_kib"], result["peak_rss_kib"] = rss_kib(lsp.pid)
    result["load_end"] = loadavg()
    return result


def section(machine: Json, lexical: Json, vectors: Json) -> str:
    def ms(s: Json) -> str:
        return (
            f"{s['p50'] * 1000:.0f} / {s['p95'] * 1000:.0f} / {s['max'] * 1000:.0f} ms (n={s['n']})"
        )

    def plain_ms(s: Json) -> str:
        return f"{s['p50']:.1f} / {s['p95']:.1f} / {s['max']:.1f} ms (n={s['n']})"

    def ok(value: float, target: float) -> str:
        return "ok" if value <= target else "**over**"

    idx = lexical["index"]
    sym = lexical["workspace_symbol_queries"]
    rss_after, rss_end = lexical["rss_after_index_kib"] / 1024, lexical["rss_end_kib"] / 1024
    lines = [
        f"<!-- {SECTION}:begin -->",
        "## Language server (`bench/lsp_latency.py`)",
        "",
        f"Run {machine['date']} at commit `{machine['commit']}`; machine: nproc {machine['nproc']},"
        f" {machine['mem_gib']:.1f} GiB RAM, {machine['cpu']}; {machine['python']} on"
        f" {machine['platform']}; load average (1/5/15 min) {lexical['load_start']} at start,"
        f" {vectors['load_end']} at end (other jobs shared the machine).",
        "",
        "`codesift serve` in a subprocess, driven over stdio by pygls's LanguageClient;"
        " every figure is a client-side round trip (JSON-RPC included). Save-to-searchable:"
        " a new function is written to a file, then codesift/search is polled every 5 ms"
        " until it returns it.",
        "",
        "| figure | value | target |",
        "|---|---|---|",
        f"| stdlib copy indexed by the server (cold, embeddings off) | {idx['files']:,} files,"
        f" {idx['nodes']:,} nodes, {idx['chunks']:,} chunks in"
        f" {lexical['cold_index_s']:.1f} s |  |",
        f"| saved file searchable, lexical, with didSave: p50 / p95 / max |"
        f" {ms(lexical['save_did_save_s'])} | p95 <= 300 ms"
        f" ({ok(lexical['save_did_save_s']['p95'], 0.3)}) |",
        f"| saved file searchable, lexical, watcher only (0.2 s quiet period) |"
        f" {ms(lexical['save_watcher_s'])} |  |",
        f"| saved file searchable by the vector stream (email/ package, all vectors"
        f" ready first) | {ms(vectors['save_vectors_s'])} | p95 <= 1.5 s"
        f" ({ok(vectors['save_vectors_s']['p95'], 1.5)}) |",
        f"| workspace/symbol: p50 / p95 / max ({sym['with_results']}"
        f" of {sym['n']} queries found something) |"
        f" {plain_ms(lexical['workspace_symbol_ms'])} | p50 <= 16 ms"
        f" ({ok(lexical['workspace_symbol_ms']['p50'], 16)}) |",
        f"| hover on sampled definitions: p50 / p95 / max | {plain_ms(lexical['hover_ms'])} |  |",
        f"| server RSS after indexing the stdlib; at the end; peak |"
        f" {rss_after:.0f} MiB; {rss_end:.0f} MiB;"
        f" {lexical['peak_rss_kib'] / 1024:.0f} MiB (index workers not included) |  |",
        f"| database | {lexical['database_bytes'] / 2**20:.1f} MiB |  |",
        f"| email/ package: index + all vectors ({vectors['vectors']['embedded']:,} chunks);"
        f" server peak RSS | {vectors['index_and_vectors_s']:.1f} s;"
        f" {vectors['peak_rss_kib'] / 1024:.0f} MiB |  |",
        "",
        "workspace/symbol queries are node names sampled from the index: a quarter each whole"
        " names, half-name prefixes, names with two letters swapped, and word initials.",
        f"<!-- {SECTION}:end -->",
    ]
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
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work-dir", type=Path, default=DATA_DIR / "lsp")
    parser.add_argument("--saves", type=int, default=30)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    args.work_dir.mkdir(parents=True, exist_ok=True)
    machine = machine_info()
    lexical = run_lexical(args.work_dir, args.saves)
    print(json.dumps(lexical, indent=1), file=sys.stderr)
    vectors = run_vectors(args.work_dir, max(10, args.saves // 2))
    print(json.dumps(vectors, indent=1), file=sys.stderr)
    (args.work_dir / "lsp_latency-last.json").write_text(
        json.dumps({"machine": machine, "lexical": lexical, "vectors": vectors}, indent=1)
    )
    text = section(machine, lexical, vectors)
    print(text)
    if args.write:
        write_section(args.out, text)
        from runinfo import markdown_tables, write_results

        write_results(SECTION, {"tables": markdown_tables(text)}, machine_info=machine)
    return 0


if __name__ == "__main__":
    sys.exit(main())
