"""The CLI asks a running server over the index's local socket.

A real `codesift mcp` (stdio, its stdin held open) or `codesift serve` (a real
LSP client) keeps a real git workspace's index live; `codesift search`,
`symbols`, `callers`, `callees` and `graph` run as subprocesses. With `-vv` the
CLI says on stderr which path answered; the server's log and codesift/status
count the requests it answered. Every answer is compared with the in-process
answer (`CODESIFT_NO_SERVER=1`): same stdout (JSON without its timings), same
stderr, same exit code: the server sends the command's JSON and the CLI draws it
with the code the in-process command draws it with. Then the ways the socket
path must give way to the in-process one: a stale socket file, a killed server,
a server that never answers, another user.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from harness import WORKSPACE, LspSession, make_workspace, poll, server_env

import codesift.cli as fast
from codesift.config import CONFIG_FILE_NAME, IndexSettings
from codesift.local_socket import (
    PROTOCOL,
    ask,
    lock_path_for,
    socket_address,
    socket_path_for,
)

# tests/conftest.py's Unprivileged (this folder's conftest.py shadows that module name).
Unprivileged = Any

ANSWERED = "DEBUG codesift.cli: answered by"
IN_PROCESS = "DEBUG codesift.cli: answering in-process"
NO_EMBEDDINGS = "[embedding]\nenabled = false\n"


def _env(**extra: str) -> dict[str, str]:
    env = server_env()
    for name in ("CODESIFT_NO_SERVER", "FORCE_COLOR", "TTY_COMPATIBLE", "NO_COLOR"):
        env.pop(name, None)
    env.update(extra)
    return env


def cli(
    root: Path, *args: str, in_process: bool = False, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    extra = dict(env or {})
    if in_process:
        extra["CODESIFT_NO_SERVER"] = "1"
    return subprocess.run(
        [sys.executable, "-m", "codesift.cli", "-vv", *args],
        cwd=root,
        env=_env(**extra),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


MODULES_PROBE = """
import sys
from codesift.cli import main
code = main(sys.argv[1:])
sys.stderr.write("MODULES " + " ".join(sorted(sys.modules)) + "\\n")
sys.exit(code)
"""


def cli_modules(root: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """`codesift -vv ARGS` run as `cli` runs it, and the modules it loaded."""
    result = subprocess.run(
        [sys.executable, "-c", MODULES_PROBE, "-vv", *args],
        cwd=root,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    lines = result.stderr.splitlines()
    modules = {m for line in lines if line.startswith("MODULES ") for m in line.split()[1:]}
    result.stderr = "\n".join(line for line in lines if not line.startswith("MODULES ")) + "\n"
    return result, modules


def debug_lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("DEBUG codesift.cli")]


def user_stderr(result: subprocess.CompletedProcess[str]) -> str:
    """stderr without log lines (-vv logs differ between the two paths)."""
    return "\n".join(
        line
        for line in result.stderr.splitlines()
        if not line.startswith(("DEBUG ", "INFO ", "WARNING "))
    )


def without_timings(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: without_timings(v) for k, v in value.items() if k not in ("took_ms", "ms", "stages")
        }
    if isinstance(value, list):
        return [without_timings(v) for v in value]
    return value


def comparable(result: subprocess.CompletedProcess[str], json_output: bool) -> Any:
    out: Any = result.stdout
    if json_output:
        out = without_timings(json.loads(result.stdout))
    else:  # the human page ends with "N results in X ms"
        out = "\n".join(line for line in out.splitlines() if " results in " not in line)
    return out, user_stderr(result), result.returncode


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    files = dict(WORKSPACE)
    files[CONFIG_FILE_NAME] = NO_EMBEDDINGS
    return make_workspace(tmp_path / "billing-ws", files)


def db_path(root: Path) -> Path:
    return root / IndexSettings().db_path


def socket_file(root: Path) -> Path:
    return Path(socket_path_for(db_path(root)))


@contextlib.contextmanager
def mcp_server(root: Path, log: Path, *, argv: list[str] | None = None) -> Iterator[Any]:
    """`codesift mcp` on `root`, its stdin held open (the server waits for an MCP
    client that never speaks); ended by closing stdin."""
    command = argv or [sys.executable, "-m", "codesift.cli"]
    proc = subprocess.Popen(
        [*command, "mcp", "--root", str(root), "--log-file", str(log)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=_env(),
    )
    try:
        yield proc
    finally:
        if proc.poll() is None:
            assert proc.stdin is not None
            proc.stdin.close()
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def wait_for_socket(root: Path) -> Path:
    path = socket_file(root)
    poll(lambda: path.exists(), bool, f"the server's socket {path}")
    return path


def wait_answered_by_server(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The first answer given through the socket (the server may still be building
    its first index when the test starts)."""
    return poll(
        lambda: cli(root, *args),
        lambda r: any(line.startswith(ANSWERED) for line in debug_lines(r)),
        f"`codesift {' '.join(args)}` answered by the server",
    )


