"""Within one request (`remembered_queries`), an embedder embeds a query text
once, however many indexes the request searches; outside, every call embeds."""

from __future__ import annotations

import threading

import numpy as np
import numpy.typing as npt
import pytest

from codesift.embedding import Embedder, remembered_queries


class CountingEmbedder(Embedder):
    """The static model, counting the texts it really embeds."""

    def __init__(self) -> None:
        super().__init__(model="static")
        self.embedded: list[str] = []

    def _embed_query(self, text: str) -> npt.NDArray[np.float32]:
        self.embedded.append(text)
        return super()._embed_query(text)


def test_a_request_embeds_each_query_once() -> None:
    embedder = CountingEmbedder()
    with remembered_queries():
        first = embedder.embed_query("rotate the signing key")
        with remembered_queries():  # nested: the request's memory, not a new one
            again = embedder.embed_query("rotate the signing key")
        other = embedder.embed_query("parse a header")
    assert again is first and not np.array_equal(first, other)
    assert embedder.embedded == ["rotate the signing key", "parse a header"]
    with pytest.raises(ValueError):
        first[0] = 1.0  # shared by the request's searches: read-only
    # Outside a request (benchmarks timing a repeated query), each call embeds.
    embedder.embed_query("rotate the signing key")
    embedder.embed_query("rotate the signing key")
    assert embedder.embedded[2:] == ["rotate the signing key"] * 2


def test_requests_on_other_threads_keep_their_own_memory() -> None:
    embedder = CountingEmbedder()
    seen: list[int] = []

    def request() -> None:
        with remembered_queries():
            embedder.embed_query("where are refunds issued")
            embedder.embed_query("where are refunds issued")
        seen.append(len(embedder.embedded))

    with remembered_queries():
        embedder.embed_query("where are refunds issued")
        worker = threading.Thread(target=request)
        worker.start()
        worker.join()
    assert seen == [2] and len(embedder.embedded) == 2
