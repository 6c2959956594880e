"""The symbol stream's name candidates on PostgreSQL: with the stream's threshold,
a short probe's candidates are only the names holding one of its own trigrams
(store/postgres/search.shared_trigram_patterns), and the stream ranks the same
definitions as without it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from codesift.engine.postgres import connect, index_into
from codesift.retrieval.query import analyze_query
from codesift.retrieval.streams import _char_trigrams, _similarity, symbol_stream
from codesift.store.filters import SearchFilters
from codesift.store.postgres import PostgresSearchStore, Reader
from codesift.store.postgres.search import shared_trigram_patterns
from codesift.store.search_store import SymbolCandidate

pytestmark = pytest.mark.usefixtures("git_isolation")

NO_VECTORS = {"embedding": {"enabled": False}}
FILTERS = SearchFilters(("code", "summary", "doc"))
THRESHOLD = 0.3

# Names that reach 0.3 for `type` (typed, types, subtype, retype), names that
# share only pg_trgm's padded trigrams with it (`  t`, ` ty`, `pe `: tyre, tape,
# tying; tally and tree share too few even for pg_trgm) and some that share its
# trigrams but not enough (type_name: 2 of 7, prototype_registry).
NAMES = [
    "type",
    "typed",
    "types",
    "subtype",
    "type_name",
    "typo",
    "tyre",
    "tape",
    "tying",
    "tally",
    "tree",
    "text_wrap",
    "tempo",
    "prototype_registry",
    "retype",
]

FILES = {
    "kinds.py": "".join(f"def {name}(value):\n    return value\n\n\n" for name in NAMES),
}


def test_patterns_are_the_probes_indexed_trigrams() -> None:
    assert shared_trigram_patterns("type", THRESHOLD) == ["%typ%", "%ype%"]
    assert shared_trigram_patterns("redis", THRESHOLD) == ["%dis%", "%edi%", "%red%"]
    # Not narrowed: no threshold, or too many of its trigrams hold a character
    # pg_trgm does not index (a name could share only those).
    assert shared_trigram_patterns("type", 0.0) is None
    assert shared_trigram_patterns("a_b", THRESHOLD) is None
    assert shared_trigram_patterns("x_y_z", THRESHOLD) is None


def test_patterns_never_leave_out_a_name_that_reaches_the_threshold() -> None:
    words = ["type", "redis", "proto", "json", "get_x", "parse", "_id", "a_b_c", "x1y2"]
    names = [*NAMES, "get_xy", "json_io", "redis_db", "parse_args", "_idx", "a_b_cd", "x1y2z"]
    for word in words:
        patterns = shared_trigram_patterns(word, THRESHOLD)
        if patterns is None:
            continue
        grams = [p.strip("%") for p in patterns]
        for name in names:
            if _similarity(word, _char_trigrams(word), name) >= THRESHOLD:
                assert any(g in name.lower() for g in grams), (word, name)


@pytest.fixture
def store(pg_dsn: str, make_repo: Any) -> Any:
    root: Path = make_repo(FILES, name="kinds")
    index_into(pg_dsn, root, repo="acme/kinds@main", overrides=NO_VECTORS)
    with connect(pg_dsn, autocommit=True) as conn:
        yield PostgresSearchStore(conn, Reader())


def test_short_probe_candidates_hold_one_of_its_trigrams(store: PostgresSearchStore) -> None:
    everything = {c.name for c in store.symbol_candidates("type", FILTERS, 50)}
    narrowed = {c.name for c in store.symbol_candidates("type", FILTERS, 50, THRESHOLD)}
    # pg_trgm alone finds names by its padded trigrams too (`  t`, ` ty`).
    assert {"tyre", "tape", "tying"} <= everything
    assert narrowed == {n for n in everything if "typ" in n or "ype" in n}
    # A search over some repositories asks pg_trgm alone (its plan keeps the
    # repository in the index scan); the stream drops the same names.
    scoped = PostgresSearchStore(store.connection, Reader(None, ("acme/kinds@main",)))
    assert {c.name for c in scoped.symbol_candidates("type", FILTERS, 50, THRESHOLD)} == everything
    reaching = {n for n in NAMES if _similarity("type", _char_trigrams("type"), n) >= THRESHOLD}
    assert reaching <= narrowed
    assert {"type", "typed", "types", "subtype", "retype"} <= reaching


def test_the_symbol_stream_ranks_the_same_with_the_narrowed_candidates(
    store: PostgresSearchStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = PostgresSearchStore.symbol_candidates

    def without_threshold(
        self: PostgresSearchStore,
        probe: str,
        filters: SearchFilters,
        limit: int,
        threshold: float | None = None,
    ) -> list[SymbolCandidate]:
        return plain(self, probe, filters, limit)

    for query in ("type", "where is the Type of a value", "typed values", "tempo"):
        analysis = analyze_query(query)
        narrowed = symbol_stream(store, analysis, FILTERS, 300, THRESHOLD)
        with monkeypatch.context() as patched:
            patched.setattr(PostgresSearchStore, "symbol_candidates", without_threshold)
            everything = symbol_stream(store, analysis, FILTERS, 300, THRESHOLD)
        assert narrowed == everything, query
        if query == "type":
            assert narrowed