# --- the fast path's constants ---------------------------------------------------------------


def test_the_fast_path_repeats_the_engine_constants_exactly() -> None:
    assert fast.CONFIG_FILE_NAME == CONFIG_FILE_NAME
    assert IndexSettings().db_path == fast.DEFAULT_DB_PATH


def test_the_fast_path_imports_only_the_standard_library() -> None:
    code = "import sys, codesift.cli, codesift.local_socket\nprint('\\n'.join(sorted(sys.modules)))"
    result = subprocess.run(
        [sys.executable, "-c", code], env=_env(), capture_output=True, text=True, check=True
    )
    loaded = set(result.stdout.split())
    heavy = {"argparse", "rich", "apsw", "numpy", "codesift.engine", "codesift.cli.run"}
    heavy |= {"codesift.config", "pathlib", "typing", "logging", "socket", "tomllib"}
    assert not heavy & loaded, heavy & loaded


# --- answers through the socket ------------------------------------------------------------

QUESTIONS: list[tuple[str, ...]] = [
    ("search", "retry a failed charge"),
    ("search", "retry a failed charge", "--json"),
    ("search", "submit", "-k", "2", "--graph", "--json"),
    ("search", "charge", "--path", "billing.py", "--layer", "code"),
    ("symbols", "submit"),
    ("symbols", "sbumit", "--json"),
    ("callers", "submit"),
    ("callers", "submit", "--json"),
    ("callees", "retry_failed_charge", "--json"),
    ("callees", "retry_failed_charge"),
    ("graph", "submit", "--direction", "both", "--json"),
    ("graph", "submit", "--direction", "both"),
    ("search", "submit", "-k", "2", "--graph"),
    ("symbols", "no_such_definition_here"),
    ("graph", "no_such_definition_here"),
    ("search", ""),  # a bad request: exit 2, the same one line
    ("symbols", "submit", "--limit", "0"),
    ("search", "charge", "--since", "not a time"),
    ("graph", "submit", "--depth", "99"),
]


def test_the_cli_answers_through_a_running_mcp_server_as_it_would_in_process(
    workspace: Path, tmp_path: Path
) -> None:
    log = tmp_path / "mcp.log"
    with mcp_server(workspace, log):
        path = wait_for_socket(workspace)
        mode = stat.S_IMODE(path.stat().st_mode)
        assert stat.S_ISSOCK(path.stat().st_mode) and mode == 0o600, oct(mode)
        assert stat.S_IMODE(Path(lock_path_for(db_path(workspace))).stat().st_mode) == 0o600
        wait_answered_by_server(workspace, "search", "submit")
        for question in QUESTIONS:
            served = cli(workspace, *question)
            alone = cli(workspace, *question, in_process=True)
            assert any(line.startswith(ANSWERED) for line in debug_lines(served)), (
                question,
                served.stderr,
            )
            assert any(line.startswith(IN_PROCESS) for line in debug_lines(alone)), alone.stderr
            as_json = "--json" in question
            assert comparable(served, as_json) == comparable(alone, as_json), question
        # On a terminal (as rich decides from the environment): colours and width too.
        for question in QUESTIONS[:1] + QUESTIONS[4:5]:
            terminal = {"FORCE_COLOR": "1", "COLUMNS": "97", "TERM": "xterm-256color"}
            served = cli(workspace, *question, env=terminal)
            alone = cli(workspace, *question, in_process=True, env=terminal)
            assert "\x1b[" in served.stdout
            assert comparable(served, False) == comparable(alone, False), question
        # The client draws the server's JSON with the standard library alone.
        served, modules = cli_modules(workspace, "search", "retry a failed charge")
        assert any(line.startswith(ANSWERED) for line in debug_lines(served)), served.stderr
        assert not {"rich", "numpy", "apsw", "codesift.engine", "codesift.cli.run"} & modules
        alone = cli(workspace, "search", "retry a failed charge", in_process=True)
        assert comparable(served, False) == comparable(alone, False)
        # An edit the server has indexed is in the next answer.
        (workspace / "refunds.py").write_text(
            "def refund_declined_charge(amount):\n    return -amount\n", encoding="utf-8"
        )
        found = poll(
            lambda: cli(workspace, "symbols", "refund_declined_charge", "--json"),
            lambda r: bool(r.stdout) and bool(json.loads(r.stdout)["exact"]),
            "the new definition, through the server",
        )
        assert any(line.startswith(ANSWERED) for line in debug_lines(found))
    # The server ended: its socket is gone with it, and the CLI answers in-process.
    assert not path.exists()
    after = cli(workspace, "symbols", "submit")
    assert after.returncode == 0 and "billing.py" in after.stdout
    assert any("no server" in line for line in debug_lines(after)), after.stderr
    served_count = log.read_text(encoding="utf-8").count("over the local socket")
    assert served_count >= len(QUESTIONS) + 3


