"""Fixtures for `codesift web`: a temporary git workspace and the server on a
loopback port (web_harness.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from web_harness import WORKSPACE, WebHarness, make_workspace


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_workspace(tmp_path_factory.mktemp("ws") / "billing-ws", WORKSPACE)


@pytest.fixture(scope="module")
def web(workspace: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebHarness]:
    """One server per test module, without tokens (authentication off)."""
    no_tokens = tmp_path_factory.mktemp("tokens") / "tokens.json"
    with WebHarness(workspace, tokens_file=no_tokens) as harness:
        yield harness
