"""Instructions that a cold index spends preparing and writing files, counted by
valgrind: a measure of indexing work that a busy host does not move.

Timings of a cold index on a shared machine move by a quarter between runs of
the same code; instruction counts (valgrind's callgrind) do not. The script runs
itself three times under `valgrind --tool=callgrind` over every `--every`th file
of a corpus (the Python standard library copy by default):

1. `setup`: imports, the plan and the file jobs;
2. `prepare`: the same, then `prepare_file` on each job (what an index worker does);
3. `write`: the same, then each prepared file written into a new index
   (`IndexWriter.replace_file`, 25 files per transaction, as the writer process).

and prints the instructions of the preparing (2 - 1) and of the writing (3 - 2).
Run it before and after a change to either; the counts repeat to the last few
thousand. Valgrind counts a `rep stosb` memset byte by byte, which overstates
zlib's resets; other instructions follow CPU time closely.

    PYTHONPATH=server python bench/index_instructions.py [--every 10] [--corpus python-stdlib]

Needs valgrind (`apt-get install valgrind`); takes a few minutes.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
for folder in (REPO_DIR / "server", BENCH_DIR):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

STEPS = ("setup", "prepare", "write")
_COLLECTED = re.compile(r"Collected : (\d+)")


def child(step: str, root: Path, every: int) -> None:
    """One measured run: every step up to `step`."""
    from codesift.config import load_settings
    from codesift.index_workers import tune_worker_gc
    from codesift.indexer import Indexer
    from codesift.preparation import PreparedFile, prepare_file
    from codesift.store.database import open_database
    from codesift.store.writer import IndexWriter

    work = Path(tempfile.mkdtemp(prefix="codesift-instructions-"))
    try:
        conn = open_database(work / "plan.db")
        indexer = Indexer(root, load_settings(root), conn)
        # As a large first index runs them: calls edges left to the call pass.
        jobs = [
            replace(indexer.job_for(source), call_sites="later")
            for source in indexer.plan().to_index
        ][::every]
        tune_worker_gc()  # as in an index worker
        if step == "setup":
            return
        prepared = [p for p in map(prepare_file, jobs) if isinstance(p, PreparedFile)]
        if step == "prepare":
            return
        out = open_database(work / "index.db")
        writer = IndexWriter(out)
        for start in range(0, len(prepared), 25):
            with out:
                for item in prepared[start : start + 25]:
                    writer.replace_file(item.meta, item.rows)
        out.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)


def instructions(step: str, root: Path, every: int) -> int:
    done = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            __file__,
            "--child",
            step,
            "--root",
            str(root),
            "--every",
            str(every),
        ],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(REPO_DIR / "server")},
    )
    found = _COLLECTED.search(done.stderr)
    if found is None:
        raise SystemExit(f"no instruction count in valgrind's output:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", default="python-stdlib", help="a corpus of corpora.py")
    parser.add_argument("--every", type=int, default=10, help="measure every Nth file")
    parser.add_argument("--child", choices=STEPS, help=argparse.SUPPRESS)
    parser.add_argument("--root", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.root, args.every)
        return 0
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    from corpora import prepare_corpus
    from timing import log

    root = prepare_corpus(args.corpus, log).root
    counts = {}
    for step in STEPS:
        log(f"{step}: under valgrind ...")
        counts[step] = instructions(step, root, args.every)
    prepare = counts["prepare"] - counts["setup"]
    write = counts["write"] - counts["prepare"]
    print(f"{args.corpus}, every {args.every}th file (valgrind callgrind, instructions):")
    print(f"  setup    {counts['setup']:>16,}")
    print(f"  prepare  {prepare:>16,}  (prepare_file on each job)")
    print(f"  write    {write:>16,}  (replace_file into a new index)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
