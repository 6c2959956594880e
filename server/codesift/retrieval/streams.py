"""Retrieval streams: each returns chunk ids ranked best first, with raw scores.

lexical      FTS5 bm25 over code chunks, and ast chunks (signatures) when asked
             for (identifier-split, unstemmed; a plural query word is searched in
             its singular too); raw score is -bm25 (higher is better)
lexical_doc  FTS5 bm25 over markdown sections (porter stemming)
exact        for a pasted line of code or a quoted query, the chunks holding its
             words in its order; raw score 1.0 for those holding it as written
             (spacing aside), 0.5 for the others
path         for a file's name or path, one chunk of each file it names; raw score
             1.0 for the path itself, 0.95 for a longer one ending with it, 0.9
             without case
symbol       trigram similarity of the query's identifiers to definition names;
             raw score in [0, 1], exact names 1.0 (1.5 with the qualified name),
             a little more in the query's case and for a longer definition
vector       cosine kNN over chunk embeddings (sqlite-vec, or the copy a long-running
             process keeps in memory: vector_index.py); raw score 1 - distance

Each stream reads through a `SearchStore` (store/search_store.py; SQLite:
store/sqlite/search.py) and never sees SQL: the store runs the candidate query
and the stream scores and orders what it returns. Filters (languages, path
globs, layers, and git time: as_of / since / until on the chunk's or node's
created and last-changed times) are applied inside the store's query, before
the candidate cap; the vector stream passes the time filter to the KNN as a
chunk-id constraint, so its k nearest all pass it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from codesift.retrieval.locations import Location, path_suffixes
from codesift.retrieval.messages import fills_template, in_string_literal, plain_runs
from codesift.retrieval.query import QueryAnalysis, with_variants
from codesift.store.filters import SearchFilters
from codesift.store.search_store import ResidentVectors, SearchStore

__all__ = [
    "Ranked",
    "StreamFilters",
    "exact_stream",
    "lexical_doc_stream",
    "lexical_stream",
    "path_stream",
    "resident_vector_stream",
    "symbol_stream",
    "vector_stream",
]

Ranked = list[tuple[int, float]]


# The filters every stream applies inside its backend's query (store/filters.py).
StreamFilters = SearchFilters


# Query words are searched in their singular and base forms too (`with_variants`):
# identifiers say `stream`, `load`, `warning` where questions say "streaming",
# "loading", "warnings".
WORD_VARIANTS = True


def _bm25_stream(
    store: SearchStore,
    layer: str,
    analysis: QueryAnalysis,
    filters: StreamFilters,
    cap: int,
    max_df: float = 0.5,
) -> Ranked:
    """The store's text ranking (bm25 in SQLite) over one layer, best first."""
    if not analysis.terms:
        return []
    terms = analysis.terms
    if WORD_VARIANTS and layer != "doc":  # the doc index stems (porter) itself
        terms = with_variants(terms)
    return store.lexical_hits(layer, terms, filters, cap, max_df)


def lexical_stream(
    store: SearchStore,
    analysis: QueryAnalysis,
    filters: StreamFilters,
    cap: int,
    max_df: float = 0.5,
) -> Ranked:
    """bm25 over code chunks and, when asked for, signatures (the ast layer, a
    table of its own); the two rankings merged by score."""
    ranked: Ranked = []
    for layer in ("code", "ast"):
        if layer in filters.layers:
            ranked += _bm25_stream(store, layer, analysis, filters, cap, max_df)
    if "code" in filters.layers and "ast" in filters.layers:
        ranked.sort(key=lambda hit: (-hit[1], hit[0]))
    return ranked[:cap]


# Chunks the exact stream reads back to compare their text with the line (the phrase
# query finds the line's words in order; punctuation and spacing are compared here).
EXACT_VERIFIED = 20


def _squeezed(text: str) -> str:
    return " ".join(text.split())


# The exact stream's raw scores: the line as written, or only its words in its order.
VERBATIM, IN_ORDER = 1.0, 0.5
# ... for a pasted message that a literal's template fills in to.
FILLED = 0.9
# The path stream's score of a trace's frame, by its distance from the innermost.
FRAME_DECAY = 0.95


