"""A synchronous LSP client for tests: pygls's LanguageClient on its own event loop
thread, talking to `codesift serve` in a subprocess over stdio.

    with LspSession(folders=[root], options={"embeddings": False}) as lsp:
        lsp.wait_ready()
        lsp.request("codesift/search", {"query": "retry"})

Custom requests return plain JSON (dicts and lists); standard requests return
lsprotocol objects. A JSON-RPC error raises pygls's JsonRpcException (with
`.code` and `.message`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types
from pygls.lsp.client import LanguageClient

import codesift

SERVER_DIR = Path(codesift.__file__).resolve().parent.parent

T = TypeVar("T")

# How long a test waits for something before calling it a failure. Generous on
# purpose: it is a deadline, never a speed limit (speed belongs in bench/).
DEADLINE = 60.0


def poll(
    fetch: Callable[[], T],
    check: Callable[[T], bool],
    what: str,
    timeout: float = DEADLINE,
    interval: float = 0.05,
) -> T:
    """Call `fetch` until `check` accepts its value, and return that value; the
    deadline passing is the failure (an AssertionError naming `what` and the last
    value seen)."""
    deadline = time.monotonic() + timeout
    while True:
        value = fetch()
        if check(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not reached within {timeout:.0f} s; last: {value!r}")
        time.sleep(interval)


def plain(value: Any) -> Any:
    """pygls turns untyped JSON objects into namedtuples: back to dicts."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def server_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(SERVER_DIR), *([env["PYTHONPATH"]] if env.get("PYTHONPATH") else [])]
    )
    env["HF_HUB_OFFLINE"] = "1"
    # No developer git config in the server's git calls.
    env["GIT_CONFIG_GLOBAL"] = os.devnull
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    return env


class LspSession:
    def __init__(
        self,
        folders: list[Path],
        options: dict[str, Any] | None = None,
        *,
        log_file: Path | None = None,
        progress: bool = True,
    ) -> None:
        self.folders = folders
        self.options = options if options is not None else {"embeddings": False}
        self.log_file = log_file
        self.progress_capability = progress
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.client = LanguageClient("codesift-tests", "1")
        self.notifications: list[tuple[str, Any]] = []
        self._lock = threading.Condition()
        self.returncode: int | None = None
        self.pid: int | None = None

        def record(method: str) -> Callable[[Any], None]:
            def handler(params: Any) -> None:
                with self._lock:
                    self.notifications.append((method, params))
                    self._lock.notify_all()

            return handler

        for method in (
            types.PROGRESS,
            types.WINDOW_SHOW_MESSAGE,
            types.WINDOW_LOG_MESSAGE,
            "codesift/indexStatus",
        ):
            self.client.feature(method)(record(method))

        # While set, the client does not answer the server's progress token requests
        # (a slow editor): `release_progress_tokens` answers them.
        self._tokens_held: asyncio.Event | None = None

        @self.client.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)  # type: ignore[untyped-decorator]
        async def create(params: Any) -> None:
            record("create")(params)
            if self._tokens_held is not None:
                await self._tokens_held.wait()

    def hold_progress_tokens(self) -> None:
        """Leave the server's progress token requests unanswered (call before start)."""
        self._tokens_held = asyncio.Event()

    def release_progress_tokens(self) -> None:
        held = self._tokens_held
        assert held is not None
        self.loop.call_soon_threadsafe(held.set)

    # -- running coroutines from test code -------------------------------------------

    def _run(self, coro: Any, timeout: float = 60) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def start(self) -> None:
        self._thread.start()
        args = [sys.executable, "-m", "codesift.cli", "serve"]
        if self.log_file is not None:
            args += ["--log-file", str(self.log_file)]
        self._run(self.client.start_io(*args, env=server_env()))
        server = self.client._server
        assert server is not None
        self.pid = server.pid
        capabilities = types.ClientCapabilities(
            window=types.WindowClientCapabilities(work_done_progress=self.progress_capability),
            workspace=types.WorkspaceClientCapabilities(workspace_folders=True),
        )
        params = types.InitializeParams(
            process_id=os.getpid(),
            capabilities=capabilities,
            root_uri=self.folders[0].as_uri() if self.folders else None,
            workspace_folders=[
                types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in self.folders
            ],
            initialization_options=self.options,
        )
        self.initialize_result = self._run(self.client.initialize_async(params))
        self.client.initialized(types.InitializedParams())

    def __enter__(self) -> LspSession:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self, timeout: float = 30) -> int | None:
        """shutdown + exit; wait for the process; returns its exit code."""
        server = self.client._server
        if server is not None and server.returncode is None:
            try:
                self._run(self.client.shutdown_async(None), timeout)
                self.client.exit(None)
            except Exception:
                pass
            try:
                self._run(asyncio.wait_for(server.wait(), timeout), timeout + 5)
            except Exception:
                server.kill()
                self._run(server.wait())
        self.returncode = server.returncode if server is not None else None
        with contextlib.suppress(Exception):
            self._run(self.client.stop(), 10)  # type: ignore[no-untyped-call]
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
        return self.returncode

    # -- requests ------------------------------------------------------------------------

    def request(self, method: str, params: Any = None, timeout: float = 60) -> Any:
        async def send() -> Any:
            return await self.client.protocol.send_request_async(method, params)

        result = self._run(send(), timeout)
        return plain(result) if method.startswith("codesift/") else result

    def request_future(self, method: str, params: Any, msg_id: str) -> Future[Any]:
        """Send a request with a known id (to cancel it); returns once the request
        is written to the server, with a thread-safe future of its result."""

        async def send() -> Future[Any]:
            future: Future[Any] = self.client.protocol.send_request(method, params, msg_id=msg_id)
            return future

        result: Future[Any] = self._run(send())
        return result

    def cancel(self, msg_id: str) -> None:
        self.loop.call_soon_threadsafe(
            lambda: self.client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
        )

    def raw_request(self, method: str, params: Any, timeout: float = 30) -> Any:
        """Send a request as raw JSON (params need not fit the method's type);
        returns the raw result or raises the error."""
        msg_id = str(uuid.uuid4())

        async def send() -> Any:
            future: Future[Any] = Future()
            protocol = self.client.protocol
            protocol._request_futures[msg_id] = future
            message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
            if params is not None:
                message["params"] = params
            protocol._send_data(message)
            return await asyncio.wrap_future(future)

        return plain(self._run(send(), timeout))

    def notify(self, method: str, params: Any) -> None:
        """Send a notification; plain JSON params are sent as they are."""
        if isinstance(params, dict):
            message = {"jsonrpc": "2.0", "method": method, "params": params}
            self.loop.call_soon_threadsafe(lambda: self.client.protocol._send_data(message))
        else:
            self.loop.call_soon_threadsafe(lambda: self.client.protocol.notify(method, params))

    # -- waiting -------------------------------------------------------------------------

    def wait_for(
        self, predicate: Callable[[list[tuple[str, Any]]], bool], timeout: float = 60
    ) -> None:
        deadline = time.monotonic() + timeout
        with self._lock:
            while not predicate(self.notifications):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"condition not met; notifications: {self.notifications!r}")
                self._lock.wait(left)

    def wait_ready(self, timeout: float = 60, *, history: bool = True) -> None:
        """Wait until every folder's first index is complete and, with `history`,
        its git history pass too (it runs after the index, in the background)."""
        reply = self.request(
            "codesift/reindex", {"wait": True, "timeout_ms": int(timeout * 1000)}, timeout + 10
        )
        assert reply["done"], reply
        if history:
            self.wait_history(timeout)

    def wait_history(self, timeout: float = DEADLINE) -> dict[str, Any]:
        """Wait until no folder's git history pass is pending; the last status."""
        return poll(
            lambda: self.request("codesift/status", {}),
            lambda status: all(not f["history"]["pending"] for f in status["folders"]),
            "the git history pass of every folder",
            timeout,
        )

    def messages(self, method: str) -> list[Any]:
        with self._lock:
            return [plain(p) for m, p in self.notifications if m == method]


