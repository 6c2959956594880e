"""File evidence and its yield, end to end: a real git workspace indexed into real
SQLite, searched through Searcher. A file with many partial matches is lifted over
files with one; a chunk whose text says what the question says stays the answer."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import apsw
import pytest

from codesift.config import SearchSettings
from codesift.indexer import IndexSummary
from codesift.retrieval import Searcher, SearchRequest

pytestmark = pytest.mark.usefixtures("git_isolation")

MakeRepo = Callable[..., Path]
IndexWorkspace = Callable[..., tuple[apsw.Connection, IndexSummary]]

QUESTION = "round the amount half up to the nearest cent before printing the invoice total"

ROUNDING_PY = '''\
def round_to_cents(value):
    """Round the amount half up to the nearest cent before printing the invoice total."""
    return int(value * 100 + 0.5) / 100
'''

# Many functions of one file, each sharing a few of the question's words.
LEDGER_PY = "\n\n".join(
    f'''def ledger_step_{i}(entry):
    """Keep the {word} of the entry in the ledger."""
    return entry.{word}
'''
    for i, word in enumerate(["amount", "invoice", "total", "cent", "amount", "invoice"])
)

WORKSPACE = {
    "pricing/rounding.py": ROUNDING_PY,
    "books/ledger.py": LEDGER_PY,
    "books/notes.py": 'def note(text):\n    """Print the total of a note."""\n    return text\n',
}


@pytest.fixture
def conn(make_repo: MakeRepo, index_workspace: IndexWorkspace) -> apsw.Connection:
    connection, summary = index_workspace(make_repo(WORKSPACE))
    assert summary.indexed == len(WORKSPACE)
    return connection


def first_path(conn: apsw.Connection, settings: SearchSettings) -> str:
    response = Searcher(conn, settings).search(SearchRequest(QUESTION, top_k=5))
    assert response.results, "no results"
    return response.results[0].path


def test_a_dominant_lexical_match_stays_first_with_the_default_yield(
    conn: apsw.Connection,
) -> None:
    assert first_path(conn, SearchSettings()) == "pricing/rounding.py"
    # Even with file evidence at its strongest: only the yield differs from the next test.
    strong = replace(SearchSettings(), file_evidence=1.0)
    assert strong.file_evidence_yield > 0
    assert first_path(conn, strong) == "pricing/rounding.py"


def test_without_the_yield_file_evidence_lifts_the_file_of_many_partial_matches(
    conn: apsw.Connection,
) -> None:
    # The same index and question: what the yield protects against.
    settings = replace(SearchSettings(), file_evidence_yield=0.0, file_evidence=1.0)
    assert first_path(conn, settings) == "books/ledger.py"


def test_file_evidence_off_leaves_the_best_chunk_first(conn: apsw.Connection) -> None:
    settings = replace(SearchSettings(), file_evidence_yield=0.0, file_evidence=0.0)
    assert first_path(conn, settings) == "pricing/rounding.py"
