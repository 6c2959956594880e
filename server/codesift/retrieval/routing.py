"""Source routing: which repositories (and which document collections) a question is
about, when it names none. Pure functions on plain data.

Each source is described by a profile: a few named fields of lower-case text (a
repository's name and remote, its branch, the start of its README, its module-level
names and file paths; a collection's name, description, labels, headings and text).
A query term matches a source when it occurs as a substring of any field, so `retry`
hits inside `billing.retry_policy`. Each pool (repositories, collections) is scored
on its own:

    idf(term)          = log((N + 1) / (df(term) + 1)) if df(term) >= 1, else 0
    weighted_coverage  = sum(idf(matched terms)) / sum(idf(query terms))
    label_boost        = 1 + 0.5 * (matched label terms / query terms)
    score              = min(1, weighted_coverage * label_boost)

where N is the number of sources in the pool and df(term) the number of them the term
matches. A term that matches no source contributes nothing (a typo must not sink every
source); one that matches every source weighs nothing either.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from codesift.retrieval.query import analyze_query, singulars

__all__ = [
    "RouteMatch",
    "SourceProfile",
    "route_terms",
    "score_pool",
]


@dataclass(frozen=True, slots=True)
class SourceProfile:
    """What routing knows of one source. `fields` are (name, lower-case text) pairs."""

    name: str
    kind: str  # "repository" or "collection"
    fields: tuple[tuple[str, str], ...]
    labels: tuple[str, ...] = ()  # lower-case


@dataclass(frozen=True, slots=True)
class RouteMatch:
    name: str
    kind: str
    confidence: float  # the score, in [0, 1]
    rationale: str  # one line: which terms matched where
    matched: tuple[str, ...]  # the query terms that matched, in query order


def route_terms(query: str) -> tuple[str, ...]:
    """The query's words worth routing on: its search terms (stopwords removed,
    identifiers split into their parts too), at least two characters long."""
    return tuple(t for t in analyze_query(query).terms if len(t) >= 2)


def _forms(term: str) -> tuple[str, ...]:
    # A plural query word matches its singular too (`retries` in `retry_policy`).
    return (term, *singulars(term))


def _fields_hit(term: str, profile: SourceProfile) -> list[str]:
    forms = _forms(term)
    return [name for name, text in profile.fields if any(f in text for f in forms)]


def _label_hit(term: str, labels: Iterable[str]) -> bool:
    forms = _forms(term)
    return any(f in label for label in labels for f in forms)


def _rationale(hits: dict[str, list[str]], label_terms: Sequence[str], score: float) -> str:
    if not hits:
        return "weak: no query term matched"
    parts = [f"{term} ({', '.join(fields)})" for term, fields in hits.items()]
    text = "matched " + "; ".join(parts)
    if label_terms:
        text += "; labels: " + ", ".join(label_terms)
    if score == 0.0:
        text = "weak: " + text + " (terms every source has)"
    return text


def score_pool(
    terms: Sequence[str],
    profiles: Sequence[SourceProfile],
    limit: int,
    *,
    keep_unmatched: bool,
) -> list[RouteMatch]:
    """Score one pool of sources for `terms` (see the module docstring) and return
    its best `limit`, best first (ties on name). Sources no term matched are
    dropped unless `keep_unmatched` (collections: always listed, marked weak)."""
    if limit <= 0 or not profiles:
        return []
    unique = list(dict.fromkeys(terms))
    hits = [{t: _fields_hit(t, p) for t in unique} for p in profiles]
    df = {t: sum(1 for h in hits if h[t]) for t in unique}
    n = len(profiles)
    idf = {t: math.log((n + 1) / (df[t] + 1)) if df[t] >= 1 else 0.0 for t in unique}
    total = sum(idf.values())
    out: list[RouteMatch] = []
    for profile, found in zip(profiles, hits, strict=True):
        matched = [t for t in unique if found[t]]
        if not matched and not keep_unmatched:
            continue
        coverage = sum(idf[t] for t in matched) / total if total > 0 else 0.0
        label_terms = [t for t in unique if _label_hit(t, profile.labels)]
        boost = 1.0 + 0.5 * (len(label_terms) / len(unique)) if unique else 1.0
        score = min(1.0, coverage * boost)
        rationale = _rationale({t: found[t] for t in matched}, label_terms, score)
        out.append(RouteMatch(profile.name, profile.kind, score, rationale, tuple(matched)))
    out.sort(key=lambda m: (-m.confidence, m.name))
    return out[:limit]
