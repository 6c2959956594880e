"""Document collections: a folder of documents outside the workspace, indexed once
into a shared index and searched beside the code."""

from __future__ import annotations

from pathlib import Path

import pytest

from codesift.engine import Engine, EngineListener, Workspace
from codesift.engine.collections import collection_db_path, collections_of
from codesift.engine.folder_search import search_folder
from conftest import write_files

CODE = {
    "shop/payments.py": (
        "def charge_card(amount):\n    '''Charge the customer's card.'''\n    return amount\n"
    ),
}
PRD = {
    "billing/refunds.md": (
        "# Refunds\n\n"
        "## Partial refunds\n\n"
        "A support agent can refund part of an order; the customer sees the credit\n"
        "within five business days.\n\n"
        "## Refund limits\n\n"
        "No refund may exceed the captured amount.\n"
    ),
    "billing/glossary.txt": "Chargeback: a payment reversed by the card issuer.\n",
}


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(home))
    return home


def workspace(tmp_path: Path, collections: str, extra: str = "") -> Workspace:
    root = tmp_path / "ws"
    write_files(
        root,
        {
            **CODE,
            ".codesift.toml": "[embedding]\nenabled = false\n" + extra + collections,
        },
    )
    return Workspace.at(root)


def test_a_requirement_no_code_mentions_is_found_beside_the_code(
    tmp_path: Path, cache: Path
) -> None:
    write_files(tmp_path / "docs", PRD)
    ws = workspace(
        tmp_path,
        '[[collections]]\nname = "billing-prd"\npath = "../docs"\nlabels = ["billing"]\n',
    )
    [collection] = collections_of(ws)
    assert collection.root == (tmp_path / "docs").resolve()
    assert collection.workspace.db_path == collection_db_path(tmp_path / "docs")
    assert collection.workspace.db_path.is_relative_to(cache)

    with Engine(ws, quiet=True) as engine:
        request = engine.request("partial refund credit for the customer")
        page = search_folder(engine, request)
        # The folder's own page holds no resources: adding them is the conductor's step.
        assert engine.search(request).resources == []
    assert page.resources, "the collection found nothing"
    top = page.resources[0]
    assert top.collection == "billing-prd"
    assert top.path == "billing/refunds.md"
    assert top.start_line == 3  # the "Partial refunds" section
    assert all(r.collection == "" for r in page.results)  # code results stay apart
    # one result per resource, at most search.resource_top_k (3)
    keys = [(r.path, r.node_id) for r in page.resources]
    assert len(keys) == len(set(keys)) and len(keys) <= 3


def test_resource_top_k_bounds_the_list_and_zero_turns_it_off(tmp_path: Path, cache: Path) -> None:
    write_files(tmp_path / "docs", PRD)
    listing = '[[collections]]\nname = "prd"\npath = "../docs"\n'
    ws = workspace(tmp_path, listing, extra="[search]\nresource_top_k = 1\n")
    with Engine(ws, quiet=True) as engine:
        page = search_folder(engine, engine.request("refund"))
    assert len(page.resources) == 1
    ws = workspace(tmp_path, listing, extra="[search]\nresource_top_k = 0\n")
    with Engine(ws, quiet=True) as engine:
        assert search_folder(engine, engine.request("refund")).resources == []


def test_two_workspaces_share_one_collection_index(tmp_path: Path, cache: Path) -> None:
    docs = tmp_path / "docs"
    write_files(docs, PRD)
    first = workspace(tmp_path, f'[[collections]]\nname = "a"\npath = "{docs}"\n')
    other_root = tmp_path / "other"
    write_files(other_root, {"x.py": "def f():\n    return 1\n"})
    second = Workspace.at(other_root, {"collections": [{"name": "b", "path": str(docs)}]})
    shared = collections_of(first)[0].workspace.db_path
    assert collections_of(second)[0].workspace.db_path == shared
    with Engine(first, quiet=True) as engine:
        search_folder(engine, engine.request("refund"))
    with Engine(second, quiet=True) as engine:
        assert search_folder(engine, engine.request("refund")).resources[0].collection == "b"
    assert sorted(p.name for p in shared.parent.glob("*.db")) == [shared.name]


def test_a_home_relative_collection_path_is_expanded(
    tmp_path: Path, cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    docs = tmp_path / "home" / "prd-docs"
    write_files(docs, PRD)
    ws = workspace(tmp_path, '[[collections]]\nname = "prd"\npath = "~/prd-docs"\n')
    assert collections_of(ws)[0].root == docs.resolve()


def test_a_missing_collection_folder_is_a_warning_not_a_failure(
    tmp_path: Path, cache: Path
) -> None:
    ws = workspace(tmp_path, '[[collections]]\nname = "gone"\npath = "../nowhere"\n')

    warnings: list[str] = []

    class Listener(EngineListener):
        def warning(self, message: str) -> None:
            warnings.append(message)

    with Engine(ws, Listener(), quiet=True) as engine:
        page = search_folder(engine, engine.request("charge card"))
    assert page.results and page.results[0].path == "shop/payments.py"
    assert page.resources == []
    assert any("gone" in w and "not a folder" in w for w in warnings)


def test_a_changed_document_is_found_on_the_next_search(tmp_path: Path, cache: Path) -> None:
    write_files(tmp_path / "docs", PRD)
    ws = workspace(tmp_path, '[[collections]]\nname = "prd"\npath = "../docs"\n')
    with Engine(ws, quiet=True) as engine:
        assert not any(
            "dunning" in r.snippet.lower()
            for r in search_folder(engine, engine.request("dunning emails")).resources
        )
    write_files(
        tmp_path / "docs",
        {"billing/dunning.md": "# Dunning\n\nSend dunning emails after a failed renewal.\n"},
    )
    with Engine(ws, quiet=True) as engine:
        page = search_folder(engine, engine.request("dunning emails"))
    assert page.resources[0].path == "billing/dunning.md"


def test_a_code_result_lists_the_resources_that_mention_it(tmp_path: Path, cache: Path) -> None:
    write_files(
        tmp_path / "docs",
        {
            **PRD,
            "billing/cards.md": (
                "# Card payments\n\n"
                "Cards are charged by `charge_card` in shop/payments.py once the order\n"
                "is confirmed.\n\n"
                "# Unrelated\n\nNothing about code here: charge, card, payments.\n"
            ),
        },
    )
    ws = workspace(tmp_path, '[[collections]]\nname = "prd"\npath = "../docs"\n')
    with Engine(ws, quiet=True) as engine:
        page = search_folder(engine, engine.request("charge the customer's card"))
    [code] = [r for r in page.results if r.qualified_name.endswith("charge_card")]
    assert [(x.collection, x.path, x.start_line) for x in code.related] == [
        ("prd", "billing/cards.md", 1)
    ]
    assert code.related[0].term in ("shop/payments.py", "charge_card", "payments.charge_card")
    # the mentions follow the documents: drop the sentence, the link goes
    write_files(tmp_path / "docs", {"billing/cards.md": "# Card payments\n\nCards only.\n"})
    with Engine(ws, quiet=True) as engine:
        page = search_folder(engine, engine.request("charge the customer's card"))
    [code] = [r for r in page.results if r.qualified_name.endswith("charge_card")]
    assert code.related == ()
