"""Reciprocal Rank Fusion and collapsing a node's layers into one result.

Pure functions over plain data: no database.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter

__all__ = ["FusedCandidate", "Hit", "close_match_weight", "collapse_by_node", "fuse_rankings"]

# A stream's finding of a candidate: (stream, rank (1-based), raw score); a result's
# provenance lists them as StreamHit. Plain tuples here: a search makes hundreds.
Hit = tuple[str, int, float]


@dataclass(slots=True)
class FusedCandidate:
    chunk_id: int
    score: float
    hits: list[Hit] = field(default_factory=list)


def close_match_weight(
    similarity: float, span: tuple[float, float], weight: float, close_weight: float
) -> float:
    """A vector stream's fusion weight given its best match's similarity: `weight`
    at or below the low end of `span`, `close_weight` at or above its high end,
    linear in between. A stream switched off (`weight` 0) stays off.

    How close the best match is says how much the stream knows about the query: a
    MiniLM cosine of 0.65 is a passage that says what the question asks; at 0.45 the
    nearest chunks only share its topic, and the lexical stream's exact words are the
    better guide."""
    if weight <= 0.0:
        return 0.0
    low, high = span
    if high <= low:
        return close_weight if similarity >= high else weight
    share = min(1.0, max(0.0, (similarity - low) / (high - low)))
    return weight + (close_weight - weight) * share


def fuse_rankings(
    rankings: Mapping[str, Sequence[tuple[int, float]]],
    weights: Mapping[str, float] | None = None,
    rrf_k: int = 60,
    limit: int | None = None,
) -> list[FusedCandidate]:
    """Fuse ranked lists of (chunk_id, raw_score), best first, into one list.

    score(chunk) = sum over streams s that ranked it of weight_s / (rrf_k + rank_s),
    rank 1-based. A chunk listed twice by one stream counts at its best rank.
    Ties break on chunk id so the order is deterministic. With `limit`, only the
    best `limit` candidates are returned (their provenance is built for them alone).
    """
    scores: dict[int, float] = {}
    firsts: list[tuple[str, dict[int, tuple[int, float]]]] = []
    for stream, ranked in rankings.items():
        weight = 1.0 if weights is None else weights.get(stream, 1.0)
        first: dict[int, tuple[int, float]] = {}
        for rank, (chunk_id, raw) in enumerate(ranked, start=1):
            if chunk_id not in first:
                first[chunk_id] = (rank, raw)
                scores[chunk_id] = scores.get(chunk_id, 0.0) + weight / (rrf_k + rank)
        firsts.append((stream, first))
    # Plain tuples sort in C, without a key function call per candidate.
    order = sorted([(-score, chunk_id) for chunk_id, score in scores.items()])
    if limit is not None:
        order = order[:limit]
    return [
        FusedCandidate(
            chunk_id,
            -negative,
            [(stream, *first[chunk_id]) for stream, first in firsts if chunk_id in first],
        )
        for negative, chunk_id in order
    ]


_RANK = itemgetter(1)


def collapse_by_node(
    candidates: Sequence[FusedCandidate],
    node_of: Mapping[int, int | None],
    layer_of: Mapping[int, str],
    preferred_layers: Sequence[str] = ("code", "doc", "summary", "ast"),
) -> list[FusedCandidate]:
    """Merge the chunks of one node (its code, summary and ast layers) into one result.

    The merged score is the best chunk's score; provenance keeps every stream hit
    (the best rank per stream). The chunk shown is the best-ranked one, except
    that a code chunk of the node is preferred over its summary or ast when the
    node's code chunk is among the candidates.
    """
    groups: dict[tuple[str, int | None], list[FusedCandidate]] = {}
    order: list[tuple[str, int | None]] = []
    for cand in candidates:
        node = node_of.get(cand.chunk_id)
        key: tuple[str, int | None] = (
            ("node", node) if node is not None else ("chunk", cand.chunk_id)
        )
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(cand)
    rank_of_layer = {layer: i for i, layer in enumerate(preferred_layers)}
    out: list[FusedCandidate] = []
    for key in order:
        members = groups[key]
        best = members[0]
        if key[0] == "node" and len(members) > 1:
            shown = min(
                members,
                key=lambda c: (
                    rank_of_layer.get(layer_of.get(c.chunk_id, ""), 99),
                    -c.score,
                    c.chunk_id,
                ),
            )
        else:
            shown = best
        if len(members) == 1:
            out.append(FusedCandidate(shown.chunk_id, best.score, sorted(best.hits, key=_RANK)))
            continue
        hits: dict[str, Hit] = {}
        for member in members:
            for hit in member.hits:
                current = hits.get(hit[0])
                if current is None or hit[1] < current[1]:
                    hits[hit[0]] = hit
        out.append(FusedCandidate(shown.chunk_id, best.score, sorted(hits.values(), key=_RANK)))
    out.sort(key=lambda c: (-c.score, c.chunk_id))
    return out
