"""The feedback stream end to end: a real git workspace indexed into real SQLite,
searched through Searcher with and without vectors."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import apsw
import pytest

from codesift.config import SearchSettings
from codesift.embedding import Embedder, fill_vectors
from codesift.indexer import IndexSummary
from codesift.retrieval import Searcher, SearchRequest, SearchResponse
from feedback_workspace import FILES, QUESTION

pytestmark = pytest.mark.usefixtures("git_isolation")

MakeRepo = Callable[..., Path]
IndexWorkspace = Callable[..., tuple[apsw.Connection, IndexSummary]]


@pytest.fixture
def indexed(make_repo: MakeRepo, index_workspace: IndexWorkspace) -> apsw.Connection:
    """FILES in a git repository, indexed (no vectors)."""
    conn, _ = index_workspace(make_repo(FILES))
    return conn


def _feedback(response: SearchResponse) -> list[str]:
    return [s.stream for s in response.streams if s.stream == "feedback"]


def _paths(response: SearchResponse) -> list[str]:
    return [r.path for r in response.results]


def test_without_vectors_a_question_finds_code_that_shares_only_identifiers(
    indexed: apsw.Connection,
) -> None:
    conn = indexed
    with Searcher(conn) as searcher:
        response = searcher.search(SearchRequest(QUESTION, top_k=5))
    report = next(s for s in response.streams if s.stream == "feedback")
    assert report.error is None and report.weight == SearchSettings().weight_feedback
    assert {"creation", "guard", "double", "checked", "make"} & set(report.added_terms)
    assert "shared" not in report.added_terms  # the query's own word
    assert _paths(response)[0] == "pool/shared.py"
    guard = next(r for r in response.results if r.path == "pool/guard.py")
    assert {h.stream for h in guard.provenance} == {"feedback"}

    # Off, the same question finds nothing in guard.py: it shares none of its words.
    off = replace(SearchSettings(), feedback_terms=0)
    with Searcher(conn, off) as searcher:
        plain = searcher.search(SearchRequest(QUESTION, top_k=5))
    assert not _feedback(plain)
    assert "pool/guard.py" not in _paths(plain)


def test_no_feedback_for_a_symbol_query_or_a_search_without_code(indexed: apsw.Connection) -> None:
    conn = indexed
    with Searcher(conn) as searcher:
        symbol = searcher.search(SearchRequest("CreationGuard"))
        docs_only = searcher.search(SearchRequest(QUESTION, layers=("doc",)))
    assert symbol.results[0].path == "pool/guard.py"
    assert not _feedback(symbol)
    assert not _feedback(docs_only)


def test_with_vectors_the_vector_streams_answer_and_feedback_stays_off(
    indexed: apsw.Connection,
) -> None:
    conn = indexed
    static = Embedder(model="static")
    with Searcher(conn, embedder=static) as searcher:
        # No vectors yet: the vector streams find nothing, feedback stands in.
        before = searcher.search(SearchRequest(QUESTION, top_k=5))
    assert _feedback(before) == ["feedback"]
    assert fill_vectors(conn, static) > 0
    with Searcher(conn, embedder=static) as searcher:
        after = searcher.search(SearchRequest(QUESTION, top_k=5))
    vector = next(s for s in after.streams if s.stream == "vector")
    assert vector.candidates > 0
    assert not _feedback(after)
