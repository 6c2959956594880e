"""The order of a search's page, from its fused candidates: the code-aware ranking
priors, file evidence (standing aside for a dominant lexical match), one result per
definition, then file diversity (retrieval/ranking.py has each rule; this applies
them in turn, as the search settings say)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from codesift.config import SearchSettings
from codesift.retrieval.fusion import FusedCandidate, collapse_by_node
from codesift.retrieval.query import QueryAnalysis
from codesift.retrieval.ranking import (
    ChunkFeatures,
    RankingPriors,
    apply_priors,
    diversify_files,
    diversity_keys,
    file_evidence,
    header_twins,
    is_test_like_name,
    lexical_dominates,
)
from codesift.retrieval.streams import Ranked
from codesift.store.search_store import ChunkPlace

__all__ = ["order_page"]

# Chunk id -> (node id, layer).
ChunkMeta = dict[int, tuple[int | None, str]]


def _features(
    wide: Sequence[FusedCandidate], places: Sequence[ChunkPlace], rankings: Mapping[str, Ranked]
) -> dict[int, ChunkFeatures]:
    """What the priors read of each candidate that exists."""
    by_id = {p.chunk_id: p for p in places}
    twins = header_twins([(p.chunk_id, p.path, p.name) for p in places])
    symbol_score: dict[int, float] = {}  # as its provenance says: the first listing
    for cid, raw in rankings.get("symbol", ()):
        symbol_score.setdefault(cid, raw)
    exact = dict(rankings.get("exact", ()))
    named_path = dict(rankings.get("path", ()))
    features: dict[int, ChunkFeatures] = {}
    for cand in wide:
        place = by_id.get(cand.chunk_id)
        if place is None:
            continue
        features[cand.chunk_id] = ChunkFeatures(
            place.path,
            symbol_score.get(cand.chunk_id, 0.0),
            place.language,
            window=place.layer == "code" and place.node_id is None,
            generated=place.generated,
            header_twin=cand.chunk_id in twins,
            test_name=is_test_like_name(place.name, place.language),
            exact=exact.get(cand.chunk_id, 0.0),
            named_path=named_path.get(cand.chunk_id, 0.0),
        )
    return features


def order_page(
    wide: list[FusedCandidate],
    places: Sequence[ChunkPlace],
    rankings: Mapping[str, Ranked],
    analysis: QueryAnalysis,
    settings: SearchSettings,
    *,
    top_k: int,
    whole_pool: bool,
) -> tuple[list[FusedCandidate], ChunkMeta]:
    """The page's candidates in order (`top_k` of them, or the whole diversified pool
    with `whole_pool`, for a rerank stage), and each place's (node id, layer)."""
    meta: ChunkMeta = {p.chunk_id: (p.node_id, p.layer) for p in places}
    path_of = {p.chunk_id: p.path for p in places}
    language_of = {p.chunk_id: p.language for p in places}
    priors = RankingPriors(
        definition=settings.prior_definition,
        tests=settings.prior_tests,
        path=settings.prior_path,
        path_short=settings.prior_path_short,
        headers=settings.prior_headers,
    )
    rescored = apply_priors(wide, _features(wide, places, rankings), analysis, priors)
    # A dominant lexical match, or a literal query (a pasted line, a quoted text or a
    # file's name: one place holds it, however many others share its words): file
    # evidence stands aside.
    dominant = analysis.literal or lexical_dominates(
        rankings.get("lexical", []), settings.file_evidence_yield
    )
    rescored = file_evidence(
        rescored,
        path_of,
        0.0 if dominant else settings.file_evidence,
        # A symbol query's evidence is what the streams found, not the definition lift.
        evidence=wide if analysis.symbol_like else None,
    )
    pool = rescored[: max(top_k * 5, 50)]
    collapsed = collapse_by_node(
        pool,
        {cid: m[0] for cid, m in meta.items()},
        {cid: m[1] for cid, m in meta.items()},
    )
    shown = len(collapsed) if whole_pool else top_k
    ordered = diversify_files(
        collapsed, diversity_keys(path_of, language_of), settings.file_diversity, shown
    )
    return ordered, meta
