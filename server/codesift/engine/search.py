"""Search pages: one folder's page as the Searcher made it, several folders merged once.

A single index's page is retrieval/search.py's (`Searcher`): fused, ranked,
diversified across files and fitted to the token budget there. It is passed on
as it is: re-sorting it by score would undo the file diversity.

A multi-root workspace (the language server) merges its folders' pages here,
once: each folder's order is kept (the page heads are compared by score, so a
folder's diversified order survives the merge), the union is cut to top_k and
fitted to the budget. When the router ranked the folders, each page has a
weight (`weights`, engine/unscoped.py, page_weights) and its heads compete at
their score times its weight: one folder's scores are not another's (each fuses
its own streams over its own index), and the router says which folder the
question is about. A page the router did not rank weighs ROUTE_DECAY times the
lightest it did. The score a merged result shows is the weighted one, so a
merged page is in score order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from codesift.retrieval.request import SearchRequest, SearchResponse, SearchResult, StreamReport
from codesift.retrieval.search import RESULT_OVERHEAD_TOKENS
from codesift.retrieval.snippets import estimate_tokens

__all__ = ["ROUTE_DECAY", "FolderPage", "MergedPage", "merge_pages"]

# A folder the router did not rank (or ranked without a graded score) counts this
# much less than the one before it (engine/unscoped.py).
ROUTE_DECAY = 0.8


@dataclass(frozen=True, slots=True)
class FolderPage:
    """One folder's answer: its name and the Searcher's response."""

    folder: str
    response: SearchResponse


@dataclass(frozen=True, slots=True)
class MergedPage:
    results: tuple[tuple[str, SearchResult], ...]  # (folder, result) in page order
    streams: tuple[tuple[str, StreamReport], ...] = ()
    tokens: int = 0
    truncated_by_budget: bool = False
    stages: dict[str, float] = field(default_factory=dict)


def merge_pages(
    request: SearchRequest,
    pages: Sequence[FolderPage],
    weights: Mapping[str, float] | None = None,
) -> MergedPage:
    """The page over several folders (see the module docstring); one folder's page
    comes back unchanged. `weights`: each page's weight by folder name, from the
    router (None or empty: scores alone)."""
    streams = tuple((p.folder, s) for p in pages for s in p.response.streams)
    if len(pages) == 1:
        only = pages[0]
        return MergedPage(
            results=tuple((only.folder, r) for r in only.response.results),
            streams=streams,
            tokens=only.response.tokens,
            truncated_by_budget=only.response.truncated_by_budget,
            stages=dict(only.response.stages),
        )
    truncated = any(p.response.truncated_by_budget for p in pages)
    unranked = min(weights.values()) * ROUTE_DECAY if weights else 1.0
    weight = [(weights or {}).get(p.folder, unranked) for p in pages]
    heads = [0] * len(pages)
    merged: list[tuple[str, SearchResult]] = []
    tokens = 0
    while len(merged) < request.top_k:
        best = -1
        for i, page in enumerate(pages):
            results = page.response.results
            if heads[i] < len(results) and (
                best < 0
                or results[heads[i]].score * weight[i]
                > pages[best].response.results[heads[best]].score * weight[best]
            ):
                best = i
        if best < 0:
            break
        result = pages[best].response.results[heads[best]]
        heads[best] += 1
        cost = RESULT_OVERHEAD_TOKENS + estimate_tokens(result.snippet)
        if request.max_tokens is not None and tokens + cost > request.max_tokens:
            truncated = True
            break
        tokens += cost
        if weight[best] != 1.0:  # the score shown is the one the page is ordered by
            result = replace(result, score=result.score * weight[best])
        merged.append((pages[best].folder, result))
    return MergedPage(tuple(merged), streams, tokens, truncated)
