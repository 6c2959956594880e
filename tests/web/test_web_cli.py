"""`codesift web --root DIR` as a user starts it: the console and the API
answer with no set-up, SIGTERM ends it cleanly, and `codesift token` adds,
lists and revokes tokens without ever printing a secret twice."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
from web_harness import DEADLINE, WORKSPACE, make_workspace, poll

CLI = (sys.executable, "-m", "codesift.cli")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def codesift(*args: str, env_tokens: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "codesift.cli", *args],
        capture_output=True,
        text=True,
        timeout=DEADLINE,
        env={**_env(), "CODESIFT_TOKENS": str(env_tokens)},
    )


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if k != "CODESIFT_TOKENS"}


def test_codesift_web_serves_with_no_set_up(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "ws", WORKSPACE)
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "codesift.cli",
            "web",
            "--root",
            str(root),
            "--listen",
            f"127.0.0.1:{port}",
        ],
        env={**_env(), "CODESIFT_TOKENS": str(tmp_path / "none.json")},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"

    def search() -> int:
        try:
            response = httpx.post(base + "/api/search", json={"query": "retry_failed_charge"})
        except httpx.HTTPError:
            return 0
        return response.status_code if response.json().get("results") else -1

    try:
        poll(search, lambda code: code == 200, "codesift web to answer a search")
        page = httpx.get(base + "/search")
        assert page.status_code == 200 and "/static/search.js" in page.text
    finally:
        process.send_signal(signal.SIGTERM)
        _out, err = process.communicate(timeout=DEADLINE)
    assert process.returncode == 0, err
    assert f"codesift web: http://127.0.0.1:{port}/search" in err
    assert "Traceback" not in err


def test_codesift_token_add_list_revoke(tmp_path: Path) -> None:
    tokens = tmp_path / "conf" / "tokens.json"
    added = codesift(
        "token", "add", "ana-laptop", "--principal", "ana", "--json", env_tokens=tokens
    )
    assert added.returncode == 0, added.stderr
    secret = json.loads(added.stdout)["token"]
    assert secret.startswith("csk_") and secret not in tokens.read_text(encoding="utf-8")
    listed = codesift("token", "list", env_tokens=tokens)
    assert "ana-laptop  ana" in listed.stdout and secret not in listed.stdout
    again = codesift("token", "add", "ana-laptop", "--principal", "ana", env_tokens=tokens)
    assert again.returncode == 2 and "exists" in again.stderr
    assert codesift("token", "revoke", "ana-laptop", env_tokens=tokens).returncode == 0
    gone = codesift("token", "revoke", "ana-laptop", env_tokens=tokens)
    assert gone.returncode == 2 and "no token named ana-laptop" in gone.stderr
    assert "no tokens" in codesift("token", "list", env_tokens=tokens).stdout


def test_a_cli_search_names_codesift_web_when_it_answers(tmp_path: Path) -> None:
    """`codesift search` on the served folder asks the web server over the index's
    local socket, and -vv names it."""
    root = make_workspace(tmp_path / "ws", WORKSPACE)
    port = free_port()
    tokens = tmp_path / "none.json"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "codesift.cli",
            "web",
            "--root",
            str(root),
            "--listen",
            f"127.0.0.1:{port}",
        ],
        env={**_env(), "CODESIFT_TOKENS": str(tokens)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        done = poll(
            lambda: subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "codesift.cli",
                    "search",
                    "retry_failed_charge",
                    "--root",
                    str(root),
                    "-vv",
                ],
                capture_output=True,
                text=True,
                timeout=DEADLINE,
                env=_env(),
            ),
            lambda run: "answered by codesift web" in run.stderr,
            "a CLI search answered by codesift web",
        )
        assert "billing.py" in done.stdout
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(DEADLINE)


def test_several_roots_from_the_command_line(tmp_path: Path) -> None:
    """`--root A --root B`: one server, both folders searched, each result naming
    its root; a `codesift search` in the second folder is answered by it too."""
    alpha = make_workspace(tmp_path / "alpha", WORKSPACE)
    ledger = "def post_ledger_entry(entry):\n    return entry\n"
    quiet = "[embedding]\nenabled = false\n"
    beta = make_workspace(tmp_path / "beta", {"ledger.py": ledger, ".codesift.toml": quiet})
    port = free_port()
    process = subprocess.Popen(
        [*CLI, "web", "--root", str(alpha), "--root", str(beta), "--listen", f"127.0.0.1:{port}"],
        env={**_env(), "CODESIFT_TOKENS": str(tmp_path / "none.json")},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"

    def roots_found() -> set[str]:
        try:
            answer = httpx.post(base + "/api/search", json={"query": "post_ledger_entry submit"})
        except httpx.HTTPError:
            return set()
        return {r["root"] for r in answer.json().get("results", [])}

    try:
        poll(roots_found, lambda found: found == {"alpha", "beta"}, "results from both roots")
        status = httpx.get(base + "/api/status").json()
        assert [r["name"] for r in status["roots"]] == ["alpha", "beta"]
        done = poll(
            lambda: subprocess.run(
                [*CLI, "search", "post_ledger_entry", "--root", str(beta), "-vv"],
                capture_output=True,
                text=True,
                timeout=DEADLINE,
                env=_env(),
            ),
            lambda run: "answered by codesift web" in run.stderr,
            "a CLI search in the second root answered by codesift web",
        )
        assert "ledger.py" in done.stdout
    finally:
        process.send_signal(signal.SIGTERM)
        _out, err = process.communicate(timeout=DEADLINE)
    assert process.returncode == 0, err
    assert "Traceback" not in err