def exact_stream(
    store: SearchStore, analysis: QueryAnalysis, filters: StreamFilters, cap: int
) -> Ranked:
    """For a pasted line of code or a quoted query (`analysis.verbatim`): the code
    chunks holding its words in its order (raw score IN_ORDER), those holding it
    character for character, spacing aside, first (VERBATIM); each group in the
    store's order. For prose that may be a pasted message (`analysis.phrase`): the
    code chunks holding it as written in a string literal (VERBATIM), else those
    with a template that fills in to it (FILLED), nothing else."""
    if analysis.phrase and not analysis.verbatim:
        return _message_hits(store, analysis.phrase, filters, cap)
    if not analysis.verbatim or "code" not in filters.layers:
        return []
    hits = store.phrase_hits("code", analysis.verbatim, filters, cap)
    if not hits:
        return []
    line = _squeezed(analysis.verbatim)
    rows = store.chunk_rows([cid for cid, _ in hits[:EXACT_VERIFIED]])
    verbatim = {cid for cid, row in rows.items() if line in _squeezed(row.text)}
    ranked = [(cid, VERBATIM if cid in verbatim else IN_ORDER) for cid, _ in hits]
    return sorted(ranked, key=lambda hit: -hit[1])  # stable: the store's order kept


def _message_hits(store: SearchStore, phrase: str, filters: StreamFilters, cap: int) -> Ranked:
    """A pasted message's chunks (messages.py): those whose string literal holds it
    as written (VERBATIM), else those with a template that fills in to it
    (FILLED), found through its longest run of plain words."""
    if "code" not in filters.layers:
        return []
    message = phrase.strip()
    found = _verified(
        store, message, filters, cap, lambda text: VERBATIM * in_string_literal(text, message)
    )
    if found:
        return found
    runs = plain_runs(message)
    if not runs:
        return []
    probe = runs[0].split()
    if len(probe) == len(message.split()):
        # All plain words: a value the program filled in is one of them, at an end.
        probe = probe[:-1]
    if len(probe) < 2:
        return []
    return _verified(
        store, " ".join(probe), filters, cap, lambda text: FILLED * fills_template(text, message)
    )


def _verified(
    store: SearchStore,
    phrase: str,
    filters: StreamFilters,
    cap: int,
    score: Callable[[str], float],
) -> Ranked:
    """Of the first EXACT_VERIFIED code chunks holding `phrase`'s words in order,
    those whose text `score` gives a score above 0, best first (ties in the
    store's order)."""
    hits = store.phrase_hits("code", phrase, filters, cap)[:EXACT_VERIFIED]
    if not hits:
        return []
    rows = store.chunk_rows([cid for cid, _ in hits])
    scored = [(cid, score(rows[cid].text)) for cid, _ in hits if cid in rows]
    return sorted([hit for hit in scored if hit[1] > 0], key=lambda hit: -hit[1])


def path_stream(
    store: SearchStore, analysis: QueryAnalysis, filters: StreamFilters, cap: int
) -> Ranked:
    """For a file's name or path (`analysis.path`): one chunk of each file it names
    (raw scores as `filters.path_hit_order` gives them)."""
    if not analysis.path:
        return []
    if not analysis.frames:
        return store.path_hits(analysis.path, filters, cap)
    # Each frame's chunk, innermost first (a trace's outer frames are its callers),
    # each frame's file by the longest end of its path the index has: a trace's
    # paths are where the program ran.
    ranked: dict[int, float] = {}
    for order, frame in enumerate(analysis.frames):
        hits = _frame_hits(store, frame, filters, cap)
        # the innermost frame's every file of that path, the others' best
        for chunk_id, score in hits if order == 0 else hits[:1]:
            ranked.setdefault(chunk_id, score * FRAME_DECAY**order)
    return sorted(ranked.items(), key=lambda hit: -hit[1])


def _frame_hits(store: SearchStore, frame: Location, filters: StreamFilters, cap: int) -> Ranked:
    """The chunk holding a frame's line in each file of the longest end of its path
    the index has. The file name is looked up first: a frame outside the
    workspace (a library's) costs one lookup, and longer ends only when several
    files have that name."""
    suffixes = path_suffixes(frame.path)
    hits = store.path_hits(suffixes[-1], filters, cap, frame.line) if suffixes else []
    if len(hits) <= 1:
        return hits
    for suffix in suffixes[:-1]:
        longer = store.path_hits(suffix, filters, cap, frame.line)
        if longer:
            return longer
    return hits


