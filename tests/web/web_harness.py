"""`codesift web` for tests: the real app under a real uvicorn on a loopback
port, in this process (a thread runs the server), over a real index.

    with WebHarness(root, tokens_file=path) as web:
        web.post("/api/search", {"query": "retry"}).json()
        web.get("/api/status", token=secret)

Also: temporary git workspaces (the language server harness's) and `poll`.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

import httpx

from codesift.serving.guard import Limits
from codesift.web.app import WebOptions, WebServer

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "lsp"))
import harness as lsp_harness
from harness import BILLING_PY, README_MD, REPORTS_PY, git, make_workspace

__all__ = [
    "BILLING_PY",
    "DEADLINE",
    "README_MD",
    "REPORTS_PY",
    "WORKSPACE",
    "WebHarness",
    "git",
    "make_workspace",
    "poll",
]

DEADLINE = 90.0
poll = lsp_harness.poll

WORKSPACE = {
    "billing.py": BILLING_PY,
    "reports.py": REPORTS_PY,
    "README.md": README_MD,
    ".codesift.toml": "[embedding]\nenabled = false\n",
}


class WebHarness:
    """The server on 127.0.0.1 and a free port; `base` is its URL."""

    def __init__(
        self,
        root: Path,
        *,
        tokens_file: Path | None = None,
        db: str | None = None,
        limits: Limits | None = None,
        listen: str = "127.0.0.1:0",
        cors_origins: tuple[str, ...] = (),
        more: tuple[Path, ...] = (),
    ) -> None:
        self.web = WebServer(
            WebOptions(
                root=str(root),
                roots=tuple(str(path) for path in more),
                db=db,
                listen=listen,
                tokens_file=tokens_file,
                limits=limits or Limits(),
                cors_origins=cors_origins,
            )
        )
        self.server: Any = self.web.server()
        self.thread = threading.Thread(target=self.server.run, name="web", daemon=True)
        self.base = ""
        self.client = httpx.Client(timeout=DEADLINE)

    def __enter__(self) -> WebHarness:
        self.web.start()
        self.thread.start()
        poll(lambda: self.server.started, bool, "the web server to start")
        sock = self.server.servers[0].sockets[0]
        self.port = int(sock.getsockname()[1])
        self.base = f"http://127.0.0.1:{self.port}"
        # The first index is built in the background: wait until it is.
        poll(lambda: self.web.live.wait_settled(1.0), bool, "the first index")
        return self

    def __exit__(self, *exc: object) -> None:
        self.client.close()
        self.server.should_exit = True
        self.thread.join(DEADLINE)
        self.web.close()

    def _headers(self, token: str | None, extra: dict[str, str] | None) -> dict[str, str]:
        headers = dict(extra or {})
        if token is not None:
            headers["authorization"] = f"Bearer {token}"
        return headers

    def get(
        self,
        path: str,
        params: Any = None,
        *,
        token: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> httpx.Response:
        return self.client.get(
            self.base + path, params=params, headers=self._headers(token, headers)
        )

    def post(
        self,
        path: str,
        body: Any = None,
        *,
        token: str | None = None,
        headers: dict[str, str] | None = None,
        content: bytes | None = None,
    ) -> httpx.Response:
        if content is not None:
            hdrs = {"content-type": "application/json", **self._headers(token, headers)}
            return self.client.post(self.base + path, content=content, headers=hdrs)
        return self.client.post(self.base + path, json=body, headers=self._headers(token, headers))
