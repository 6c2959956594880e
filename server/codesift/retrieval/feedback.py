"""Pseudo-relevance feedback: the words of a search's best first results, added to
its query when it has no vectors.

Without vectors, a question put in other words than the code's finds only what
shares its words. The best chunks of the first pass usually include the right
neighbourhood, and the identifiers they share name what the question describes
(`synchronized`, `lock` for "only once even when several threads ask"). The
`feedback` stream searches the query's terms together with those words, and is
fused with the other streams (RM3-style query expansion: Lavrenko & Croft 2001,
Abdul-Jaleel et al. 2004).

Each word of at least three letters in the first FEEDBACK_DOCS code chunks of the
first pass (their identifiers whole and split into parts), other than the query's
own terms, their variants and stopwords, weighs

    weight(t) = sum over those chunks d of  tf_d(t) / |d| / rank(d)

(|d| the chunk's words counted so, rank 1, 2, 3 in fused order). The CANDIDATES
heaviest are looked up in the index: a word in fewer than two chunks (a typo, a
one-off) or in more than MAX_SHARE of them (`self`, `return`, `err`) is left out,
and the rest weigh weight(t) x log(N / df(t)). The best `terms` of them are added.
The stream's first result is the first pass's best (`keeps_first`): the added words
widen the question, they do not overrule what matched it best. Without that, a long
chunk sharing many of the added words took the first place from the chunk whose
words were the question's.

Without vectors (off, not yet computed, or failed) it runs for every such
question. With vectors, whose streams find many of those other words themselves, it
runs when the lexical stream's best match stands out (`search.feedback_vectors_ratio`
times its second: a chunk that says what the question says, whose words are worth
widening), on an index of at most `search.feedback_vectors_max_chunks` code chunks.
Run for every question, it lowered the dev sets with MiniLM's vectors; on the
standard libraries of dev set 1 (50,000 code chunks and more) it lowered them with
any vectors and cost ~9 ms a search (docs/notes/ranking-rules.md).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Collection, Mapping, Sequence

from codesift.config import SearchSettings
from codesift.retrieval.query import STOPWORDS, QueryAnalysis, with_variants
from codesift.retrieval.streams import lexical_stream
from codesift.store.filters import SearchFilters
from codesift.store.search_store import SearchStore
from codesift.tokens import split_identifier

__all__ = [
    "CANDIDATES",
    "FEEDBACK_DOCS",
    "MAX_SHARE",
    "TermCounter",
    "expanded_analysis",
    "feedback_ranking",
    "feedback_terms",
    "feedback_wanted",
    "keeps_first",
    "vectors_answered",
]

FEEDBACK_DOCS = 3
CANDIDATES = 60
MAX_SHARE = 0.05

_IDENTIFIER = re.compile(r"[A-Za-z][A-Za-z0-9_]*")

# What counts a term's chunks: (chunks in the index, chunks holding each term).
TermCounter = Callable[[Sequence[str]], tuple[int, Mapping[str, int]]]


def _words(text: str) -> dict[str, int]:
    """Lower-case words of `text` with their counts: each identifier whole and its
    parts (`parseHeader` counts `parseheader`, `parse` and `header` once each)."""
    counts: dict[str, int] = {}
    for ident in _IDENTIFIER.findall(text):
        for word in dict.fromkeys((ident.lower(), *split_identifier(ident))):
            counts[word] = counts.get(word, 0) + 1
    return counts


def feedback_terms(
    texts: Sequence[str], query_terms: Collection[str], counts: TermCounter, limit: int
) -> tuple[str, ...]:
    """The `limit` words that best characterise `texts` (the first pass's best
    chunks, best first) beyond `query_terms`, heaviest first (module docstring)."""
    if limit <= 0 or not texts:
        return ()
    known = set(with_variants(tuple(query_terms)))
    weight: dict[str, float] = {}
    for rank, text in enumerate(texts, start=1):
        words = _words(text)
        length = sum(words.values()) or 1
        for word, tf in words.items():
            if len(word) < 3 or not word.isalpha() or word in STOPWORDS or word in known:
                continue
            weight[word] = weight.get(word, 0.0) + tf / length / rank
    heaviest = sorted(weight, key=lambda w: (-weight[w], w))[:CANDIDATES]
    if not heaviest:
        return ()
    total, found = counts(heaviest)
    scored: dict[str, float] = {}
    for word in heaviest:
        df = found.get(word, 0)
        if df < 2 or df > MAX_SHARE * total:
            continue
        scored[word] = weight[word] * math.log(total / df)
    return tuple(sorted(scored, key=lambda w: (-scored[w], w))[:limit])


def keeps_first(ranked: Sequence[tuple[int, float]], first: int) -> list[tuple[int, float]]:
    """The feedback stream's ranking with the first pass's best code chunk `first` at
    its head (with the best score): the added words widen the question, they do not
    overrule what matched it best."""
    if ranked and ranked[0][0] == first:
        return list(ranked)
    best = ranked[0][1] if ranked else 0.0
    return [(first, best), *(r for r in ranked if r[0] != first)]


def expanded_analysis(analysis: QueryAnalysis, added: Sequence[str]) -> QueryAnalysis:
    """`analysis` searching `added` too, as a prose query."""
    return QueryAnalysis(
        text=analysis.text,
        symbol_like=False,
        symbol="",
        symbol_tail="",
        terms=tuple(dict.fromkeys((*analysis.terms, *added))),
        identifiers=(),
    )


def feedback_ranking(
    store: SearchStore,
    first: Sequence[int],
    analysis: QueryAnalysis,
    filters: SearchFilters,
    cap: int,
    settings: SearchSettings,
    added: list[str],
) -> list[tuple[int, float]]:
    """The feedback stream's ranking: the query's terms and the words of the first
    pass's best code chunks (`first`: its fused order) searched by bm25, the best of
    those chunks first (`settings.feedback_keeps_first`). The words added are
    appended to `added` (the stream's report lists them)."""
    rows = store.chunk_rows(first)
    seeds = [c for c in first if c in rows and rows[c].layer == "code"]
    added.extend(
        feedback_terms(
            [rows[c].text for c in seeds[:FEEDBACK_DOCS]],
            analysis.terms,
            functools.partial(store.term_counts, "code"),
            settings.feedback_terms,
        )
    )
    if not added:
        return []
    ranked = lexical_stream(
        store, expanded_analysis(analysis, added), filters, cap, settings.feedback_max_df
    )
    return keeps_first(ranked, seeds[0]) if settings.feedback_keeps_first else ranked


def vectors_answered(rankings: Mapping[str, Sequence[object]]) -> bool:
    """Whether a vector stream found something."""
    return bool(rankings.get("vector") or rankings.get("vector_doc"))


def feedback_wanted(
    term_count: int,
    analysis: QueryAnalysis,
    layers: Collection[str],
    rankings: Mapping[str, Sequence[object]],
    *,
    with_vectors: Callable[[], bool] | None = None,
) -> bool:
    """Whether the feedback stream runs (`term_count` words it may add): for a prose
    query over code (not a pasted line of code, whose own words say where it is),
    when the first pass found something, and when a vector stream did too only if
    `with_vectors()` says so (the lexical best stands out on a small enough index:
    module docstring; asked last, as it may read the store)."""
    return (
        term_count > 0
        and not analysis.symbol_like
        and not analysis.literal
        and "code" in layers
        and any(rankings.values())
        and (not vectors_answered(rankings) or (with_vectors is not None and with_vectors()))
    )
