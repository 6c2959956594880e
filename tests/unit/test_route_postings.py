"""store/postgres/route_postings.py: a routing probe scored from term postings
(BM25 per repository and layer), without a database."""

from __future__ import annotations

import struct

from codesift.store.postgres.route_postings import PostingRow, RoutePostings


def row(key: str, layer: str, term: str, postings: list[tuple[int, int, int]]) -> PostingRow:
    """(chunk id, occurrences, tokens) postings as term_stats stores them."""
    postings = sorted(postings)
    return PostingRow(
        key,
        layer,
        term,
        b"".join(struct.pack(">i", c) for c, _, _ in postings),
        b"".join(struct.pack(">h", n) for _, n, _ in postings),
        b"".join(struct.pack(">i", t) for _, _, t in postings),
        len(postings),
        100,
        2000,
    )


ROWS = [
    # "vault": chunk 1 holds master and key, 2 key twice, 3 master once in a long chunk.
    row("vault", "code", "master", [(1, 1, 20), (3, 1, 400)]),
    row("vault", "code", "key", [(1, 1, 20), (2, 2, 20), (4, 1, 20)]),
    row("vault", "doc", "key", [(7, 1, 30)]),
    row("web", "code", "key", [(9, 1, 20)]),
]


def test_chunks_rank_by_bm25_and_carry_the_terms_they_hold() -> None:
    postings = RoutePostings(["master", "key"], ROWS)
    code = postings.probe("vault", frozenset(), 10, layers=("code",))
    # 1 holds both; 2 holds key twice and 4 once, in short chunks; 3 holds the
    # rarer term (master) once, in a chunk 20 times the mean length.
    both, key, master = frozenset({"master", "key"}), frozenset({"key"}), frozenset({"master"})
    assert code == [both, key, key, master]
    assert postings.probe("vault", frozenset(), 2, layers=("code",)) == [both, key]
    # Each layer gives its own best, code first.
    assert postings.probe("vault", frozenset(), 1) == [both, key]


def test_a_chunk_holding_only_common_terms_is_no_candidate() -> None:
    postings = RoutePostings(["master", "key"], ROWS)
    found = postings.probe("vault", frozenset({"key"}), 10, layers=("code",))
    assert found == [frozenset({"master", "key"}), frozenset({"master"})]  # not 2, not 4
    # Every term common: all count again.
    assert len(postings.probe("vault", frozenset({"key", "master"}), 10, layers=("code",))) == 4


def test_repositories_are_apart_and_an_unknown_one_has_nothing() -> None:
    postings = RoutePostings(["master", "key"], ROWS)
    assert postings.probe("web", frozenset(), 10) == [frozenset({"key"})]
    assert postings.probe("nowhere", frozenset(), 10) == []
