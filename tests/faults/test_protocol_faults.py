"""Protocol faults, over the server's real stdio with hand-framed bytes: a body
that is not JSON gets a ParseError (-32700) reply and one that is not a JSON-RPC
message an InvalidRequest (-32600) reply, id null when the message has none
readable, never a window/showMessage popup; didChange for a document that was
never opened is ignored; `[]` params count as none (Neovim sends an empty Lua
table that way); a reindex path that leads out of the folder with `..` is
rejected like an absolute outside path."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lsp"))

from harness import WORKSPACE, make_workspace, server_env

# How long a reply may take before the test calls it a failure (never a speed limit).
DEADLINE = 60.0


class RawServer:
    """`codesift serve` over stdio, written to as raw bytes, read as messages."""

    def __init__(self, log_file: Path) -> None:
        self.log_file = log_file
        self.process = subprocess.Popen(
            [sys.executable, "-m", "codesift.cli", "serve", "--log-file", str(log_file)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=server_env(),
        )
        self.received: queue.Queue[dict[str, Any]] = queue.Queue()
        self.seen: list[dict[str, Any]] = []
        assert self.process.stdout is not None
        stdout = self.process.stdout
        self._reader = threading.Thread(target=self._read, args=(stdout,), daemon=True)
        self._reader.start()
        self._next_id = 0

    def _read(self, stdout: IO[bytes]) -> None:
        while True:
            length = None
            while True:
                line = stdout.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            assert length is not None, "a message without Content-Length"
            self.received.put(json.loads(stdout.read(length)))

    def send_bytes(self, body: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_bytes(json.dumps(message).encode())

    def request(self, method: str, params: Any = None, *, with_params: bool = True) -> Any:
        """Send a request and return its response (the whole message)."""
        self._next_id += 1
        msg_id = f"req-{self._next_id}"
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if with_params:
            message["params"] = params
        self.send(message)
        return self.reply_to(msg_id)

    def next_message(self) -> dict[str, Any]:
        """The next message from the server that is not a notification."""
        while True:
            try:
                message = self.received.get(timeout=DEADLINE)
            except queue.Empty:
                raise AssertionError(f"no reply within {DEADLINE:.0f} s") from None
            self.seen.append(message)
            if "method" in message and "id" in message:  # a request to the client
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
                continue
            if "method" not in message:
                return message

    def reply_to(self, msg_id: Any) -> dict[str, Any]:
        message = self.next_message()
        assert message.get("id") == msg_id, message
        return message

    def popups(self) -> list[dict[str, Any]]:
        return [m for m in self.seen if m.get("method") == "window/showMessage"]

    def close(self) -> int:
        """shutdown + exit; the process must end (the deadline passing is the failure)."""
        if self.process.poll() is None:
            self.request("shutdown", None, with_params=False)
            self.send({"jsonrpc": "2.0", "method": "exit"})
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                return self.process.wait(DEADLINE)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
                raise AssertionError("the server did not exit after shutdown + exit") from None
        return self.process.returncode


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RawServer]:
    root = make_workspace(tmp_path / "billing", WORKSPACE)
    raw = RawServer(tmp_path / "server.log")
    reply = raw.request(
        "initialize",
        {
            "processId": None,
            "rootUri": root.as_uri(),
            "capabilities": {},
            "workspaceFolders": [{"uri": root.as_uri(), "name": "billing"}],
            "initializationOptions": {"embeddings": False},
        },
    )
    assert "result" in reply, reply
    raw.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    done = raw.request("codesift/reindex", {"wait": True})
    assert done["result"]["done"] is True, done
    try:
        yield raw
    finally:
        if raw.process.poll() is None:
            raw.process.kill()
            raw.process.wait()


def error_of(reply: dict[str, Any]) -> tuple[Any, int]:
    assert "error" in reply, reply
    return reply["id"], reply["error"]["code"]


BAD_MESSAGES = [
    # (body, the id of the reply, its error code)
    (b'{"jsonrpc": "2.0", "id": 7, "method": "codesift/status", ', None, -32700),
    (b"\xff\xfe not even text", None, -32700),
    (b"[1, 2, 3]", None, -32600),
    (b"42", None, -32600),
    (b"{}", None, -32600),
    (b'{"foo": "boo", "id": 9}', 9, -32600),
    (b'{"jsonrpc": "1.0", "id": 10, "method": "codesift/status"}', 10, -32600),
    (b'{"jsonrpc": "2.0", "method": 1, "params": "bar"}', None, -32600),
    (b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "codesift/status"}', None, -32600),
    # a request whose params are not an object: its method says so (InvalidParams)
    (b'{"jsonrpc": "2.0", "id": 11, "method": "codesift/status", "params": 5}', 11, -32602),
    (b'{"jsonrpc": "2.0", "id": 12}', 12, -32600),
]


def test_bad_messages_get_error_replies(server: RawServer) -> None:
    for body, reply_id, code in BAD_MESSAGES:
        server.send_bytes(body)
        assert error_of(server.next_message()) == (reply_id, code), body
        # still serving
        assert "result" in server.request("codesift/status", {}), body
    assert server.popups() == []  # no popup for any of it
    assert server.close() == 0
    assert "Traceback" not in server.log_file.read_text()


def test_did_change_of_an_unopened_document_is_ignored(server: RawServer, tmp_path: Path) -> None:
    uri = (tmp_path / "billing" / "billing.py").as_uri()
    server.send(
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didChange",
            "params": {
                "textDocument": {"uri": uri, "version": 2},
                "contentChanges": [{"text": "def changed():\n    pass\n"}],
            },
        }
    )
    assert "result" in server.request("codesift/status", {})
    assert server.popups() == []
    log = server.log_file.read_text()
    assert "never opened" in log
    assert server.close() == 0
    assert "Traceback" not in server.log_file.read_text()


def test_empty_array_params_count_as_none(server: RawServer) -> None:
    status = server.request("codesift/status", [])
    assert status["result"]["folders"][0]["name"] == "billing"
    reindex = server.request("codesift/reindex", [])
    assert reindex["result"]["queued"] == [{"folder": "billing", "rescan": True}]
    search = server.request("codesift/search", [])
    assert error_of(search) == (search["id"], -32602)
    assert "needs params" in search["error"]["message"]
    graph = server.request("codesift/graph", [])
    assert error_of(graph)[1] == -32602
    assert server.popups() == []
    assert server.close() == 0


def test_reindex_paths_leading_outside_the_folder_are_rejected(
    server: RawServer, tmp_path: Path
) -> None:
    root = tmp_path / "billing"
    outside = tmp_path / "outside.py"
    outside.write_text("def not_in_the_workspace():\n    pass\n")
    for paths in (
        [str(outside)],  # an absolute path outside: rejected before this change too
        ["../outside.py"],
        ["sub/../../outside.py"],
        [f"{root}/../outside.py"],
        [f"{root.as_uri()}/../outside.py"],
    ):
        reply = server.request("codesift/reindex", {"paths": paths, "wait": True})
        assert error_of(reply)[1] == -32602, (paths, reply)
        assert "outside" in reply["error"]["message"]
    inside = server.request("codesift/reindex", {"paths": ["sub/../billing.py"], "wait": True})
    assert inside["result"]["queued"] == [{"folder": "billing", "paths": ["billing.py"]}]
    search = server.request("codesift/search", {"query": "not_in_the_workspace"})
    assert search["result"]["results"] == []
    assert server.close() == 0


def test_a_clients_bad_request_is_an_info_line_not_an_error(server: RawServer) -> None:
    """A request the server rightly refuses (-32602) is the client's mistake: one
    INFO line in the log, no ERROR, no traceback, no "error outside a request"."""
    for method, params in (
        ("codesift/search", {"query": ""}),
        ("codesift/search", {"query": "x", "top_k": "many"}),
        ("codesift/graph", []),
    ):
        reply = server.request(method, params)
        assert error_of(reply)[1] == -32602, reply
    assert "result" in server.request("codesift/status", {})
    assert server.close() == 0
    log = server.log_file.read_text()
    assert " ERROR " not in log, log
    assert "Exception occurred" not in log and "Traceback" not in log, log
    assert "error outside a request" not in log, log
    refusals = [line for line in log.splitlines() if "-32602" in line]
    assert len(refusals) == 3 and all(" INFO " in line for line in refusals), log
