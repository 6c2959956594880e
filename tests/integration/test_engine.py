"""codesift.engine in-process, as a front end (the MCP server next) calls it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from codesift.engine import Engine, EngineListener, GraphQuery, Workspace, index_status
from codesift.errors import NotIndexedError, QueryError

MakeRepo = Callable[..., Path]

FILES = {
    ".codesift.toml": "[search]\ntop_k = 3\n\n[embedding]\nenabled = false\n",
    "shop/orders.py": (
        "from shop.payments import charge_card\n\n\n"
        "class OrderBook:\n"
        "    def place_order(self, order):\n"
        '        """Place an order and charge the card."""\n'
        "        return charge_card(order.total)\n"
    ),
    "shop/payments.py": (
        "def charge_card(amount):\n"
        '    """Charge a card through the payment provider."""\n'
        "    return amount > 0\n"
    ),
    "shop/refunds.py": (
        "from shop.payments import charge_card\n\n\n"
        "def refund_order(order):\n"
        "    return charge_card(-order.total)\n"
    ),
}


class Notes(EngineListener):
    def __init__(self) -> None:
        self.tasks: list[tuple[str, int]] = []

    def begin(self, task: str, total: int) -> None:
        self.tasks.append((task, total))


def test_engine_answers_search_symbols_graph_and_status(make_repo: MakeRepo) -> None:
    root = make_repo(FILES)
    ws = Workspace.resolve(None, start=root / "shop")
    assert ws.root == root.resolve() and ws.settings.search.top_k == 3
    with pytest.raises(NotIndexedError):
        Engine(ws, update=False).symbols("charge_card")
    with Engine(ws, quiet=True) as engine:
        with pytest.raises(QueryError):
            engine.search(engine.request("   "))  # checked before the index is built
        assert not ws.db_path.exists()
        page = engine.search(engine.request("charge the card"))
        assert engine.built is not None and engine.built.indexed == 4  # .codesift.toml too
        assert 0 < len(page.results) <= 3  # search.top_k from .codesift.toml
        found = engine.symbols("charge_card")
        assert [s.node.path for s in found.exact] == ["shop/payments.py"]
        similar = engine.symbols("charge_crd")  # a typo
        assert similar.exact == () and similar.fuzzy[0].node.name == "charge_card"
        walk = engine.graph("charge_card", GraphQuery(direction="callers", depth=2))
        callers = {s.node.qualified_name for s in walk.nodes} - {"payments.charge_card"}
        assert callers == {"orders.OrderBook.place_order", "refunds.refund_order"}
        assert {link.kind for link in walk.edges} == {"calls"}
        contained = engine.graph("place_order", GraphQuery("callers", kinds=("contains",)))
        assert [s.node.name for s in contained.nodes] == ["place_order", "OrderBook"]
    status = index_status(ws)
    assert status.exists and status.files == 4 and status.languages["python"] == 3


def test_engine_reindex_reports_progress_to_its_listener(make_repo: MakeRepo) -> None:
    root = make_repo(FILES)
    notes = Notes()
    engine = Engine(Workspace.at(root), notes)
    report = engine.reindex(vectors=False)
    assert report.summary.indexed == 4 and notes.tasks == [("indexing", 4)]
    (root / "shop" / "payments.py").write_text("def charge_card(amount):\n    return 1\n")
    assert engine.reindex(vectors=False).summary.indexed == 1
    assert engine.status().files == 4
    engine.close()
