"""What a one-shot `codesift search` loads (no server, an up-to-date index, no vectors).

Its latency is mostly imports (bench/cli_latency.py): the indexer with its
parsers' worker pool, git (pygit2) and the embedding runtime are loaded only
when a command needs them. These tests guard that without timing anything: a
fresh interpreter runs a cold search and reports its sys.modules.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import codesift.engine
from codesift import cli
from codesift.cli import parser as cli_parser
from codesift.engine import EngineListener, Workspace, reindex
from codesift.engine.route import MAX_ROUTE_LIMIT
from conftest import SERVER_DIR, MakeRepo, write_files

FILES = {
    ".codesift.toml": "[embedding]\nenabled = false\n",
    "shop/orders.py": "def place_order(order):\n    return charge_card(order.total)\n",
    "shop/payments.py": (
        "def charge_card(amount):\n"
        '    """Charge the card through the payment provider."""\n'
        "    return amount > 0\n"
    ),
}

# What an up-to-date search without vectors must not load: the indexer, its
# parsers' worker pool and grammars, git, the status command's module, package
# metadata, the embedding runtime.
NOT_LOADED = (
    "codesift.indexer",
    "codesift.preparation",
    "codesift.history.update",
    "codesift.engine.status",
    "codesift.engine.route",
    "concurrent.futures.process",
    "multiprocessing",
    "pygit2",
    "tree_sitter",
    "tree_sitter_language_pack",
    "importlib.metadata",
    "onnxruntime",
    "fastembed",
    "tokenizers",
)

PROBE = """
import contextlib, io, json, os, sys
from codesift.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    code = main(sys.argv[1:])
print(json.dumps({
    "code": code,
    "out": out.getvalue(),
    "modules": sorted(sys.modules),
    "blas_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
}))
"""


def cold_search(root: Path, *argv: str, **environ: str) -> tuple[str, set[str]]:
    """The output of `codesift search ...` run in-process in a fresh interpreter in
    `root`, and the modules it loaded."""
    probe = cold_search_probe(root, *argv, **environ)
    return str(probe["out"]), set(probe["modules"])


def cold_search_probe(root: Path, *argv: str, **environ: str) -> dict[str, Any]:
    return cold_probe(root, "search", *argv, **environ)


def cold_probe(root: Path, command: str, *argv: str, **environ: str) -> dict[str, Any]:
    """`codesift COMMAND ...` run in-process in a fresh interpreter in `root`: its
    output, exit code and the modules it loaded."""
    env = {
        **{k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"},
        "CODESIFT_NO_SERVER": "1",
        "PYTHONPATH": os.pathsep.join([str(SERVER_DIR), os.environ.get("PYTHONPATH", "")]),
        **environ,
    }
    result = subprocess.run(
        [sys.executable, "-c", PROBE, command, *argv],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    probe: dict[str, Any] = json.loads(result.stdout.splitlines()[-1])
    assert probe["code"] == 0, result.stderr
    return probe


def index(root: Path) -> None:
    _, _, conn = reindex(Workspace.at(root.resolve()), EngineListener(), quiet=True)
    conn.close()


def test_a_cold_search_outside_git_loads_no_indexer_git_or_models(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    write_files(root, FILES)
    index(root)
    out, loaded = cold_search(root, "charge the card")
    assert "shop/payments.py" in out
    assert "codesift.retrieval.search" in loaded  # it did search
    assert sorted(loaded & set(NOT_LOADED)) == []


@pytest.mark.usefixtures("git_isolation")
def test_a_cold_search_in_git_loads_no_indexer_git_or_models(make_repo: MakeRepo) -> None:
    root = make_repo(FILES)
    index(root)
    out, loaded = cold_search(root, "charge the card")
    assert "shop/payments.py" in out
    assert sorted(loaded & set(NOT_LOADED)) == []


# What a cold `codesift callers` / `callees` of an up-to-date index loads besides
# what a search does not: no search at all (its streams, numpy, the embedding
# wrappers), not the sqlite-vec package (its __init__ imports numpy), not the
# index writer (the freshness check reads store/indexed_files.py), not rich (the
# page is drawn by cli/render_json.py; rich only colours a terminal's), not cattrs
# (a `.codesift.toml` of plain values is checked and merged without it).
NOT_LOADED_BY_CALLERS = (
    *NOT_LOADED,
    "rich",
    "rich.console",
    "cattrs",
    "codesift.retrieval.search",
    "codesift.retrieval.streams",
    "codesift.engine.folder_search",
    "codesift.embedding",
    "sqlite_vec",
    "numpy",
    "codesift.store.writer",
)


def test_a_cold_callers_loads_no_search_numpy_or_models(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    imported = "from shop.payments import charge_card\n\n\n" + FILES["shop/orders.py"]
    write_files(root, {**FILES, "shop/orders.py": imported})
    index(root)
    probe = cold_probe(root, "callers", "charge_card", "--json")
    data = json.loads(probe["out"])
    callers = [c["node"]["qualified_name"] for c in data["nodes"][0]["callers"]]
    assert callers == ["orders.place_order"] and data["truncated"] is False
    assert sorted(set(probe["modules"]) & set(NOT_LOADED_BY_CALLERS)) == []
    assert "codesift.engine.graph" in probe["modules"]  # it did walk the graph


def test_a_changed_file_still_loads_the_indexer_and_is_found(tmp_path: Path) -> None:
    root = tmp_path / "plain"
    write_files(root, FILES)
    index(root)
    write_files(root, {"shop/refunds.py": "def refund_payment(order):\n    return order\n"})
    out, loaded = cold_search(root, "refund_payment")
    assert "shop/refunds.py" in out
    assert "codesift.indexer" in loaded


def test_a_one_shot_read_asks_numpy_for_one_blas_thread_unless_told_otherwise(
    tmp_path: Path,
) -> None:
    root = tmp_path / "plain"
    write_files(root, FILES)
    index(root)
    assert cold_search_probe(root, "charge the card")["blas_threads"] == "1"
    chosen = cold_search_probe(root, "charge the card", OPENBLAS_NUM_THREADS="2")
    assert chosen["blas_threads"] == "2"


def test_the_command_word_follows_the_verbosity_flags() -> None:
    assert cli._command_of(["-vv", "--verbose", "search", "x"]) == "search"
    assert cli._command_of(["index", "--root", "."]) == "index"
    assert cli._command_of(["--version"]) is None
    assert cli._command_of([]) is None


def test_the_engine_exports_every_name_from_where_it_lives() -> None:
    home: dict[str, str] = codesift.engine._HOME
    assert sorted(home) == sorted(codesift.engine.__all__)
    for name, module in home.items():
        value = getattr(codesift.engine, name)
        assert getattr(sys.modules[module], name) is value
    with pytest.raises(AttributeError):
        _ = codesift.engine.no_such_name  # type: ignore[attr-defined]


def test_the_route_limit_in_the_cli_help_is_the_routers() -> None:
    assert cli_parser.ROUTE_LIMIT_MAX == MAX_ROUTE_LIMIT
