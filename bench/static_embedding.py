"""The static embedding model: fill speed, memory, index growth, query time, agreement
with MiniLM, and time to full vector coverage from a cold start.

    python bench/static_embedding.py [--part fill|query|agreement|cli|server|all]
        [--write] [--out bench/RESULTS.md]

Parts (each heavy one in a fresh subprocess, so its peak RSS is its own):

- fill: a copy of the Python standard library's lexical index (bench/.data/db/
  quality-python-stdlib.db, built by bench/quality.py) gets its vectors as
  `codesift index` computes them (`fill_vectors`, the default settings: the static
  model, summary and doc chunks): seconds, chunks/s, CPU, peak RSS, and the
  database's growth per vector.
- query: time to embed each dev set query (both dev sets, long and short), one at a
  time on the calling thread.
- agreement: cosine between the static vector and the MiniLM vector that
  bench/quality.py stored for the same chunk (dev set 2 databases
  bench/.data/db/quality-vec-*.db), and whether MiniLM's nearest neighbour among
  those chunks is the static vector's.
- cli: `codesift search "<prose>" --json` on a fresh copy of the stdlib (no index):
  wall time to the first answer, and whether the vector stream contributed.
- server: `codesift serve` on a fresh copy of the stdlib (no index), embeddings on:
  time from the start of the process until codesift/status reports every folder
  indexed with 100% vector coverage, and the server's peak RSS (VmHWM).

With --write, the section between `<!-- static_embedding:begin -->` and
`<!-- static_embedding:end -->` of --out is replaced (added if missing).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
sys.path[:0] = [str(REPO_DIR / "server"), str(REPO_DIR / "tests" / "lsp"), str(BENCH_DIR)]

from index_speed import machine_info  # noqa: E402

DATA_DIR = BENCH_DIR / ".data"
DB_DIR = DATA_DIR / "db"
WORK_DIR = DATA_DIR / "static-bench"
STDLIB = DATA_DIR / "corpora" / "python-stdlib"
STDLIB_DB = DB_DIR / "quality-python-stdlib.db"
SECTION = "static_embedding"
DEFAULT_OUT = BENCH_DIR / "RESULTS.md"
PROSE_QUERY = "how are failed network connections retried with a timeout"
# The embedding settings of the fresh copies the cli and server parts index.
EMBEDDING_TOML = 'model = "static"'
# Seconds the server part goes on after full coverage, while MiniLM refines.
SERVER_AFTER = 60

Json = dict[str, Any]


def _maxrss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_fill(db: Path) -> Json:
    """Fill the static vectors of the lexical index `db` (a copy)."""
    from dataclasses import replace

    from codesift.config import Settings
    from codesift.embedding import fill_vectors, vector_coverage
    from codesift.engine.models import make_embedder
    from codesift.store.database import open_database

    settings = replace(Settings().embedding, model="static")
    conn = open_database(db)
    before = db.stat().st_size
    layers = settings.layers
    rss_start = _maxrss_mib()
    embedder = make_embedder(settings)
    started = time.perf_counter()
    cpu = time.process_time()
    embedded = fill_vectors(conn, embedder, layers=layers)
    seconds = time.perf_counter() - started
    cpu = time.process_time() - cpu
    coverage = vector_coverage(conn, layers, embedder.model_id)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    after = db.stat().st_size
    return {
        "model": settings.model,
        "layers": list(layers),
        "embedded": embedded,
        "coverage": coverage.ratio,
        "seconds": seconds,
        "cpu_seconds": cpu,
        "rss_start_mib": rss_start,
        "peak_rss_mib": _maxrss_mib(),
        "db_before": before,
        "db_after": after,
        "bytes_per_vector": (after - before) / max(embedded, 1),
    }


def bench_fill() -> Json:
    WORK_DIR.mkdir(parents=True, exist_ok=True)
    db = WORK_DIR / "fill.db"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    if not STDLIB_DB.is_file():
        raise SystemExit(f"{STDLIB_DB} is missing: run bench/quality.py --devset 1 first")
    shutil.copyfile(STDLIB_DB, db)
    import apsw
    import sqlite_vec

    conn = apsw.Connection(str(db))
    conn.enable_load_extension(True)
    conn.load_extension(sqlite_vec.loadable_path())
    with conn:  # a lexical index: no vectors yet
        conn.execute("DELETE FROM chunk_vectors")
        conn.execute("DELETE FROM embedded")
        conn.execute("DELETE FROM meta WHERE key = 'vectors_model'")
    conn.execute("VACUUM")
    conn.close()
    done = subprocess.run(
        [sys.executable, __file__, "--child-fill", str(db)],
        capture_output=True,
        text=True,
        check=True,
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def dev_queries() -> list[str]:
    """Every query text of both dev sets (long and short)."""
    from corpora import CORPUS_NAMES, DEVSET2_DIR, DEVSET2_NAMES, DEVSET_DIR

    files = [DEVSET_DIR / f"{name}.json" for name in CORPUS_NAMES]
    for name in DEVSET2_NAMES:
        files += [DEVSET2_DIR / f"{name}.json", DEVSET2_DIR / f"{name}.short.json"]
    return [
        str(item["query"])
        for path in files
        if path.is_file()
        for item in json.loads(path.read_text(encoding="utf-8"))
    ]


def bench_query() -> Json:
    from codesift.embedding import Embedder

    embedder = Embedder(model="static")
    texts = dev_queries()
    embedder.embed_query("warm up")
    times: list[float] = []
    for text in texts:
        started = time.perf_counter()
        embedder.embed_query(text)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return {
        "queries": len(texts),
        "p50_ms": statistics.median(times),
        "p95_ms": times[int(0.95 * (len(times) - 1))],
        "max_ms": times[-1],
    }


def bench_agreement() -> Json:
    import apsw
    import numpy as np
    import sqlite_vec

    from codesift.embedding import Embedder
    from codesift.embedding.vectors import embedding_text
    from codesift.store.reader import chunk_rows

    embedder = Embedder(model="static")
    cosines: list[float] = []
    same_neighbour = total = 0
    for db in sorted(DB_DIR.glob("quality-vec-*.db")):
        conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
        conn.enable_load_extension(True)
        conn.load_extension(sqlite_vec.loadable_path())
        stored = conn.execute("SELECT chunk_id, embedding FROM chunk_vectors").fetchall()
        chunks = chunk_rows(conn, [int(r[0]) for r in stored])
        conn.close()
        rows = [(chunks[int(cid)], blob) for cid, blob in stored if int(cid) in chunks]
        if not rows:
            continue
        minilm = np.frombuffer(b"".join(r[1] for r in rows), np.int8).reshape(len(rows), 384)
        minilm = minilm.astype(np.float32)
        minilm /= np.maximum(np.linalg.norm(minilm, axis=1, keepdims=True), 1e-9)
        static = embedder.embed(
            [embedding_text(c.text, c.qualified_name, c.layer) for c, _ in rows]
        )
        cosines.extend(np.einsum("ij,ij->i", static, minilm).tolist())
        # For a sample of chunks: is MiniLM's nearest other chunk also the static one's?
        sample = np.arange(0, len(rows), max(1, len(rows) // 200))
        for i in sample:
            a = minilm @ minilm[i]
            b = static @ static[i]
            a[i] = b[i] = -2
            same_neighbour += int(np.argmax(a) == np.argmax(b))
            total += 1
    return {
        "chunks": len(cosines),
        "mean_cosine": float(np.mean(cosines)),
        "p10_cosine": float(np.percentile(cosines, 10)),
        "same_nearest_neighbour": same_neighbour / max(total, 1),
        "sampled": total,
    }


def _fresh_stdlib(name: str) -> Path:
    target = WORK_DIR / name
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(STDLIB, target, ignore=shutil.ignore_patterns(".codesift"))
    (target / ".codesift.toml").write_text(f"[embedding]\n{EMBEDDING_TOML}\n", encoding="utf-8")
    return target


def bench_cli() -> Json:
    root = _fresh_stdlib("cli-stdlib")
    env = {**os.environ, "PYTHONPATH": str(REPO_DIR / "server"), "HF_HUB_OFFLINE": "1"}
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "codesift.cli",
            "search",
            PROSE_QUERY,
            "--json",
            "--root",
            str(root),
        ],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    seconds = time.perf_counter() - started
    data = json.loads(done.stdout)
    vector_hits = sum(
        1 for r in data["results"] for h in r["provenance"] if h["stream"].startswith("vector")
    )
    status = subprocess.run(
        [sys.executable, "-m", "codesift.cli", "status", "--json", "--root", str(root)],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    vectors = json.loads(status.stdout)["vectors"]
    shutil.rmtree(root)
    return {
        "query": PROSE_QUERY,
        "seconds_to_first_answer": seconds,
        "results_found_by_vectors": vector_hits,
        "results": len(data["results"]),
        "embedded": vectors["embedded"],
        "embeddable": vectors["embeddable"],
    }


def _usable(db: Path) -> tuple[int, int]:
    """(chunks with a vector of any model, chunks that should have one) in `db`."""
    import apsw

    from codesift.config import Settings
    from codesift.store.vectors import count_embeddable, count_embedded

    if not db.is_file():
        return 0, 0
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        layers = Settings().embedding.layers
        return count_embedded(conn, layers), count_embeddable(conn, layers)
    except apsw.Error:
        return 0, 0
    finally:
        conn.close()


def _cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) of process `pid` and of its children it has
    waited for (the index workers, once their pool has shut down)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def bench_server(after: float = SERVER_AFTER) -> Json:
    """The server with the default settings (MiniLM, static first): seconds until
    every chunk has a vector (the static tier), the CPU seconds the server and its
    index workers spent until then (steadier than seconds on a shared machine),
    and its peak RSS then and over the next `after` seconds, while MiniLM replaces
    them."""
    from harness import LspSession

    from lsp_latency import rss_kib

    load_start = os.getloadavg()
    root = _fresh_stdlib("server-stdlib")
    (root / ".codesift.toml").unlink()  # the default settings
    db = root / ".codesift" / "index.db"
    peak = 0
    indexed: float | None = None
    indexed_cpu = 0.0
    started = time.perf_counter()
    with LspSession([root], {"embeddings": True}) as lsp:
        assert lsp.pid is not None
        while True:
            folder = lsp.request("codesift/status", {})["folders"][0]
            seconds = time.perf_counter() - started
            peak = max(peak, rss_kib(lsp.pid)[1])
            if indexed is None and (folder["complete"] or folder["state"] == "embedding"):
                indexed = seconds
                indexed_cpu = _cpu_seconds(lsp.pid)
            usable, embeddable = _usable(db) if indexed is not None else (0, 0)
            if embeddable and usable >= embeddable:
                break
            if seconds > 900:
                raise TimeoutError(f"no full coverage after 900 s: {folder}")
            time.sleep(0.25)
        peak_static = peak
        full_cpu = _cpu_seconds(lsp.pid)
        load_full = os.getloadavg()
        while time.perf_counter() - started < seconds + after:
            peak = max(peak, rss_kib(lsp.pid)[1])
            time.sleep(0.5)
        folder = lsp.request("codesift/status", {})["folders"][0]
        result = {
            "seconds_to_full_coverage": seconds,
            "seconds_to_lexical_index": indexed,
            "cpu_seconds_to_lexical_index": indexed_cpu,
            "cpu_seconds_to_full_coverage": full_cpu,
            "embeddable": embeddable,
            "peak_rss_mib": peak_static / 1024,
            "peak_rss_refining_mib": peak / 1024,
            "refined_after": after,
            "refined": folder["vectors"]["embedded"],
            "load_start": "/".join(f"{x:.2f}" for x in load_start),
            "load_at_full_coverage": "/".join(f"{x:.2f}" for x in load_full),
            "load_end": "/".join(f"{x:.2f}" for x in os.getloadavg()),
        }
    shutil.rmtree(root)
    return result


def render(results: Json, machine: Json) -> str:
    lines = [
        "## Static embedding model (`bench/static_embedding.py`)",
        "",
        f"Measured {machine.get('date', '?')} at {machine.get('commit', '?')} on "
        f"{machine.get('nproc', '?')} cores ({machine.get('cpu', '?')}), shared.",
        "",
    ]
    fill = results.get("fill")
    if fill:
        lines += [
            f"- fill (Python stdlib copy, {'+'.join(fill['layers'])} chunks, model "
            f"`{fill['model']}`): {fill['embedded']:,} vectors in {fill['seconds']:.1f} s "
            f"({fill['embedded'] / max(fill['seconds'], 1e-9):,.0f} chunks/s, "
            f"{fill['cpu_seconds']:.1f} s CPU), peak RSS {fill['peak_rss_mib']:.0f} MiB; "
            f"the index grew {fill['bytes_per_vector']:.0f} bytes per vector "
            f"({fill['db_before'] / 2**20:.1f} -> {fill['db_after'] / 2**20:.1f} MiB)",
        ]
    query = results.get("query")
    if query:
        lines.append(
            f"- query embedding ({query['queries']} dev set queries, one thread): "
            f"p50 {query['p50_ms']:.3f} ms, p95 {query['p95_ms']:.3f} ms, "
            f"max {query['max_ms']:.3f} ms"
        )
    agreement = results.get("agreement")
    if agreement:
        lines.append(
            f"- agreement with MiniLM over {agreement['chunks']:,} dev set 2 chunks: mean "
            f"cosine {agreement['mean_cosine']:.3f} (10th percentile "
            f"{agreement['p10_cosine']:.3f}); same nearest neighbour "
            f"{agreement['same_nearest_neighbour']:.0%} of {agreement['sampled']} sampled chunks"
        )
    cli = results.get("cli")
    if cli:
        lines.append(
            f"- `codesift search` on a fresh stdlib copy (no index): first answer after "
            f"{cli['seconds_to_first_answer']:.1f} s with {cli['embedded']:,}/"
            f"{cli['embeddable']:,} vectors; {cli['results_found_by_vectors']} of "
            f"{cli['results']} results found by the vector stream"
        )
    server = results.get("server")
    if server:
        lines.append(
            f"- `codesift serve` on a fresh stdlib copy, default settings: lexical index after "
            f"{server['seconds_to_lexical_index']:.1f} s "
            f"({server['cpu_seconds_to_lexical_index']:.1f} CPU s, server and index workers), "
            "every one of "
            f"{server['embeddable']:,} chunks with a (static) vector after "
            f"{server['seconds_to_full_coverage']:.1f} s "
            f"({server['cpu_seconds_to_full_coverage']:.1f} CPU s), server peak RSS "
            f"{server['peak_rss_mib']:.0f} MiB; {server['refined_after']:g} s later MiniLM had "
            f"replaced {server['refined']:,} of them, peak RSS "
            f"{server['peak_rss_refining_mib']:.0f} MiB (load average "
            f"{server['load_start']} at start, {server['load_at_full_coverage']} at full "
            f"coverage, {server['load_end']} at the end)"
        )
    return "\n".join(lines) + "\n"


def write_section(out: Path, body: str) -> None:
    begin, end = f"<!-- {SECTION}:begin -->", f"<!-- {SECTION}:end -->"
    text = out.read_text(encoding="utf-8") if out.exists() else ""
    block = f"{begin}\n{body}{end}"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        text = head + block + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    out.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--part",
        action="append",
        choices=("fill", "query", "agreement", "cli", "server", "all"),
        help="what to measure (repeatable; default: all)",
    )
    parser.add_argument("--write", action="store_true", help=f"update the {SECTION} section")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument(
        "--server-after",
        type=float,
        default=SERVER_AFTER,
        help="seconds the server part goes on after full coverage, while MiniLM refines",
    )
    parser.add_argument("--child-fill", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child_fill:
        print(json.dumps(child_fill(args.child_fill)))
        return 0
    parts = set(args.part or ["all"])
    if "all" in parts:
        parts = {"fill", "query", "agreement", "cli", "server"}
    benches = {
        "fill": bench_fill,
        "query": bench_query,
        "agreement": bench_agreement,
        "cli": bench_cli,
        "server": lambda: bench_server(args.server_after),
    }
    results: Json = {}
    for name in ("fill", "query", "agreement", "cli", "server"):
        if name in parts:
            print(f"[{name}] ...", file=sys.stderr, flush=True)
            results[name] = benches[name]()
            print(f"[{name}] {json.dumps(results[name])}", file=sys.stderr, flush=True)
    machine = machine_info()
    (DATA_DIR / "static_embedding-last.json").write_text(
        json.dumps({"machine": machine, **results}, indent=1) + "\n", encoding="utf-8"
    )
    body = render(results, machine)
    print(body)
    if args.write:
        write_section(args.out, body)
        from runinfo import markdown_tables, write_results

        lines = [line[2:] for line in body.splitlines() if line.startswith("- ")]
        figures = {"results": results, "lines": lines, "tables": markdown_tables(body)}
        write_results(SECTION, figures, machine_info=machine)
    return 0


if __name__ == "__main__":
    sys.exit(main())