def test_the_commands_notes_and_error_come_as_data_and_the_cli_draws_them(
    tmp_path: Path,
) -> None:
    # Reranking asked for without a model: every search warns (and goes on).
    files = dict(WORKSPACE)
    files[CONFIG_FILE_NAME] = NO_EMBEDDINGS + '[rerank]\nenabled = true\nmodel_path = ""\n'
    root = make_workspace(tmp_path / "warned-ws", files)
    with mcp_server(root, tmp_path / "mcp.log"):
        wait_for_socket(root)
        wait_answered_by_server(root, "search", "submit")

        def asked(*argv: str) -> dict[str, Any]:
            request = {
                "protocol": PROTOCOL,
                "command": argv[0],
                "argv": list(argv),
                "cwd": str(root),
                "root": str(root),
                "db_path": str(db_path(root)),
            }
            answer = ask(db_path(root), request).answer
            assert answer is not None
            return answer

        answer = asked("search", "retry a failed charge")
        assert "stderr" not in answer and answer["error"] is None and answer["exit"] == 0
        assert [note["level"] for note in answer["notes"]] == ["warning"]
        assert "rerank.model_path is empty" in answer["notes"][0]["message"]
        assert answer["shown"]["view"] == "search"
        failed = asked("symbols", "submit", "--limit", "0")
        assert failed["exit"] == 2 and failed["shown"] is None
        assert failed["error"]["kind"] == "bad_request"
        assert "--limit" in failed["error"]["message"]
        # The CLI draws them as the in-process command writes them, on a terminal too.
        terminal = {"FORCE_COLOR": "1", "COLUMNS": "97", "TERM": "xterm-256color"}
        for env in ({}, terminal):
            for question in (("search", "retry a failed charge"), ("symbols", "x", "--limit", "0")):
                served = cli(root, *question, env=env)
                alone = cli(root, *question, in_process=True, env=env)
                assert any(line.startswith(ANSWERED) for line in debug_lines(served))
                assert comparable(served, False) == comparable(alone, False), (question, env)
                assert ("warning:" if question[0] == "search" else "error:") in served.stderr
        # ... with the standard library alone (no rich for a page with a warning).
        served, modules = cli_modules(root, "search", "retry a failed charge")
        assert any(line.startswith(ANSWERED) for line in debug_lines(served)), served.stderr
        assert "warning: rerank is enabled" in served.stderr
        assert not {"rich", "numpy", "apsw", "codesift.engine", "codesift.cli.run"} & modules


def test_the_language_server_answers_the_cli_and_counts_it(workspace: Path, tmp_path: Path) -> None:
    with LspSession([workspace], {"embeddings": False}, log_file=tmp_path / "lsp.log") as lsp:
        lsp.wait_ready()
        wait_for_socket(workspace)
        served = wait_answered_by_server(workspace, "callers", "submit", "--json")
        assert "codesift serve" in debug_lines(served)[-1]
        alone = cli(workspace, "callers", "submit", "--json", in_process=True)
        assert comparable(served, True) == comparable(alone, True)
        status = lsp.request("codesift/status", {})
        socket_status = status["folders"][0]["local_socket"]
        assert socket_status["listening"] is True
        assert socket_status["path"] == str(socket_file(workspace))
        assert socket_status["requests"] >= 1


