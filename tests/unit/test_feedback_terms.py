"""Pseudo-relevance feedback's choice of words (retrieval/feedback.py), on plain data."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from codesift.retrieval.feedback import (
    MAX_SHARE,
    TermCounter,
    expanded_analysis,
    feedback_terms,
    keeps_first,
)
from codesift.retrieval.query import analyze_query

TOTAL = 1000


def counter(df: Mapping[str, int]) -> tuple[TermCounter, list[str]]:
    """Counts from `df` over TOTAL chunks, and the terms it was asked for."""
    asked: list[str] = []

    def counts(terms: Sequence[str]) -> tuple[int, Mapping[str, int]]:
        asked.extend(terms)
        return TOTAL, {t: df.get(t, 0) for t in terms}

    return counts, asked


def test_words_frequent_in_the_first_results_and_rare_in_the_index_are_added() -> None:
    texts = [
        "def get_instance(self):\n    with self.creation_lock:\n        return self.build_once()",
        "class CreationLock:\n    def acquire(self): self.creation_lock.acquire()",
    ]
    common = {"self": 900, "get": 400}  # in more than MAX_SHARE of the chunks
    assert min(common.values()) > MAX_SHARE * TOTAL
    df = {"creation": 4, "lock": 30, "acquire": 12, "build": 80, **common}
    counts, _ = counter(df)
    added = feedback_terms(texts, ("instance", "once"), counts, 3)
    assert added[0] == "creation"
    assert set(added) <= {"creation", "lock", "acquire", "creationlock", "build"}
    assert "self" not in added and "get" not in added


def test_query_words_their_variants_stopwords_and_short_words_are_not_added() -> None:
    texts = ["def load_handlers(handlers): return [h for h in handlers if h.ok]"]
    df = {"load": 5, "handler": 5, "handlers": 5, "def": 700, "return": 800, "for": 5}
    counts, asked = counter(df)
    added = feedback_terms(texts, ("handlers",), counts, 5)
    # `handler` is the singular the query already searches; `h`, `ok` are too short,
    # `for` and `if` are stopwords, `load_handlers` whole is no plain word.
    assert sorted(asked) == ["def", "load", "return"]
    # A language's keywords go by their share of the chunks.
    assert added == ("load",)


def test_a_word_in_fewer_than_two_chunks_is_not_added() -> None:
    texts = ["def frobnicate_widget(): widget_registry.clear()"]
    counts, _ = counter({"frobnicate": 1, "widget": 6, "registry": 9, "clear": 20})
    added = feedback_terms(texts, ("reset",), counts, 5)
    assert "frobnicate" not in added
    assert added[0] == "widget"


def test_a_word_of_the_best_result_outweighs_the_same_word_further_down() -> None:
    first, third = "alpha_engine()", "omega_engine()"
    filler = "unrelated_text()"
    counts, _ = counter({"alpha": 10, "omega": 10, "engine": 10, "unrelated": 10, "text": 10})
    added = feedback_terms([first, filler, third], ("run",), counts, 5)
    assert added.index("alpha") < added.index("omega")


def test_nothing_is_added_without_texts_or_room() -> None:
    counts, asked = counter({})
    assert feedback_terms([], ("x",), counts, 5) == ()
    assert feedback_terms(["widget_registry()"], ("x",), counts, 0) == ()
    assert asked == []


def test_the_expanded_query_keeps_its_terms_and_adds_the_new_ones_once() -> None:
    analysis = analyze_query("only one instance when several threads ask")
    expanded = expanded_analysis(analysis, ["lock", "instance", "synchronized"])
    assert expanded.terms[: len(analysis.terms)] == analysis.terms
    assert expanded.terms.count("instance") == 1
    assert expanded.terms[-2:] == ("lock", "synchronized")
    assert not expanded.symbol_like


def test_the_first_pass_best_result_leads_the_feedback_ranking() -> None:
    ranked = [(7, 9.0), (3, 4.0), (5, 2.0)]
    assert keeps_first(ranked, 3) == [(3, 9.0), (7, 9.0), (5, 2.0)]
    assert keeps_first(ranked, 7) == ranked
    # Not found by the feedback's words: it still comes first.
    assert keeps_first(ranked, 11) == [(11, 9.0), *ranked]
    assert keeps_first([], 11) == [(11, 0.0)]
