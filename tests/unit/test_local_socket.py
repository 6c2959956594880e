"""The local socket's transport with real Unix sockets: a request answered, a
request declined, a client that hangs up mid-request, the file's mode, one owner
per index and the socket removed when the server stops."""

from __future__ import annotations

import json
import os
import socket
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from codesift.local_socket import PROTOCOL, ask, socket_address, socket_path_for
from codesift.local_socket_server import Hangup, LocalSocketServer

DEADLINE = 60.0


def wait_until(check: Any, what: str) -> None:
    event = threading.Event()
    for _ in range(int(DEADLINE / 0.02)):
        if check():
            return
        event.wait(0.02)
    raise AssertionError(f"{what}: not within {DEADLINE:.0f} s")


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    folder = tmp_path / ".codesift"
    folder.mkdir()
    path = folder / "index.db"
    path.write_bytes(b"")
    return path


@pytest.fixture
def served(db_path: Path) -> Iterator[tuple[LocalSocketServer, list[dict[str, Any]]]]:
    seen: list[dict[str, Any]] = []

    def handler(request: dict[str, Any], hangup: Hangup) -> dict[str, Any]:
        seen.append(request)
        if request.get("argv") == ["decline"]:
            return {"fallback": "not here"}
        notes = [{"level": "note", "message": "n ✓"}]
        error = {"kind": "bad_request", "message": "e ✓"}
        return {"exit": 3, "notes": notes, "error": error, "shown": None}

    server = LocalSocketServer(db_path, handler, label="test server")
    server.start()
    wait_until(lambda: server.listening, "listening")
    yield server, seen
    server.stop()


def test_a_request_is_answered_and_a_declined_one_says_why(
    served: tuple[LocalSocketServer, list[dict[str, Any]]], db_path: Path
) -> None:
    server, seen = served
    path = Path(socket_path_for(db_path))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    asked = ask(db_path, {"protocol": PROTOCOL, "argv": ["search", "x"]})
    assert asked.answer is not None
    assert asked.answer["exit"] == 3 and asked.answer["shown"] is None
    assert asked.answer["notes"] == [{"level": "note", "message": "n ✓"}]
    assert asked.answer["error"] == {"kind": "bad_request", "message": "e ✓"}
    assert asked.answer["server"] == {"pid": os.getpid(), "label": "test server"}
    declined = ask(db_path, {"protocol": PROTOCOL, "argv": ["decline"]})
    assert declined.answer is None and declined.reason == "not here"
    other = ask(db_path, {"protocol": 99, "argv": []})
    assert other.answer is None and f"protocol {PROTOCOL}" in other.reason
    assert (server.requests, server.declined) == (1, 1)
    assert len(seen) == 2


def test_one_server_per_index_and_the_socket_goes_with_it(
    served: tuple[LocalSocketServer, list[dict[str, Any]]], db_path: Path
) -> None:
    server, _ = served
    second = LocalSocketServer(db_path, lambda r, h: {"exit": 0}, label="second")
    second.start()
    try:
        assert not second.listening  # the first one holds the lock
        server.stop()
        wait_until(lambda: second.listening, "the second server taking over")
        asked = ask(db_path, {"protocol": PROTOCOL, "argv": []})
        assert asked.answer is not None and asked.answer["server"]["label"] == "second"
    finally:
        second.stop()
    assert not Path(socket_path_for(db_path)).exists()
    assert ask(db_path, {"protocol": PROTOCOL}).reason == "no server"


def test_a_client_that_hangs_up_is_noticed_while_its_request_runs(db_path: Path) -> None:
    hung_up = threading.Event()
    release = threading.Event()

    def handler(request: dict[str, Any], hangup: Hangup) -> dict[str, Any]:
        hangup.on_hangup(hung_up.set)
        release.wait(DEADLINE)
        return {"exit": 0, "stderr": "", "shown": None}

    server = LocalSocketServer(db_path, handler)
    server.start()
    try:
        wait_until(lambda: server.listening, "listening")
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        address, fd = socket_address(str(socket_path_for(db_path)))
        try:
            client.connect(address)
        finally:
            if fd is not None:
                os.close(fd)
        client.sendall(json.dumps({"protocol": PROTOCOL, "argv": []}).encode() + b"\n")
        assert json.loads(client.makefile().readline()) == {"accepted": True}
        client.close()  # gone before the answer
        assert hung_up.wait(DEADLINE)
    finally:
        release.set()
        server.stop()
    assert server.requests == 0  # nobody to answer
