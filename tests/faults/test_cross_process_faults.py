"""The CLI and the language server on one index at once: neither breaks the other.

Before the write lock, `codesift search` while `codesift serve` indexed the same
folder died with `database is locked` (or aborted), and the server's folder went
to `error` and stayed there.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lsp"))

from harness import DEADLINE, LspSession, make_workspace, plain, server_env

from codesift.store.locks import IndexLock


def workspace_files(count: int) -> dict[str, str]:
    files = {
        f"ledger/entries_{i}.py": "\n\n".join(
            f"def post_entry_{i}_{j}(amount: int) -> int:\n"
            f'    """Post ledger entry {j} of batch {i}."""\n'
            f"    return amount + {j}\n"
            for j in range(12)
        )
        for i in range(count)
    }
    files["ledger/reconcile.py"] = (
        "def reconcile_accounts(entries: list[int]) -> int:\n"
        '    """Match payments to the invoices they settle."""\n'
        "    return sum(entries)\n"
    )
    return files


def cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "codesift.cli", *args],
        cwd=root,
        env=server_env(),
        capture_output=True,
        text=True,
        timeout=DEADLINE * 3,
        check=False,
    )


def folder_states(lsp: LspSession) -> list[str]:
    return [str(plain(p)["state"]) for m, p in lsp.notifications if m == "codesift/indexStatus"]


def test_cli_search_and_index_while_the_server_indexes(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ledger", workspace_files(400))
    log = tmp_path / "server.log"
    with LspSession([root], {"embeddings": False}, log_file=log) as lsp:
        # Whatever the server is doing meanwhile (scanning, indexing, idle), the
        # CLI answers, and a CLI writer queues behind the server's writer.
        results: list[subprocess.CompletedProcess[str]] = [
            cli(root, "search", "reconcile_accounts", "--no-embed", "--json"),
            cli(root, "index", "--no-embed", "--json"),
            cli(root, "search", "reconcile_accounts", "--no-embed", "--json"),
        ]
        for result in results:
            assert result.returncode == 0, result.stderr
            assert "Traceback" not in result.stderr and "locked" not in result.stderr
        last: dict[str, Any] = json.loads(results[-1].stdout)
        assert any(r["qualified_name"].endswith("reconcile_accounts") for r in last["results"])

        lsp.wait_ready(DEADLINE * 3)
        status = lsp.request("codesift/status")["folders"][0]
        assert status["state"] == "ready", status
        assert status["files"] == 401
        assert "error" not in folder_states(lsp)
        reply = lsp.request("codesift/search", {"query": "reconcile_accounts"})
        assert reply["results"][0]["qualified_name"].endswith("reconcile_accounts")

        # A file saved while the CLI indexes is seen by both.
        (root / "ledger" / "late.py").write_text("def settle_late_fees() -> None:\n    pass\n")
        assert cli(root, "index", "--no-embed", "--quiet").returncode == 0
        found = cli(root, "symbols", "settle_late_fees", "--no-update", "--json")
        assert [n["name"] for n in json.loads(found.stdout)["exact"]] == ["settle_late_fees"]
    assert lsp.returncode == 0
    assert "Traceback" not in log.read_text()


def test_search_while_another_process_writes_answers_with_the_vectors_there_are(
    tmp_path: Path,
) -> None:
    """A search while another process holds the write lock (a first index, a long
    history step) answers from what is written and says so: it used to start the
    static vectors' fill, whose first batch waited for the lock in silence (32 s
    behind a first index of the standard library)."""
    root = make_workspace(tmp_path / "ws", workspace_files(3))
    built = cli(root, "index", "--no-embed", "--quiet")
    assert built.returncode == 0, built.stderr
    writer = IndexLock(root / ".codesift" / "index.db", "write", purpose="test: a long index run")
    assert writer.try_acquire()
    try:
        found = subprocess.run(
            [sys.executable, "-m", "codesift.cli", "search", "reconcile_accounts", "--json"],
            cwd=root,
            env=server_env(),
            capture_output=True,
            text=True,
            timeout=DEADLINE,  # the deadline is the failure: before the fix it waited
            check=False,
        )
    finally:
        writer.release()
    assert found.returncode == 0, found.stderr
    results = json.loads(found.stdout)["results"]
    assert results[0]["qualified_name"] == "reconcile.reconcile_accounts"
    assert "test: a long index run" in found.stderr and "searching it as it is" in found.stderr