def test_a_server_whose_settings_differ_declines_and_the_cli_answers_itself(
    workspace: Path, tmp_path: Path
) -> None:
    # The editor asks for 3 results a page; the workspace's file says 10: the CLI's
    # answer must be the file's, so the server leaves it to the CLI.
    options = {"embeddings": False, "search": {"top_k": 3}}
    with LspSession([workspace], options, log_file=tmp_path / "lsp.log") as lsp:
        lsp.wait_ready()
        wait_for_socket(workspace)
        result = cli(workspace, "search", "charge", "--json")
        assert result.returncode == 0
        assert any("settings differ" in line for line in debug_lines(result)), result.stderr
        status = lsp.request("codesift/status", {})
        assert status["folders"][0]["local_socket"]["declined"] >= 1


def test_a_search_over_several_folders_is_answered_in_process(
    workspace: Path, tmp_path: Path
) -> None:
    other = make_workspace(
        tmp_path / "ledger-ws",
        {
            "ledger.py": "def charge_ledger(entry):\n    return entry\n",
            CONFIG_FILE_NAME: NO_EMBEDDINGS,
        },
    )
    with LspSession([workspace], {"embeddings": False}, log_file=tmp_path / "lsp.log") as lsp:
        lsp.wait_ready()
        wait_for_socket(workspace)
        wait_answered_by_server(workspace, "search", "charge")

        def socket_counts() -> tuple[int, int]:
            found = lsp.request("codesift/status", {})["folders"][0]["local_socket"]
            return found["requests"], found["declined"]

        before = socket_counts()
        both = ("search", "charge", "--root", str(workspace), "--root", str(other), "--json")
        result = cli(workspace, *both)
        assert result.returncode == 0, result.stderr
        assert not any(line.startswith(ANSWERED) for line in debug_lines(result))
        assert socket_counts() == before  # the server was not asked
        folders = {r["folder"] for r in json.loads(result.stdout)["results"]}
        assert folders == {"billing-ws", "ledger-ws"}
        # Abbreviated, the fast path does not see two folders: the server declines.
        short = ("search", "charge", "--ro", str(workspace), "--ro", str(other), "--json")
        declined = cli(workspace, *short)
        assert declined.returncode == 0, declined.stderr
        assert any("several folders" in line for line in debug_lines(declined)), declined.stderr
        assert socket_counts()[1] == before[1] + 1
        assert json.loads(declined.stdout)["searched"] == ["billing-ws", "ledger-ws"]


def test_a_server_that_does_not_watch_answers_only_with_no_update(
    workspace: Path, tmp_path: Path
) -> None:
    # Without a watcher the server may not know of changes on disk: the in-process
    # command brings the index up to date itself, so the server leaves it that.
    options = {"embeddings": False, "watch": False}
    with LspSession([workspace], options, log_file=tmp_path / "lsp.log") as lsp:
        lsp.wait_ready()
        wait_for_socket(workspace)
        updating = cli(workspace, "symbols", "submit")
        assert updating.returncode == 0 and "billing.py" in updating.stdout
        assert any("does not watch" in line for line in debug_lines(updating)), updating.stderr
        as_it_is = cli(workspace, "symbols", "submit", "--no-update")
        assert any(line.startswith(ANSWERED) for line in debug_lines(as_it_is))
        alone = cli(workspace, "symbols", "submit", "--no-update", in_process=True)
        assert comparable(as_it_is, False) == comparable(alone, False)


def test_a_socket_path_longer_than_sun_path_still_connects(tmp_path: Path) -> None:
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    files = dict(WORKSPACE)
    files[CONFIG_FILE_NAME] = NO_EMBEDDINGS
    root = make_workspace(deep / "ws", files)
    assert len(str(socket_file(root))) > 108  # sun_path's size
    with mcp_server(root, tmp_path / "mcp.log"):
        wait_for_socket(root)
        served = wait_answered_by_server(root, "callers", "submit", "--json")
        alone = cli(root, "callers", "submit", "--json", in_process=True)
        assert comparable(served, True) == comparable(alone, True)


