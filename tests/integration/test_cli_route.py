"""`codesift route` and the collection parts of `codesift search`, run as real
subprocesses on real git repositories, collection indexes in a private cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import SERVER_DIR, MakeRepo, write_files
from routing_corpus import GIFT_QUERY, ROUTE_QUERY, RoutingCorpus, make_routing_corpus

pytestmark = pytest.mark.usefixtures("git_isolation")


def cli(cwd: Path, cache: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(SERVER_DIR), env.get("PYTHONPATH", "")) if p
    )
    env["XDG_CACHE_HOME"] = str(cache)
    env["CODESIFT_NO_SERVER"] = "1"
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "CLICOLOR_FORCE"):
        env.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "codesift.cli", *map(str, args)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def ok_json(result: subprocess.CompletedProcess[str]) -> Any:
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    return json.loads(result.stdout)


@pytest.fixture
def corpus(tmp_path: Path, make_repo: MakeRepo) -> RoutingCorpus:
    return make_routing_corpus(tmp_path / "src", make_repo)


def test_route_gives_two_pools_with_confidence_and_rationale(
    corpus: RoutingCorpus, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    args = ("route", ROUTE_QUERY, "--root", corpus.shop, "--root", corpus.search)
    data = ok_json(cli(tmp_path, cache, *args, "--json"))
    assert data["query"] == ROUTE_QUERY
    repos, docs = data["repositories"], data["collections"]
    assert [m["name"] for m in repos][:1] == ["shop"]
    assert repos[0]["path"] == str(corpus.shop.resolve())
    assert "refund" in repos[0]["rationale"]
    assert docs[0]["name"] == "billing-prd" and docs[0]["confidence"] > 0
    assert docs[0]["path"] == str(corpus.billing_docs.resolve())
    assert [m["name"] for m in docs] == ["billing-prd", "search-notes"]  # always listed
    assert docs[1]["rationale"].startswith("weak")
    assert all(0.0 <= m["confidence"] <= 1.0 for m in (*repos, *docs))
    assert (cache / "codesift" / "collections").is_dir()  # the shared indexes live there

    human = cli(tmp_path, cache, *args)
    assert human.returncode == 0, human.stderr
    assert human.stdout.index("repositories") < human.stdout.index("collections")
    assert "shop" in human.stdout and "billing-prd" in human.stdout and "weak" in human.stdout


def test_route_limit_and_a_config_file_listing_the_collections(
    tmp_path: Path, make_repo: MakeRepo
) -> None:
    corpus = make_routing_corpus(tmp_path / "src", make_repo, listed=False)
    config = tmp_path / "src" / "extra.toml"
    write_files(
        config.parent,
        {"extra.toml": '[[collections]]\nname = "billing-prd"\npath = "docs/billing"\n'},
    )
    cache = tmp_path / "cache"
    args = ("route", ROUTE_QUERY, "--root", corpus.shop, "--root", corpus.search, "--json")
    without = ok_json(cli(tmp_path, cache, *args))
    assert without["collections"] == []
    listed = ok_json(cli(tmp_path, cache, *args, "--config", config, "--limit", "1"))
    assert [m["name"] for m in listed["collections"]] == ["billing-prd"]
    assert len(listed["repositories"]) == 1


def test_a_bad_route_request_exits_2_with_one_line(corpus: RoutingCorpus, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    for args in (("route", "", "--root", corpus.shop), ("route", "x y", "--limit", "0")):
        result = cli(corpus.shop, cache, *args)
        assert result.returncode == 2, result
        assert result.stderr.startswith("error:") and "Traceback" not in result.stderr
        assert result.stdout == ""
    missing = cli(tmp_path, cache, "search", "refund", "--config", tmp_path / "nope.toml")
    assert missing.returncode == 2 and "--config" in missing.stderr


def test_search_lists_a_resource_no_code_mentions_and_a_code_results_related_resource(
    corpus: RoutingCorpus, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    gift = ok_json(cli(corpus.shop, cache, "search", GIFT_QUERY, "--json"))
    assert gift["resources"], gift
    top = gift["resources"][0]
    assert (top["collection"], top["path"]) == ("billing-prd", "gift-cards.md")
    assert top["title"] and top["snippet"] and top["start_line"] == 3
    assert all(r["collection"] == "" for r in gift["results"])

    page = ok_json(cli(corpus.shop, cache, "search", "refund_order", "--json"))
    [code] = [r for r in page["results"] if r["qualified_name"].endswith("refund_order")]
    assert [(x["collection"], x["path"], x["term"]) for x in code["related"]] == [
        ("billing-prd", "refunds.md", "refund_order")
    ]

    human = cli(corpus.shop, cache, "search", "refund_order")
    assert human.returncode == 0, human.stderr
    assert "mentioned in billing-prd refunds.md:3-" in human.stdout
    assert "from the document collections" in human.stdout


def test_route_in_a_folder_that_is_no_workspace_routes_among_the_indexes_below(
    corpus: RoutingCorpus, tmp_path: Path
) -> None:
    """Outside any workspace (no index above, no git work tree) `route` builds no
    index: it routes among the folders below that have one, and says which."""
    cache = tmp_path / "cache"
    scratch = tmp_path / "src"  # holds shop/, search/ (git) and docs/ (plain)
    none = cli(scratch, cache, "route", ROUTE_QUERY)
    assert none.returncode == 2, none.stderr
    assert "no codesift index" in none.stderr and "--root" in none.stderr
    assert len(none.stderr.strip().splitlines()) == 1
    assert not (scratch / ".codesift").exists()
    for repo in (corpus.shop, corpus.search):
        assert cli(repo, cache, "index", "--quiet").returncode == 0

    human = cli(scratch, cache, "route", ROUTE_QUERY)
    assert human.returncode == 0, human.stderr
    assert not (scratch / ".codesift").exists()  # no index of the scratch folder
    assert "routed among 2 indexed folders below" in human.stderr, human.stderr
    assert "shop" in human.stderr and "search" in human.stderr
    data = ok_json(cli(scratch, cache, "route", ROUTE_QUERY, "--json"))
    assert [m["name"] for m in data["repositories"]][:1] == ["shop"]
    assert sorted(f["path"] for f in data["folders"]) == sorted(
        str(p.resolve()) for p in (corpus.shop, corpus.search)
    )
    assert not (scratch / ".codesift").exists()


def test_route_names_the_folders_it_routed_among(corpus: RoutingCorpus, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    args = ("route", ROUTE_QUERY, "--root", corpus.shop, "--root", corpus.search)
    human = cli(tmp_path, cache, *args)
    assert human.returncode == 0, human.stderr
    assert "routed among 2 folders: shop, search" in " ".join(human.stderr.split())
