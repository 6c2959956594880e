"""`codesift search QUERY --root A --root B ...`: one search over several folders,
run as real subprocesses on real git repositories. Over five folders or more only
the router's best five are searched (`routed`), the folder the question is about
leads the page; fewer are all searched, their pages merged in the router's order;
`--no-route` merges by score alone. A collection two folders list is searched once."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_cli_route import cli, ok_json

from conftest import MakeRepo
from routing_corpus import (
    NO_VECTORS,
    SEVEN_FOLDERS,
    SEVEN_QUERY,
    RoutingCorpus,
    make_routing_corpus,
)

pytestmark = pytest.mark.usefixtures("git_isolation")


@pytest.fixture
def seven(tmp_path: Path, make_repo: MakeRepo) -> list[Path]:
    base = tmp_path / "src"
    return [
        make_repo({**files, ".codesift.toml": NO_VECTORS}, name=name, parent=base)
        for name, files in SEVEN_FOLDERS.items()
    ]


def roots(folders: list[Path]) -> list[str | Path]:
    out: list[str | Path] = []
    for folder in folders:
        out += ["--root", folder]
    return out


def test_a_search_over_seven_folders_searches_the_routers_best_five(
    seven: list[Path], tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    route = ok_json(
        cli(tmp_path, cache, "route", SEVEN_QUERY, *roots(seven), "--limit", "20", "--json")
    )
    passing = [m["name"] for m in route["repositories"] if m["confidence"] >= 0.1]
    assert len(passing) == len(seven)  # every folder passes the threshold...
    page = ok_json(cli(tmp_path, cache, "search", SEVEN_QUERY, *roots(seven), "--json"))
    assert page["routed"] == passing[:5]  # ...and the best five are searched
    assert page["searched"] == [p.name for p in seven if p.name in passing[:5]]
    assert page["folder_order"] == [m["name"] for m in route["repositories"]]
    assert page["folder_order"][0] == "tokens"
    first = page["results"][0]
    assert first["folder"] == "tokens"
    assert first["root"] == str(seven[0].resolve())
    assert first["qualified_name"].endswith("refresh_expired_session_token")
    assert {r["folder"] for r in page["results"]} <= set(passing[:5])
    assert all(Path(r["root"]).name == r["folder"] for r in page["results"])
    scores = [r["score"] for r in page["results"]]
    assert scores == sorted(scores, reverse=True)
    assert {s["folder"] for s in page["streams"]} == set(page["searched"])


def test_no_route_searches_every_folder_merged_by_score(seven: list[Path], tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    args = ("search", SEVEN_QUERY, *roots(seven), "--no-route", "--json")
    page = ok_json(cli(tmp_path, cache, *args))
    assert page["routed"] is None and page["folder_order"] is None
    assert page["searched"] == [p.name for p in seven]
    text = cli(tmp_path, cache, "search", SEVEN_QUERY, *roots(seven))
    assert text.returncode == 0, text.stderr
    assert "routed to tokens, " in text.stderr  # what the router chose, on stderr
    assert "tokens tokens/session.py:1-5" in text.stdout  # each result names its folder


def test_two_folders_are_both_searched_in_the_routers_order_with_collections_once(
    tmp_path: Path, make_repo: MakeRepo
) -> None:
    corpus: RoutingCorpus = make_routing_corpus(tmp_path / "src", make_repo)
    cache = tmp_path / "cache"
    args = ("search", "refund an order", "--root", corpus.search, "--root", corpus.shop, "--json")
    page = ok_json(cli(tmp_path, cache, *args))
    assert page["routed"] is None  # fewer than five folders: every one is searched
    assert page["searched"] == ["search", "shop"]
    assert page["folder_order"][0] == "shop"
    assert page["results"][0]["folder"] == "shop"
    assert page["results"][0]["qualified_name"].endswith("refund_order")
    # Both folders list billing-prd: its refunds section comes once.
    keys = [(r["collection"], r["path"], r["start_line"]) for r in page["resources"]]
    assert len(keys) == len(set(keys))
    assert ("billing-prd", "refunds.md") in {(c, p) for c, p, _ in keys}
    related = page["results"][0]["related"]
    assert any(link["collection"] == "billing-prd" for link in related)


def test_folders_with_one_name_are_told_apart_by_their_parents(
    tmp_path: Path, make_repo: MakeRepo
) -> None:
    files = {".codesift.toml": NO_VECTORS}
    app = make_repo(
        {**files, "app.py": "def checkout_basket():\n    pass\n"},
        name="src",
        parent=tmp_path / "app",
    )
    lib = make_repo(
        {**files, "lib.py": "def parse_basket():\n    pass\n"}, name="src", parent=tmp_path / "lib"
    )
    cache = tmp_path / "cache"
    page = ok_json(cli(tmp_path, cache, "search", "basket", "--root", app, "--root", lib, "--json"))
    assert page["searched"] == ["app/src", "lib/src"]
    assert {r["folder"]: r["path"] for r in page["results"]} == {
        "app/src": "app.py",
        "lib/src": "lib.py",
    }
    route = ok_json(
        cli(tmp_path, cache, "route", "checkout basket", "--root", app, "--root", lib, "--json")
    )
    assert {m["name"]: m["path"] for m in route["repositories"]} == {
        "app/src": str(app.resolve()),
        "lib/src": str(lib.resolve()),
    }


def test_bad_requests_over_several_folders_fail_in_one_line(
    tmp_path: Path, make_repo: MakeRepo
) -> None:
    corpus = make_routing_corpus(tmp_path / "src", make_repo, listed=False)
    cache = tmp_path / "cache"
    both = ("--root", corpus.shop, "--root", corpus.search)
    for args, says in (
        # A revision is resolved in each folder: this tag is in neither.
        (
            ("search", "refund", *both, "--as-of", "no-such-tag"),
            f"(folder {corpus.shop.resolve()})",
        ),
        (("search", "refund", "--root", corpus.shop, "--no-route"), "--no-route needs several"),
        (("search", "refund", *both, "--db", "postgresql://nobody@localhost/x"), "give one --root"),
        (("search", "refund", *both, "--root", tmp_path / "missing"), "missing"),
        (("search", "  ", *both), "the query is empty"),
    ):
        result = cli(tmp_path, cache, *args)
        assert result.returncode == 2, (args, result.stdout, result.stderr)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error:"), result.stderr
        assert says in lines[0], lines[0]
        assert "Traceback" not in result.stderr and result.stdout == ""