# --- when the socket path gives way ----------------------------------------------------------


def test_a_stale_socket_file_is_removed_and_the_cli_answers_in_process(workspace: Path) -> None:
    assert cli(workspace, "symbols", "submit", in_process=True).returncode == 0  # the index
    path = socket_file(workspace)
    leftover = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    leftover.bind(str(path))  # bound, never listening, then closed: a dead server's file
    leftover.close()
    assert path.exists()
    result = cli(workspace, "symbols", "submit")
    assert result.returncode == 0 and "billing.py" in result.stdout
    assert any("stale socket (removed)" in line for line in debug_lines(result)), result.stderr
    assert not path.exists()


def test_a_killed_server_leaves_a_stale_socket_that_the_next_cli_removes(
    workspace: Path, tmp_path: Path
) -> None:
    with mcp_server(workspace, tmp_path / "mcp.log") as proc:
        path = wait_for_socket(workspace)
        wait_answered_by_server(workspace, "symbols", "submit")
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert path.exists()  # nobody removed it
        result = cli(workspace, "search", "retry a declined charge", "--json")
        assert result.returncode == 0 and json.loads(result.stdout)["results"]
        assert any("stale socket (removed)" in line for line in debug_lines(result))
        assert not path.exists()


def test_a_server_that_never_answers_is_given_up_and_the_cli_answers_itself(
    workspace: Path,
) -> None:
    assert cli(workspace, "symbols", "submit", in_process=True).returncode == 0
    path = socket_file(workspace)
    mute = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    mute.bind(str(path))
    mute.listen(4)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept_and_say_nothing() -> None:
        mute.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(TimeoutError):
                held.append(mute.accept()[0])

    thread = threading.Thread(target=accept_and_say_nothing, daemon=True)
    thread.start()
    try:
        result = cli(workspace, "symbols", "submit", env={"CODESIFT_SOCKET_TIMEOUT": "0.5"})
    finally:
        stop.set()
        thread.join()
        for conn in held:
            conn.close()
        mute.close()
    assert result.returncode == 0 and "billing.py" in result.stdout
    assert any("did not answer in time" in line for line in debug_lines(result)), result.stderr
    assert held  # it did connect, and then gave up waiting


def answering_pid(result: subprocess.CompletedProcess[str]) -> str | None:
    for line in debug_lines(result):
        if line.startswith(ANSWERED):
            return line.split("(pid ", 1)[1].split(")", 1)[0]
    return None


def test_a_second_server_takes_the_socket_over_when_the_first_ends(
    workspace: Path, tmp_path: Path
) -> None:
    with contextlib.ExitStack() as servers:
        first = servers.enter_context(mcp_server(workspace, tmp_path / "first.log"))
        wait_for_socket(workspace)
        wait_answered_by_server(workspace, "symbols", "submit")
        second = servers.enter_context(mcp_server(workspace, tmp_path / "second.log"))
        assert answering_pid(cli(workspace, "symbols", "submit")) == str(first.pid)
        assert first.stdin is not None
        first.stdin.close()  # the first server ends ...
        first.wait(60)
        poll(  # ... and the second one answers from then on
            lambda: answering_pid(cli(workspace, "symbols", "submit")),
            lambda pid: pid == str(second.pid),
            "the second server answering",
        )
    assert not socket_file(workspace).exists()


def test_another_user_cannot_connect_to_the_socket(unprivileged: Unprivileged) -> None:
    if unprivileged.user is None:
        pytest.skip("needs root to run a command as another user (CODESIFT_TEST_USER)")
    root = make_workspace(unprivileged.tmp_path / "shared-ws", {**WORKSPACE})
    (root / CONFIG_FILE_NAME).write_text(NO_EMBEDDINGS, encoding="utf-8")
    with mcp_server(root, unprivileged.tmp_path / "mcp.log"):
        path = wait_for_socket(root)
        wait_answered_by_server(root, "symbols", "submit")
        # Everything the other user needs to reach the file is readable and searchable.
        for folder in (root, root / ".codesift"):
            folder.chmod(0o755)
        probe = unprivileged.python(
            "import os, socket, sys\n"
            "os.chdir(os.path.dirname(sys.argv[1]))  # the path may be too long for AF_UNIX\n"
            "s = socket.socket(socket.AF_UNIX)\n"
            "try:\n"
            "    s.connect(os.path.basename(sys.argv[1]))\n"
            "except PermissionError:\n"
            "    print('refused')\n"
            "else:\n"
            "    print('connected')\n",
            path,
        )
        assert probe.stdout.strip() == "refused", probe.stderr
        # Their CLI does not get the server's answer (it answers itself, or fails
        # on an index it may not write; never through the socket).
        theirs = unprivileged.codesift("-vv", "symbols", "submit", "--no-update", cwd=root)
        assert ANSWERED not in theirs.stderr
        assert "the socket belongs to another user" in theirs.stderr


