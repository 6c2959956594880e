"""Permissions: a read-only index can still be searched, and `codesift index` on an
index or a workspace the user cannot write is a one-line error (exit 2), never a
traceback. Run as the `unprivileged` fixture's user, so they bind under CI (root)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

import codesift

from .conftest import describe, expect

if TYPE_CHECKING:
    from conftest import Unprivileged  # tests/conftest.py

MakeRepo = Callable[..., Path]
CleanError = Callable[[subprocess.CompletedProcess[str], int], str]

NAME = "reconcile_ledger"
LEDGER_PY = '''\
def reconcile_ledger(entries):
    """Match payments to the invoices they settle."""
    return sorted(entries)
'''
SERVER_DIR = Path(codesift.__file__).resolve().parent.parent
NO_EMBEDDINGS = "[embedding]\nenabled = false\n"


def run_as_owner(cwd: Path, *args: str, home: Path) -> subprocess.CompletedProcess[str]:
    """`codesift` as the user running the tests (root under CI): the index's owner."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "XDG_"))}
    env.update(
        HOME=str(home),
        PYTHONPATH=str(SERVER_DIR),
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_CONFIG_NOSYSTEM="1",
        HF_HUB_OFFLINE="1",
    )
    return subprocess.run(
        [sys.executable, "-m", "codesift.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def user_can_write(unprivileged: Unprivileged, path: Path) -> bool:
    probe = unprivileged.python(
        "import sys\ntry:\n    open(sys.argv[1], 'ab').close()\nexcept PermissionError:\n"
        "    sys.exit(3)",
        path,
    )
    assert probe.returncode in (0, 3), describe(probe)
    return probe.returncode == 0


@pytest.fixture
def read_only_index(
    unprivileged: Unprivileged, make_repo: MakeRepo, tmp_path: Path
) -> Iterator[Path]:
    """A workspace indexed by its owner, then index.db 0444 in a 0555 .codesift
    folder (and the workspace 0555): searched by a user who may not write any of it."""
    ws = make_repo(
        {"ledger.py": LEDGER_PY, ".codesift.toml": NO_EMBEDDINGS},
        name="ws",
        parent=unprivileged.tmp_path,
    )
    indexed = run_as_owner(ws, "index", "--quiet", home=tmp_path)
    assert indexed.returncode == 0, describe(indexed)
    folder = ws / ".codesift"
    db = folder / "index.db"
    assert db.is_file()
    for path in folder.iterdir():
        path.chmod(0o444)
    folder.chmod(0o555)
    ws.chmod(0o555)
    assert not user_can_write(unprivileged, db)  # the setup binds for this user
    try:
        yield ws
    finally:
        ws.chmod(0o755)
        folder.chmod(0o755)


def assert_found(result: subprocess.CompletedProcess[str]) -> None:
    expect(result.returncode == 0, describe(result))
    expect("Traceback" not in result.stderr, describe(result))
    expect("ledger.py" in result.stdout and NAME in result.stdout, describe(result))


def test_search_without_update_reads_a_read_only_index(
    read_only_index: Path, unprivileged: Unprivileged
) -> None:
    assert_found(unprivileged.codesift("search", NAME, "--no-update", cwd=read_only_index))


def test_search_reads_a_read_only_index_that_is_up_to_date(
    read_only_index: Path, unprivileged: Unprivileged
) -> None:
    assert_found(unprivileged.codesift("search", NAME, cwd=read_only_index))


def test_index_on_a_read_only_index_is_a_one_line_error(
    read_only_index: Path, unprivileged: Unprivileged, clean_error: CleanError
) -> None:
    clean_error(unprivileged.codesift("index", cwd=read_only_index), 2)


def test_index_in_a_workspace_the_user_cannot_write_is_a_one_line_error(
    unprivileged: Unprivileged, make_repo: MakeRepo, clean_error: CleanError
) -> None:
    ws = make_repo({"ledger.py": LEDGER_PY}, name="locked-ws", parent=unprivileged.tmp_path)
    ws.chmod(0o555)  # root's 0755 folder under CI; the same for a non-root user
    try:
        assert not user_can_write(unprivileged, ws / "probe")
        line = clean_error(unprivileged.codesift("index", cwd=ws), 2)
        expect(str(ws) in line, f"the message names {ws}: {line}")
        assert not (ws / ".codesift").exists()
    finally:
        ws.chmod(0o755)


def test_status_on_a_read_only_index_says_so(
    read_only_index: Path, unprivileged: Unprivileged
) -> None:
    """`codesift status` by a user who cannot write the index reads it and says it
    is read-only; "damaged" (and its rebuild advice) only when the check finds damage."""
    result = unprivileged.codesift("status", cwd=read_only_index)
    expect(result.returncode == 0, describe(result))
    expect("damaged" not in result.stdout + result.stderr, describe(result))
    expect("--rebuild" not in result.stdout + result.stderr, describe(result))
    expect("read-only" in result.stdout, describe(result))
    expect(re.search(r"^files +2$", result.stdout, re.M) is not None, describe(result))
    as_json = unprivileged.codesift("status", "--json", cwd=read_only_index)
    expect(as_json.returncode == 0, describe(as_json))
    expect('"read_only": true' in as_json.stdout, describe(as_json))


def test_status_of_the_owner_is_not_read_only(make_repo: MakeRepo, tmp_path: Path) -> None:
    ws = make_repo({"ledger.py": LEDGER_PY, ".codesift.toml": NO_EMBEDDINGS}, name="owned")
    assert run_as_owner(ws, "index", "--quiet", home=tmp_path).returncode == 0
    result = run_as_owner(ws, "status", "--json", home=tmp_path)
    expect(result.returncode == 0, describe(result))
    expect('"read_only": false' in result.stdout, describe(result))