def lexical_doc_stream(
    store: SearchStore, analysis: QueryAnalysis, filters: StreamFilters, cap: int
) -> Ranked:
    if "doc" not in filters.layers:
        return []
    return _bm25_stream(store, "doc", analysis, filters, cap)


CharTrigrams = set[tuple[str, str, str]]


def _char_trigrams(text: str) -> CharTrigrams:
    """The trigrams of `text` as character triples (built in C by zip: ~40% faster
    than slicing, and the symbol stream builds one set per candidate name)."""
    return set(zip(text, text[1:], text[2:], strict=False))


def _similarity(query: str, query_trigrams: CharTrigrams, name: str) -> float:
    """Jaccard similarity of trigram sets; 1.0 for the same name in any case.
    `query` is lower-case and `query_trigrams` its `_char_trigrams`."""
    n = name.lower()
    if query == n:
        return 1.0
    nt = _char_trigrams(n)
    if not query_trigrams or not nt:
        return 0.0
    shared = len(query_trigrams & nt)
    return shared / (len(query_trigrams) + len(nt) - shared)


# Name candidates asked of the store per probe (besides the exact names).
NAME_CANDIDATES = 400


# Separators of qualified names: `::` (Rust, C++, Ruby, PHP methods), Ruby's instance
# `#`, `->`, and PHP's namespace `\`, all read as `.`.
_QUALIFIER = re.compile(r"::|#|->|\\")
# At most this much more for an exact name match with a long body (256 lines or more)
# than for a one-liner: below EXACT_CASE_BONUS, so case decides first.
SPAN_BONUS = 0.04
# Added to an exact name match (1.0, or 1.5 when the qualified name matches too) whose
# case is the query's: small, so it only orders names that differ in case.
EXACT_CASE_BONUS = 0.1


def symbol_stream(
    store: SearchStore,
    analysis: QueryAnalysis,
    filters: StreamFilters,
    cap: int,
    threshold: float = 0.3,
) -> Ranked:
    """Definitions whose names match the query's identifiers, as chunks of the
    first requested layer among code, ast and summary."""
    wanted_layers = [layer for layer in ("code", "ast", "summary") if layer in filters.layers]
    if not wanted_layers:
        return []
    if analysis.symbol_like:
        probes = [analysis.symbol_tail]
    else:
        probes = [word for word in analysis.identifiers if len(word) >= 3]
    if not probes:
        return []
    qualified = _QUALIFIER.sub(".", analysis.symbol).lower() if analysis.symbol_like else ""
    scores: dict[int, float] = {}
    for probe in probes:
        candidates = store.symbol_candidates(probe, filters, NAME_CANDIDATES, threshold)
        if not candidates:
            continue
        scorer = _NameScorer(probe, qualified, analysis.symbol_like)
        for node_id, name, qname, kind, start, end in candidates:
            score = scorer.similarity(name)
            if score < threshold:
                continue
            score = scorer.adjusted(score, name, qname, kind, end - start + 1)
            if score > scores.get(node_id, 0.0):
                scores[node_id] = score
    if not scores:
        return []
    if analysis.declaration:
        _prefer_repeated_signatures(store, analysis.text, scores)
    ranked_nodes = sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:cap]
    chunk_of = store.chunks_for_nodes([n for n, _ in ranked_nodes], wanted_layers)
    return [(chunk_of[n], s) for n, s in ranked_nodes if n in chunk_of]


# Added, times the share of words they have in common, to an exact name match whose
# signature the query repeats: above the name's case (0.1), the file named after it
# (0.06) and the body's length (0.04), since a declaration copied from the code says
# which of the definitions of its name it is (`__init__(self, value)` among fifty).
SIGNATURE_BONUS = 0.3
# A signature is compared with the query on its first lines only (a declaration is
# copied from where it starts).
_SIGNATURE_CHARS = 400
_SIGNATURE_WORD = re.compile(r"[A-Za-z_$][\w$]*|\d+")