def test_a_connection_from_another_user_is_refused_by_the_server(
    unprivileged: Unprivileged,
) -> None:
    """The server checks the peer's uid too: here it runs as the test user and
    root (whom file modes do not stop) connects."""
    if unprivileged.user is None:
        pytest.skip("needs root to run a server as another user (CODESIFT_TEST_USER)")
    root = unprivileged.tmp_path / "their-ws"
    made = unprivileged(["git", "init", "-q", str(root)])
    assert made.returncode == 0, made.stderr
    write = unprivileged.python(
        "import pathlib, sys\n"
        "root = pathlib.Path(sys.argv[1])\n"
        "(root / 'billing.py').write_text(sys.argv[2])\n"
        "(root / '.codesift.toml').write_text(sys.argv[3])\n",
        root,
        WORKSPACE["billing.py"],
        NO_EMBEDDINGS,
    )
    assert write.returncode == 0, write.stderr
    log = unprivileged.tmp_path / "their-mcp.log"
    argv = unprivileged.argv([sys.executable, "-m", "codesift.cli"])
    env = unprivileged.env()
    proc = subprocess.Popen(
        [*argv, "mcp", "--root", str(root), "--log-file", str(log)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=unprivileged.tmp_path,
    )
    try:
        path = wait_for_socket(root)
        assert path.stat().st_uid != os.geteuid()
        poll(
            lambda: log.read_text(encoding="utf-8") if log.exists() else "",
            lambda text: "indexed" in text or "answering the CLI" in text,
            "the other user's server started",
        )
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        conn.settimeout(30)
        address, fd = socket_address(str(path))  # the path may be too long for AF_UNIX
        try:
            conn.connect(address)  # root passes the file mode ...
        finally:
            if fd is not None:
                os.close(fd)
        conn.sendall(b'{"protocol": 1, "argv": ["symbols", "submit"]}\n')
        try:
            reply = conn.recv(100)
        except ConnectionResetError:  # it hung up before reading the request
            reply = b""
        assert reply == b""  # ... but the server hangs up without a word
        conn.close()
        poll(
            lambda: log.read_text(encoding="utf-8"),
            lambda text: "refused a connection of uid 0" in text,
            "the refusal in the server's log",
        )
        # And root's CLI does not take another user's server's word either.
        asked = ask(db_path(root), {"protocol": 1, "argv": ["symbols", "submit"]})
        assert asked.answer is None and asked.reason == "the socket's server runs as another user"
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signalled_mcp_server_removes_its_socket(
    workspace: Path, tmp_path: Path, signum: signal.Signals
) -> None:
    with mcp_server(workspace, tmp_path / "mcp.log") as proc:
        path = wait_for_socket(workspace)
        wait_answered_by_server(workspace, "symbols", "submit")
        proc.send_signal(signum)
        assert proc.wait(60) == 0, (tmp_path / "mcp.log").read_text()
        assert not path.exists()
    assert "Traceback" not in (tmp_path / "mcp.log").read_text()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signalled_language_server_removes_its_socket(
    workspace: Path, tmp_path: Path, signum: signal.Signals
) -> None:
    log = tmp_path / "serve.log"
    session = LspSession([workspace], log_file=log)
    session.start()
    try:
        session.wait_ready()
        path = wait_for_socket(workspace)
        assert session.pid is not None
        os.kill(session.pid, signum)
        server = session.client._server
        assert server is not None
        poll(lambda: server.returncode, lambda code: code is not None, "the server's exit")
        assert server.returncode == 0, log.read_text()
        assert not path.exists()
    finally:
        session.close()
    assert "Traceback" not in log.read_text()
