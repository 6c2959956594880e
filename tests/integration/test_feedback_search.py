"""The feedback stream end to end: a real git workspace indexed into real SQLite,
searched through Searcher with and without vectors."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import apsw
import pytest

from codesift.config import SearchSettings
from codesift.embedding import Embedder, fill_vectors
from codesift.indexer import IndexSummary
from codesift.retrieval import Searcher, SearchRequest, SearchResponse
from feedback_workspace import FILES, QUESTION

pytestmark = pytest.mark.usefixtures("git_isolation")

MakeRepo = Callable[..., Path]
# shared.py holds most of its words, each misc/ file one or two: the lexical
# stream's best match stands out among several.
STANDS_OUT = f"{QUESTION}, then convert the value"
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


def test_with_vectors_feedback_runs_when_the_lexical_best_stands_out_on_a_small_index(
    indexed: apsw.Connection,
) -> None:
    conn = indexed
    question = STANDS_OUT
    static = Embedder(model="static")
    with Searcher(conn, embedder=static) as searcher:
        # No vectors yet: the vector streams find nothing, feedback stands in.
        before = searcher.search(SearchRequest(question, top_k=5))
    assert _feedback(before) == ["feedback"]
    assert fill_vectors(conn, static) > 0
    with Searcher(conn, embedder=static) as searcher:
        small = searcher.search(SearchRequest(question, top_k=5))
    vector = next(s for s in small.streams if s.stream == "vector")
    assert vector.candidates > 0
    lexical = next(s for s in small.streams if s.stream == "lexical")
    assert lexical.candidates > 1
    # The vectors answered; shared.py matches the question far better than anything
    # else lexically, and the index is small: feedback runs.
    assert _feedback(small) == ["feedback"]
    assert SearchSettings().feedback_vectors_max_chunks > 100
    # Asking for a lexical best that stands out more than this one does: no feedback.
    picky = replace(SearchSettings(), feedback_vectors_ratio=1000.0)
    with Searcher(conn, picky, embedder=static) as searcher:
        assert not _feedback(searcher.search(SearchRequest(question, top_k=5)))
    # An index of more code chunks than the setting allows: the vectors answer alone.
    code_chunks = conn.execute("SELECT count(*) FROM chunks WHERE layer = 'code'").fetchone()[0]
    large = replace(SearchSettings(), feedback_vectors_max_chunks=code_chunks - 1)
    with Searcher(conn, large, embedder=static) as searcher:
        assert not _feedback(searcher.search(SearchRequest(question, top_k=5)))
    at_limit = replace(SearchSettings(), feedback_vectors_max_chunks=code_chunks)
    with Searcher(conn, at_limit, embedder=static) as searcher:
        assert _feedback(searcher.search(SearchRequest(question, top_k=5))) == ["feedback"]


def test_with_vectors_no_feedback_when_the_lexical_best_does_not_stand_out(
    indexed: apsw.Connection, tmp_path: Path
) -> None:
    """Forty files define `convert_<i>(value)` alike: no lexical match stands out, so
    with vectors (static, or MiniLM's query vectors over static chunk vectors: the
    default first tier) the vector streams answer alone; without them feedback runs."""
    conn = indexed
    question = "convert the given value"
    with Searcher(conn) as searcher:
        plain = searcher.search(SearchRequest(question, top_k=5))
    assert _feedback(plain) == ["feedback"]
    lexical = next(s for s in plain.streams if s.stream == "lexical")
    assert lexical.candidates >= 40
    assert fill_vectors(conn, Embedder(model="static")) > 0
    minilm = Embedder(tmp_path / "models", max_tokens=64)
    for embedder in (Embedder(model="static"), minilm):
        with Searcher(conn, embedder=embedder) as searcher:
            response = searcher.search(SearchRequest(question, top_k=5))
            stands_out = searcher.search(SearchRequest(STANDS_OUT, top_k=5))
        vector = next(s for s in response.streams if s.stream == "vector")
        assert vector.error is None and vector.candidates > 0
        assert not _feedback(response)
        assert _feedback(stands_out) == ["feedback"]


def test_the_feedback_statement_leaves_out_terms_by_its_own_share(
    indexed: apsw.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lexical stream scores terms up to `lexical_max_df`, the feedback stream's
    statement (the query's terms and the added words) up to `feedback_max_df`."""
    from codesift.store.sqlite.search import SqliteSearchStore

    shares: list[tuple[tuple[str, ...], float]] = []
    real = SqliteSearchStore.lexical_hits

    def recording(
        self: SqliteSearchStore, layer: str, terms: Sequence[str], *args: Any, **kwargs: Any
    ) -> list[tuple[int, float]]:
        if layer == "code":
            shares.append((tuple(terms), args[2] if len(args) > 2 else kwargs["max_df"]))
        return real(self, layer, terms, *args, **kwargs)

    monkeypatch.setattr(SqliteSearchStore, "lexical_hits", recording)
    settings = replace(SearchSettings(), lexical_max_df=0.3, feedback_max_df=0.07)
    with Searcher(indexed, settings, parallel=False) as searcher:
        response = searcher.search(SearchRequest(QUESTION, top_k=5))
    report = next(s for s in response.streams if s.stream == "feedback")
    assert report.added_terms
    by_share = {share: terms for terms, share in shares}
    assert set(by_share) == {0.3, 0.07}
    assert set(report.added_terms) <= set(by_share[0.07])
    assert not set(report.added_terms) & set(by_share[0.3])


def _feedback_rank(response: SearchResponse, path: str) -> int | None:
    result = next(r for r in response.results if r.path == path)
    return next((h.rank for h in result.provenance if h.stream == "feedback"), None)


def test_the_feedback_stream_keeps_the_first_pass_best_result_first(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    """guard.py has fewer of the question's words than shared.py but the added words
    (shared.py's identifiers) more often: the feedback stream alone would rank it
    first; it keeps shared.py, the first pass's best, first."""
    question = "guarded for worker threads"
    files = {
        "pool/shared.py": (
            "def shared_instance(registry):\n"
            '    """Guarded for worker threads."""\n'
            "    return registry.double_checked_make()\n"
        ),
        "pool/guard.py": (
            "def remake(registry):\n"
            "    # For worker threads.\n"
            "    return registry.double_checked_make(registry.double_checked_make(registry))\n"
        ),
        **{k: v for k, v in FILES.items() if k.startswith("misc/")},
        # The question's words but one are common.
        **{f"misc/note_{i}.py": f"# guarded for worker use\nNOTE_{i} = {i}\n" for i in range(30)},
    }
    conn, _ = index_workspace(make_repo(files))
    with Searcher(conn) as searcher:
        kept = searcher.search(SearchRequest(question, top_k=10))
    off = replace(SearchSettings(), feedback_keeps_first=False)
    with Searcher(conn, off) as searcher:
        free = searcher.search(SearchRequest(question, top_k=10))
    assert _paths(kept)[0] == "pool/shared.py"
    assert _feedback_rank(free, "pool/guard.py") == 1
    assert _feedback_rank(free, "pool/shared.py") != 1
    assert _feedback_rank(kept, "pool/shared.py") == 1
    assert _feedback_rank(kept, "pool/guard.py") == 2