def _prefer_repeated_signatures(store: SearchStore, query: str, scores: dict[int, float]) -> None:
    """Lift each exact name match in `scores` by how much its signature shares the
    query's words (Jaccard similarity of the two word sets, case as written)."""
    exact = [node_id for node_id, score in scores.items() if score >= 1.0]
    if not exact:
        return
    wanted = set(_SIGNATURE_WORD.findall(query))
    for node_id, row in store.node_rows(exact).items():
        words = set(_SIGNATURE_WORD.findall(row.signature[:_SIGNATURE_CHARS]))
        union = len(wanted | words)
        if union:
            scores[node_id] += SIGNATURE_BONUS * len(wanted & words) / union


class _NameScorer:
    """How well a definition's name answers one probe of the symbol stream."""

    def __init__(self, probe: str, qualified: str, symbol_like: bool) -> None:
        self.probe = probe
        self.lowered = probe.lower()
        self.trigrams = _char_trigrams(self.lowered)
        # The query's qualified name (`pool.imap_unordered`), "" when it names none.
        self.qualified = qualified
        self.symbol_like = symbol_like

    def similarity(self, name: str) -> float:
        return _similarity(self.lowered, self.trigrams, name)

    def adjusted(self, score: float, name: str, qname: str, kind: str, span: int) -> float:
        """`score` (the name's similarity) with the qualified name, the case, the
        body's length (`span` lines) and the kind taken into account."""
        qualified = self.qualified
        if qualified and score == 1.0:
            # `Pool.imap_unordered`: the qualified name must end with what was typed.
            normalized = _QUALIFIER.sub(".", qname).lower()
            if normalized == qualified or normalized.endswith("." + qualified):
                score = 1.5
            elif "." in qualified:
                score = 0.9
        if score >= 1.0 and name == self.probe:
            # The name as typed beats a look-alike in another case: `ParseInt`
            # is Go's exported strconv.ParseInt, not one of many `parseInt`s.
            score += EXACT_CASE_BONUS
        if score >= 1.0:
            # Among definitions of the same name, the one with a body beats a
            # one-line alias, forward declaration, stub or extension shim.
            lines = max(1, span)
            score += SPAN_BONUS * min(1.0, math.log2(1 + lines) / 8)
        if kind == "module" and not self.symbol_like:
            score *= 0.5
        return score


def vector_stream(
    store: SearchStore,
    query_vector: bytes,
    filters: StreamFilters,
    cap: int,
) -> Ranked:
    """Nearest chunks to an int8 query vector, among the requested layers.

    Layer filtering happens inside the KNN (a metadata column), and so does the
    time filter (a chunk-id constraint: sqlite-vec scores only those chunks);
    language and path filters, and vectors made stale by an edit, are removed
    afterwards from a larger k so the cap still fills.
    """
    layers, k = _knn_plan(filters, cap)
    if not layers:
        return []
    hits = store.nearest_chunks(query_vector, layers, k, filters)
    return _current_hits(store, hits, filters, cap)


def resident_vector_stream(
    store: SearchStore,
    index: ResidentVectors,
    query: npt.NDArray[np.float32],
    filters: StreamFilters,
    cap: int,
) -> Ranked:
    """`vector_stream` over the vectors held in memory (retrieval/vector_index.py):
    the same filters and the same checks, a float32 query."""
    layers, k = _knn_plan(filters, cap)
    if not layers:
        return []
    hits = store.resident_nearest(index, query, layers, k, filters)
    return _current_hits(store, hits, filters, cap)


def _knn_plan(filters: StreamFilters, cap: int) -> tuple[list[str], int]:
    """What a kNN asks for: the requested layers that have vectors, and k, larger
    when language or path filters will drop hits afterwards."""
    layers = [layer for layer in filters.layers if layer in ("code", "summary", "doc")]
    k = min(4096, cap * (3 if filters.on_files else 1) + 50)
    return layers, k


def _current_hits(
    store: SearchStore, hits: list[tuple[int, float]], filters: StreamFilters, cap: int
) -> Ranked:
    """Hits whose chunk still has the text its vector came from and passes the
    language and path filters, best first, at most `cap`."""
    if not hits:
        return []
    score = dict(hits)
    ids = list(score)
    kept = store.current_chunks(ids, filters)
    ranked = [(cid, score[cid]) for cid in ids if cid in kept]
    ranked.sort(key=lambda item: (-item[1], item[0]))
    return ranked[:cap]
