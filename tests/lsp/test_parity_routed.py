"""Parity of a search over several folders: routed, and not.

Seven real git folders (tests/routing_corpus.py: one question, the folder it is
about among six others) are searched with the same question through the CLI
(`codesift search --root` seven times, a subprocess), the language server
(`codesift serve` over stdio with the seven as workspace folders:
`codesift/search`) and the MCP server's search handler (`codesift web --root`
seven times runs it: `POST /api/search`). All three plan the search with the
same routing rules in the one conductor (engine/conductor.py), over their own
sources (one-shot engines, a server's live folders): the same folders must be
searched and the same page come back, result by result with its folder and
score, routed (the router's best five of seven) and with routing off. The
folders' settings leave vectors out, for all three alike.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from harness import LspSession, make_workspace, ready_server, server_env

from routing_corpus import NO_VECTORS, SEVEN_FOLDERS, SEVEN_QUERY

WEB_TESTS = str(Path(__file__).resolve().parent.parent / "web")
if WEB_TESTS not in sys.path:
    sys.path.append(WEB_TESTS)

from web_harness import WebHarness  # noqa: E402  (tests/web is put on the path above)

# (folder, path, first line, score to four places): one result of a page.
Hit = tuple[str, str, int, float]


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    base = tmp_path_factory.mktemp("routed")
    return [
        make_workspace(base / name, {**files, ".codesift.toml": NO_VECTORS})
        for name, files in SEVEN_FOLDERS.items()
    ]


@pytest.fixture(scope="module")
def lsp(roots: list[Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[LspSession]:
    log = tmp_path_factory.mktemp("log") / "server.log"
    with ready_server(roots, log, {"embeddings": False}, no_traceback=True) as session:
        yield session


@pytest.fixture(scope="module")
def web(
    roots: list[Path], lsp: LspSession, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[WebHarness]:
    no_tokens = tmp_path_factory.mktemp("tokens") / "tokens.json"
    with WebHarness(roots[0], more=tuple(roots[1:]), tokens_file=no_tokens) as harness:
        yield harness


def cli_page(roots: list[Path], *options: str) -> tuple[list[str], list[Hit]]:
    env = server_env()
    env["CODESIFT_NO_SERVER"] = "1"
    every = [arg for root in roots for arg in ("--root", str(root))]
    args = ["search", SEVEN_QUERY, *every, "--json", "--no-update", "--no-embed", *options]
    result = subprocess.run(
        [sys.executable, "-m", "codesift.cli", *args],
        cwd=roots[0],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    hits = [hit(r["folder"], r) for r in data["results"]]
    return data["searched"], hits


def hit(folder: str, result: dict[str, Any]) -> Hit:
    return folder, result["path"], result["start_line"], round(result["score"], 4)


@pytest.mark.parametrize("routed", [True, False], ids=["routed", "not-routed"])
def test_the_cli_the_language_server_and_mcp_search_several_folders_alike(
    roots: list[Path], lsp: LspSession, web: WebHarness, routed: bool
) -> None:
    searched, from_cli = cli_page(roots, *(() if routed else ("--no-route",)))
    ask: dict[str, Any] = (
        {"query": SEVEN_QUERY} if routed else {"query": SEVEN_QUERY, "route": False}
    )
    page = lsp.request("codesift/search", ask)
    from_lsp = [hit(r["folder"], r) for r in page["results"]]
    from_mcp = [hit(r["root"], r) for r in web.post("/api/search", ask).json()["results"]]
    assert from_cli and from_cli[0][0] == "tokens"  # the folder the question is about leads
    assert [x["folder"] for x in page["index"]] == searched
    if routed:  # the router's best five of the seven
        assert len(searched) == 5 and page["routed"] is not None
    else:
        assert len(searched) == len(roots) and page["routed"] is None
    assert from_lsp == from_cli
    assert from_mcp == from_cli
