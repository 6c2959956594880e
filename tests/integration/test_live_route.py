"""Routing among live folders (the language and MCP servers) reads the same
evidence as a one-shot route (engine/route.py), the folders' topic centroids
included, and with MiniLM vectors their nearest chunks to MiniLM's query: the
same query over the same indexes gives the same pools, in the same order, with
the same confidences."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from codesift.embedding import Embedder
from codesift.engine import Workspace
from codesift.engine.live import Cancellation, FolderIndex, FolderListener, LiveReader, ReaderPool
from codesift.engine.live_collections import live_evidence, live_query_embedder, live_route
from codesift.engine.route_folders import route
from codesift.store.database import open_database
from codesift.store.route_centroids import cached_centroids

pytestmark = pytest.mark.usefixtures("git_isolation")

MakeRepo = Callable[..., Path]
T = TypeVar("T")

DEADLINE = 120.0  # the failure when it passes, never a speed limit

# Static vectors: computed in the folder's background within seconds, offline.
SETTINGS = '[embedding]\nmodel = "static"\nstatic_first = false\n'

REPOSITORIES = {
    "billing": {
        ".codesift.toml": SETTINGS,
        "billing/charges.py": (
            "def retry_failed_charge(card, attempts):\n"
            '    """Charge the card again after a decline, with exponential backoff."""\n'
            "    return attempts\n\n\n"
            "def refund_payment(order):\n"
            '    """Give the customer their money back."""\n'
            "    return order\n"
        ),
        "billing/invoices.py": (
            "def issue_invoice(order):\n"
            '    """Write the invoice for an order and send it by mail."""\n'
            "    return order\n\n\n"
            "def process_item(item):\n"
            '    """Add the price and tax of the item to the bill of the customer."""\n'
            "    return item\n"
        ),
    },
    "search": {
        ".codesift.toml": SETTINGS,
        "search/stemmer.py": (
            "def stem_word(word):\n"
            '    """Reduce an English word to its stem, as the Porter stemmer does."""\n'
            "    return word\n"
        ),
        "search/ranking.py": (
            "def rank_documents(query, documents):\n"
            '    """Order documents by their BM25 score for the query."""\n'
            "    return documents\n"
        ),
    },
    "graphics": {
        ".codesift.toml": SETTINGS,
        "graphics/shader.py": (
            "def compile_shader(source):\n"
            '    """Compile a fragment shader for the GPU pipeline."""\n'
            "    return source\n\n\n"
            "def retry_draw(frame):\n"
            '    """Draw the frame again after the device was lost."""\n'
            "    return frame\n"
        ),
        "graphics/scene.py": (
            "def load_scene(path):\n"
            '    """Read the meshes and textures of a scene file."""\n'
            "    return path\n\n\n"
            "def process_item(item):\n"
            '    """Upload the mesh and textures of the item to the GPU."""\n'
            "    return item\n"
        ),
    },
}


class Quiet(FolderListener):
    pass


def wait_until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {DEADLINE} s")
        time.sleep(0.05)  # polling for a state, not waiting for a time to pass


@pytest.fixture(params=["static", "minilm"])
def folders(
    request: pytest.FixtureRequest, make_repo: MakeRepo, embedder: Embedder
) -> Iterator[tuple[list[FolderIndex], LiveReader]]:
    """The three folders, live, with every vector computed: by the static model, or
    by MiniLM (then routing measures a MiniLM query against their nearest chunks)."""
    model: str = request.param
    fills = Embedder(model="static") if model == "static" else embedder
    settings = (
        SETTINGS
        if model == "static"
        else f'[embedding]\nmodel = "minilm"\nstatic_first = false\n'
        f'cache_dir = "{embedder.cache_dir}"\n'
    )
    reader = LiveReader(ReaderPool(2))
    started: list[FolderIndex] = []
    try:
        for name, files in REPOSITORIES.items():
            root = make_repo({**files, ".codesift.toml": settings}, name=name)
            ws = Workspace.resolve(root)
            folder = FolderIndex(name, root.as_uri(), root, ws.settings, Quiet(), lambda: fills)
            folder.start()
            started.append(folder)
        for folder in started:
            assert reader.wait_fresh(folder, open_timeout=DEADLINE, fresh_timeout=DEADLINE)
            wait_until(
                lambda f=folder: 0 < f.progress.vectors_embeddable == f.progress.vectors_embedded,
                f"{folder.name}'s vectors",
            )
        yield started, reader
    finally:
        for folder in started:
            folder.stop(DEADLINE)
        reader.close()


def on_reader(reader: LiveReader, fn: Callable[[Cancellation], T]) -> T:
    """Run `fn` on a reader thread, as a server does."""
    return reader.readers.submit(fn, Cancellation()).result(DEADLINE)


def test_live_routing_reads_the_folders_topics(
    folders: tuple[list[FolderIndex], LiveReader],
) -> None:
    live, reader = folders
    for folder in live:

        def topics_of(cancel: Cancellation, folder: FolderIndex = folder) -> Any:
            with reader.connection(folder, cancel) as conn:
                return live_evidence(folder, conn).topics()

        topics = on_reader(reader, topics_of)
        assert topics is not None and len(topics) > 0
        conn = open_database(folder.db_path, create=False)
        try:
            assert (topics == cached_centroids(folder.db_path, conn)).all()
        finally:
            conn.close()


@pytest.mark.parametrize(
    "query",
    [
        "retry after a failure",
        # Words two folders hold alike: the topics decide ("graphics" after "billing"
        # in a tie on name).
        "process item rendering pixels polygons",
        "stem english words for ranking",
        "send the invoice by mail",
    ],
)
def test_live_routes_are_the_one_shot_routes(
    folders: tuple[list[FolderIndex], LiveReader], query: str
) -> None:
    live, reader = folders
    minilm = live[0].settings.embedding.model == "minilm"
    # With MiniLM vectors the pool is scored with MiniLM's query and nearest chunks.
    query_embedder = live_query_embedder(reader, live)
    assert (query_embedder is not None) == minilm
    if query_embedder is not None:
        vector = query_embedder.embed_query(query)

        def neighbours_of(cancel: Cancellation, folder: FolderIndex) -> float | None:
            with reader.connection(folder, cancel) as conn:
                return live_evidence(folder, conn).neighbours(vector)

        near = [on_reader(reader, lambda c, f=f: neighbours_of(c, f)) for f in live]
        assert all(n is not None and -1.0 <= n <= 1.0 for n in near), near
    one_shot = route(query, [f.workspace for f in live])
    served = on_reader(reader, lambda cancel: live_route(reader, live, [], query, 3, cancel))
    assert served.repositories, query
    assert [(m.name, m.confidence, m.rationale) for m in served.repositories] == [
        (m.name, m.confidence, m.rationale) for m in one_shot.repositories
    ]