def file_uri(path: Path) -> str:
    return path.resolve().as_uri()


@contextlib.contextmanager
def ready_server(
    folders: list[Path],
    log_file: Path,
    options: dict[str, Any] | None = None,
    *,
    no_traceback: bool = False,
) -> Iterator[LspSession]:
    """`codesift serve` on `folders`, started and indexed (a fixture's server); on
    leaving, it must stop with exit code 0 (and, with `no_traceback`, leave no
    traceback in its log)."""
    session = LspSession(folders, options, log_file=log_file)
    session.start()
    try:
        session.wait_ready()
        yield session
    finally:
        code = session.close()
        assert code == 0, log_file.read_text()
        if no_traceback:
            assert "Traceback" not in log_file.read_text()


# -- temporary git workspaces ------------------------------------------------------------

BILLING_PY = '''\
"""Charging customers and retrying declined payments."""


def submit(amount):
    """Send a charge to the gateway. It returns whether the gateway accepted it."""
    return amount > 0


def retry_failed_charge(amount, attempts=3):
    """Retry a failed charge until the gateway accepts it."""
    for _ in range(attempts):
        if submit(amount):
            return True
    return False


class Ledger:
    """Keeps the record of every charge."""

    def record(self, amount):
        return retry_failed_charge(amount)

    def refund(self, amount):
        return submit(-amount)
'''

REPORTS_PY = '''\
from billing import retry_failed_charge


def monthly_report(amounts):
    """Summarise the month's charges."""
    return [retry_failed_charge(a) for a in amounts]
'''

README_MD = """\
# Billing

Charges are retried by `retry_failed_charge` when the gateway declines them.
"""

WORKSPACE = {"billing.py": BILLING_PY, "reports.py": REPORTS_PY, "README.md": README_MD}


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=git_env())


def git_env() -> dict[str, str]:
    env = dict(os.environ)
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    return env


def make_workspace(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q")
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    git(root, "add", "-A")
    git(root, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "init")
    return root
