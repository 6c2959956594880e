"""codesift.engine.live without a front end: a folder's live index and its read API.

A real git workspace, a real `FolderIndex` (writer thread and watcher) and a
`LiveReader` on reader threads, as the language server and the MCP server use
them: the first index, search, symbols, graph walk and status through the read
API, an edit that becomes searchable once `wait_fresh` says the index is fresh,
and a cancelled read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from codesift.engine import GraphQuery, Workspace
from codesift.engine.live import (
    Cancellation,
    FolderIndex,
    FolderListener,
    LiveReader,
    ReaderPool,
)
from codesift.errors import SearchCancelled
from codesift.retrieval import SearchRequest

MakeRepo = Callable[..., Path]
T = TypeVar("T")

# Generous: a deadline that is the failure, never a speed limit.
DEADLINE = 120.0

FILES = {
    ".codesift.toml": "[embedding]\nenabled = false\n",
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


class Events(FolderListener):
    def __init__(self) -> None:
        self.problems: list[str] = []

    def problem(self, folder: FolderIndex, message: str) -> None:
        self.problems.append(message)


@pytest.fixture
def live(make_repo: MakeRepo) -> Iterator[tuple[FolderIndex, LiveReader]]:
    root = make_repo(FILES)
    ws = Workspace.resolve(root)
    reader = LiveReader(ReaderPool(2))
    folder = FolderIndex(
        "shop", root.as_uri(), root, ws.settings, Events(), lambda: None, quiet=0.05
    )
    folder.start()
    try:
        yield folder, reader
    finally:
        folder.stop(DEADLINE)
        reader.close()


def on_reader(reader: LiveReader, fn: Callable[[Cancellation], T]) -> T:
    """Run `fn` on a reader thread, as a server does."""
    return reader.readers.submit(fn, Cancellation()).result(DEADLINE)


def test_reads_through_the_live_reader(live: tuple[FolderIndex, LiveReader]) -> None:
    folder, reader = live
    assert reader.wait_fresh(folder, open_timeout=DEADLINE, fresh_timeout=DEADLINE)
    assert folder.settled() and folder.progress.first_index_done
    request = SearchRequest("charge a card", top_k=5).validated(root=folder.root)
    page = on_reader(reader, lambda cancel: reader.search(folder, request, cancel))
    assert "shop/payments.py" in [r.path for r in page.results]
    found = on_reader(reader, lambda cancel: reader.symbols(folder, "charge_card", 10, cancel))
    assert [s.node.path for s in found.exact] == ["shop/payments.py"]
    walk = on_reader(
        reader,
        lambda cancel: reader.graph(folder, "charge_card", GraphQuery("callers"), cancel),
    )
    callers = {s.node.name for s in walk.nodes}
    assert "refund_order" in callers
    status = on_reader(reader, lambda cancel: reader.status(folder, cancel, rerank=False))
    assert status.files >= 2


def test_an_edit_is_searchable_once_fresh(live: tuple[FolderIndex, LiveReader]) -> None:
    folder, reader = live
    assert reader.wait_fresh(folder, open_timeout=DEADLINE, fresh_timeout=DEADLINE)
    (folder.root / "shop" / "invoices.py").write_text(
        "def issue_invoice(order):\n    return order\n", encoding="utf-8"
    )
    folder.add_paths(["shop/invoices.py"])  # as a save notification does
    assert reader.wait_fresh(folder, open_timeout=DEADLINE, fresh_timeout=DEADLINE)
    found = on_reader(reader, lambda cancel: reader.symbols(folder, "issue_invoice", 5, cancel))
    assert [s.node.path for s in found.exact] == ["shop/invoices.py"]


def test_a_cancelled_read_stops(live: tuple[FolderIndex, LiveReader]) -> None:
    folder, reader = live
    assert reader.wait_fresh(folder, open_timeout=DEADLINE, fresh_timeout=DEADLINE)
    request = SearchRequest("charge a card").validated(root=folder.root)
    cancel = Cancellation()
    cancel.cancel()  # before the read starts: its statements are interrupted at once
    future = reader.readers.submit(lambda: reader.search(folder, request, cancel))
    with pytest.raises(SearchCancelled):
        future.result(DEADLINE)
