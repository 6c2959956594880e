"""The live workspace as each principal may read it (HTTP servers with tokens).

    views = PrincipalViews(live, dsn, require_token=True)
    seen = views.for_request(request)     # the request's token's principal

With a shared index, a request reads it as the principal of the token it
carries (codesift/serving/guard.py puts the token in the ASGI scope): a view is
a shallow copy of the live workspace (the same local index, readers and
writer) whose shared index reads as that principal, so every statement joins
that principal's grants. Without a shared index, the live workspace itself:
its folder is served to every token.
"""

from __future__ import annotations

import copy
import threading
from typing import Any

from codesift.engine.shared_overlay import SharedIndex
from codesift.engine.web_tokens import WebToken
from codesift.errors import CodesiftError
from codesift.mcp.live import LiveWorkspace

__all__ = ["PrincipalViews", "Unauthenticated"]


class Unauthenticated(CodesiftError):
    """A request reached a reader without a token while tokens are required."""


class PrincipalViews:
    """See the module docstring. Thread-safe."""

    def __init__(self, live: LiveWorkspace, dsn: str | None, *, require_token: bool) -> None:
        self.live = live
        self.dsn = dsn
        # With tokens, a request without one never reads the shared index (the
        # guard refuses it first; this is the second lock).
        self.require_token = require_token
        self._views: dict[str | None, LiveWorkspace] = {}
        self._lock = threading.Lock()

    def for_token(self, token: WebToken | None) -> LiveWorkspace:
        if token is None and self.require_token:
            raise Unauthenticated("unauthorized")
        if self.dsn is None:
            return self.live
        principal = token.principal if token is not None else None
        with self._lock:
            view = self._views.get(principal)
            if view is None:
                view = copy.copy(self.live)  # the same index, readers, writer
                view.shared = SharedIndex(
                    self.dsn,
                    principal=principal,
                    settings=self.live.workspace.settings.search,
                    embedder=self.live.query_embedder,
                )
                self._views[principal] = view
            return view

    def for_request(self, request: Any) -> LiveWorkspace:
        """The view for an HTTP request (a Starlette request, or the MCP SDK's
        per-message request): its scope's `codesift.token`."""
        scope = getattr(request, "scope", None) or {}
        token = scope.get("codesift.token")
        return self.for_token(token if isinstance(token, WebToken) else None)

    def close(self) -> None:
        with self._lock:
            for view in self._views.values():
                if view.shared is not None:
                    view.shared.close()
            self._views.clear()
