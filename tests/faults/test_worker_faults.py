"""Worker faults: index workers are spawned with `python -c`, which puts the current
folder first on their import path, and they adopted the parent's path (where
`python -m` put the current folder too). A workspace with its own `types.py` or
`json.py`, indexed from its own folder, crashed every worker (and the resource
tracker multiprocessing starts the same way), and codesift fell back to one
process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import apsw

from codesift.indexer import PARALLEL_MIN_FILES

HOSTILE_MODULES = ("types", "json", "logging", "codesift_probe")
FILES = PARALLEL_MIN_FILES + 20


def hostile_workspace(root: Path) -> Path:
    root.mkdir()
    for number in range(FILES):
        (root / f"mod_{number}.py").write_text(
            f"def handler_{number}(value):\n    return value + {number}\n", encoding="utf-8"
        )
    for name in HOSTILE_MODULES:
        # Importing any of these in a worker kills it at once.
        (root / f"{name}.py").write_text(
            f"raise SystemExit('the workspace {name}.py was imported')\n", encoding="utf-8"
        )
    (root / ".codesift.toml").write_text("[index]\nworkers = 2\n", encoding="utf-8")
    return root


def test_workers_do_not_import_the_workspace_modules(tmp_path: Path) -> None:
    root = hostile_workspace(tmp_path / "ws")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSAFEPATH"}
    env["HF_HUB_OFFLINE"] = "1"

    # The console script, as a user runs it (`python -m` would itself import the
    # folder's types.py before codesift starts).
    codesift = Path(sys.executable).with_name("codesift")
    assert codesift.is_file(), "the codesift console script is not installed"
    done = subprocess.run(
        [str(codesift), "-v", "index", "--no-embed"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    log = done.stderr
    assert done.returncode == 0, log
    for symptom in ("worker died", "one process", "was imported", "Traceback", "resource_tracker"):
        assert symptom not in log, log
    assert "in 2 worker processes" in log, log  # the run did use workers
    conn = apsw.Connection(str(root / ".codesift" / "index.db"), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        files = conn.execute("SELECT count(*) FROM files").fetchone()
        handlers = conn.execute(
            "SELECT count(*) FROM nodes WHERE name LIKE 'handler\\_%' ESCAPE '\\'"
        ).fetchone()
    finally:
        conn.close()
    assert files == (FILES + len(HOSTILE_MODULES) + 1,)  # and .codesift.toml
    assert handlers == (FILES,)
