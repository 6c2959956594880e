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

A repository whose index is at hand brings more evidence (RouteEvidence, read from
its full-text index): how many of its chunks use each query term. A term also
matches a repository's `vocabulary` when the share of its chunks using the term is
at least the pool's share (chunks using it over all chunks): the term is
characteristic of it, not merely present somewhere. The formula above, over these
fields, stays the confidence.

The order of such a pool is graded (the formula counts a term once, however much a
repository uses it):

  1. a query-likelihood score per repository, with Dirichlet smoothing
     (MU_CHUNKS) toward the pool's term shares and a size prior (SIZE_PRIOR x log
     of the chunk count), averaged over the query terms:
         lm = (SIZE_PRIOR log n
               + sum_t [log((c_t + MU_CHUNKS p_t) / (n + MU_CHUNKS)) - log p_t]) / |terms|
     with c_t its chunks using term t, n its chunks, p_t the pool's share;
  2. a semantic score per repository, when its index has chunk vectors: the mean
     of the query's best TOPIC_TOP cosines to its topic centroids (the static
     embedding of the query against codesift.store.route_centroids; a repository
     without vectors gets the pool's mean). When the query has a MiniLM embedding
     and every repository with vectors has MiniLM's (RouteNeighbours), the score
     is that query's centroid score plus the mean cosine of its NEIGHBOURS nearest
     chunk vectors, less NEIGHBOUR_SIZE_PENALTY x log of its chunk count (the
     nearest of more vectors are closer to any question), weighted
     NEIGHBOUR_WEIGHT and NEIGHBOUR_PROBE_WEIGHT below instead of SEMANTIC_WEIGHT
     and SEMANTIC_PROBE_WEIGHT;
  3. the PROBED best repositories by z(lm) + CONFIDENCE_WEIGHT z(confidence) +
     SEMANTIC_PROBE_WEIGHT z(semantic) (z: standardised over the pool) are probed: their
     index's best chunks for the query (bm25; chunks holding only terms more than
     COMMON_CHUNKS of that index's chunks use are no candidates), each scored by
     the global idf of the query terms it holds together, log((C + 1) / (c_t + 1))
     over all the pool's C chunks, as a share of the query's; the probe score is
     the mean of the best PROBE_TOP;
  4. the probed ones are ordered by z(lm) + PROBE_WEIGHT z(probe) +
     SEMANTIC_WEIGHT z(semantic) (standardised among them), then the rest by
     step 3's key.

Terms used together in one chunk are what tells a repository about the question
from one that merely has the words somewhere; the topics catch a question put in
other words than the code's. bench/route_quality.py measures it.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np
import numpy.typing as npt

from codesift.retrieval.query import analyze_query, singulars

__all__ = [
    "COMMON_CHUNKS",
    "CONFIDENCE_WEIGHT",
    "MU_CHUNKS",
    "NEIGHBOUR_PROBE_WEIGHT",
    "NEIGHBOUR_SIZE_PENALTY",
    "NEIGHBOUR_WEIGHT",
    "PROBED",
    "PROBE_TOP",
    "PROBE_WEIGHT",
    "SEMANTIC_PROBE_WEIGHT",
    "SEMANTIC_WEIGHT",
    "SIZE_PRIOR",
    "TOPIC_TOP",
    "RouteEvidence",
    "RouteMatch",
    "RouteNeighbours",
    "RouteTopics",
    "SemanticEvidence",
    "SourceProfile",
    "minilm_pool",
    "neighbour_semantic",
    "route_terms",
    "score_pool",
    "semantic_scores",
    "term_forms",
]

# The graded order of a pool with index evidence (see the module docstring); set
# on half of the dev-set queries, checked on the other half (bench/route_quality.py).
MU_CHUNKS = 100.0
SIZE_PRIOR = 0.5
CONFIDENCE_WEIGHT = 0.5
PROBED = 15
PROBE_TOP = 2
PROBE_WEIGHT = 4.0
SEMANTIC_WEIGHT = 1.0
SEMANTIC_PROBE_WEIGHT = 2.0  # its weight in choosing the repositories probed
# The semantic score with MiniLM's nearest chunks in it says more: weighted so, set on
# half 0 (top-3 0.888 -> 0.907), checked on half 1 (0.896 -> 0.925; bench/route_quality.py).
NEIGHBOUR_WEIGHT = 3.0
NEIGHBOUR_PROBE_WEIGHT = 3.0
# The best cosines among more vectors are higher for any question (over the dev-set
# queries a corpus's mean neighbour score for questions about other corpora rises
# from 0.24 at 500 chunks to 0.46 at 120,000): the neighbour score is lowered by
# this much per unit of log(chunks) before it is standardised. Set on half 0
# (0.01 / 0.015 / 0.02: top-3 0.910 / 0.912 / 0.910, from 0.907), checked on half 1
# (0.925 -> 0.928; top-1 0.710 -> 0.728; bench/route_quality.py --vectors-prefix
# msf --query-model minilm).
NEIGHBOUR_SIZE_PENALTY = 0.015
TOPIC_TOP = 3
# A term more chunks than this use in one index does not make a chunk of it a
# probe candidate on its own (it still counts in the chunks found): scoring every
# chunk of a large index that holds it is what makes a probe slow.
COMMON_CHUNKS = 2000


@dataclass(frozen=True, slots=True)
class SourceProfile:
    """What routing knows of one source. `fields` are (name, lower-case text) pairs;
    `chunks` is the number of chunks its index holds (0: unknown)."""

    name: str
    kind: str  # "repository" or "collection"
    fields: tuple[tuple[str, str], ...]
    labels: tuple[str, ...] = ()  # lower-case
    chunks: int = 0


@dataclass(frozen=True, slots=True)
class RouteMatch:
    name: str
    kind: str
    confidence: float  # the score, in [0, 1]
    rationale: str  # one line: which terms matched where
    matched: tuple[str, ...]  # the query terms that matched, in query order
    # Its score in the graded order (step 4 of the module docstring: a sum of
    # z-scores among the probed); None when it was not probed or the pool has no
    # graded order.
    grade: float | None = None


class RouteEvidence(Protocol):
    """A source's full-text index, as routing reads it (codesift.store.route_profile).
    Both take each query term with the forms to look it up under."""

    def term_chunks(self, forms: Mapping[str, Sequence[str]]) -> Mapping[str, int]:
        """Chunks using each term (terms none uses may be left out)."""
        ...

    def probe(
        self, forms: Mapping[str, Sequence[str]], common: frozenset[str] = frozenset()
    ) -> Sequence[frozenset[str]]:
        """The index's best chunks for the terms, each as the set of terms it holds;
        a chunk holding `common` terms only need not be a candidate."""
        ...


class RouteTopics(Protocol):
    """Optional, beside RouteEvidence: a source's topic centroids (unit vectors in
    the static embedding model's space; codesift.store.route_centroids), None
    when its index holds no vectors. A source whose evidence lacks the method is
    scored as one without vectors."""

    def topics(self) -> npt.NDArray[np.float32] | None: ...


class RouteNeighbours(Protocol):
    """Optional, beside RouteEvidence: whether the source's vectors are MiniLM's,
    and the mean cosine of a MiniLM query to its nearest chunk vectors (None when
    its vectors are not MiniLM's)."""

    def minilm_vectors(self) -> bool: ...

    def neighbours(self, query_vector: npt.NDArray[np.float32]) -> float | None: ...


def minilm_pool(evidence: Mapping[str, object]) -> bool:
    """Whether a MiniLM query is worth embedding for the pool: at least two sources
    have topics and every one that has holds MiniLM's vectors."""
    with_topics = 0
    for found in evidence.values():
        topics_of = getattr(found, "topics", None)
        if not callable(topics_of) or topics_of() is None:
            continue
        minilm = getattr(found, "minilm_vectors", None)
        if not callable(minilm) or not minilm():
            return False
        with_topics += 1
    return with_topics >= 2


@dataclass(frozen=True, slots=True)
class SemanticEvidence:
    """Each source's semantic score by name, the weights the graded order gives it
    (in the final order, in choosing the sources probed) and how much it takes off
    a source's score per unit of log(chunks) before standardising it
    (`size_penalty`; a source of unknown size counts as the pool's mean size)."""

    scores: Mapping[str, float]
    weights: tuple[float, float] = (SEMANTIC_WEIGHT, SEMANTIC_PROBE_WEIGHT)
    size_penalty: float = 0.0

    def adjusted(self, chunks: Mapping[str, int]) -> Mapping[str, float]:
        """The scores less `size_penalty` x log of each source's chunk count
        (`chunks` by name; a source of unknown size, 0 or absent: the mean log
        size of the others)."""
        if self.size_penalty == 0.0 or not self.scores:
            return self.scores
        logs = {name: math.log(n) for name, n in chunks.items() if n > 0}
        usual = statistics.fmean(logs.values()) if logs else 0.0
        return {
            name: score - self.size_penalty * logs.get(name, usual)
            for name, score in self.scores.items()
        }


def neighbour_semantic(
    query_vector: npt.NDArray[np.float32], evidence: Mapping[str, object]
) -> SemanticEvidence | None:
    """The semantic evidence of a MiniLM query (`query_vector`, unit length): per
    source, its centroid score plus its neighbour score; None unless at least two
    sources have vectors and every one that has has MiniLM's (a pool mixing models
    is scored with the static query, as a pool without MiniLM is)."""
    topics = semantic_scores(query_vector, evidence)
    scores: dict[str, float] = {}
    for name, centroid in topics.items():
        of = getattr(evidence[name], "neighbours", None)
        near = of(query_vector) if callable(of) else None
        if near is None:
            return None
        scores[name] = centroid + near
    if len(scores) < 2:
        return None
    return SemanticEvidence(
        scores, (NEIGHBOUR_WEIGHT, NEIGHBOUR_PROBE_WEIGHT), NEIGHBOUR_SIZE_PENALTY
    )


def semantic_scores(
    query_vector: npt.NDArray[np.float32], evidence: Mapping[str, object]
) -> dict[str, float]:
    """Per source whose evidence has topics: the mean of the query's best
    TOPIC_TOP cosines to them (`query_vector` unit length)."""
    out: dict[str, float] = {}
    for name, found in evidence.items():
        topics_of = getattr(found, "topics", None)
        centroids = topics_of() if callable(topics_of) else None
        if centroids is None or len(centroids) == 0:
            continue
        cosines = np.sort(np.asarray(centroids, np.float32) @ query_vector)[-TOPIC_TOP:]
        out[name] = float(cosines.mean())
    return out


def route_terms(query: str) -> tuple[str, ...]:
    """The query's words worth routing on: its search terms (stopwords removed,
    identifiers split into their parts too), at least two characters long."""
    return tuple(t for t in analyze_query(query).terms if len(t) >= 2)


def _forms(term: str) -> tuple[str, ...]:
    # A plural query word matches its singular too (`retries` in `retry_policy`).
    return (term, *singulars(term))


def term_forms(terms: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Each term with the forms an index is searched under (itself, its singulars)."""
    return {t: _forms(t) for t in terms}


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


def _standard(values: Mapping[str, float]) -> dict[str, float]:
    """z-scores (0 for all when they do not vary)."""
    if not values:
        return {}
    mean = statistics.fmean(values.values())
    spread = statistics.pstdev(values.values()) or 1.0
    return {k: (v - mean) / spread for k, v in values.items()}


class _Counts:
    """The pool's chunk counts: per source (term -> chunks using it), per source in
    all, and summed over the pool."""

    def __init__(
        self, terms: Sequence[str], per_source: dict[str, Mapping[str, int]], chunks: dict[str, int]
    ) -> None:
        self.per_source = per_source
        self.chunks = chunks
        self.total = sum(chunks.values())
        self.used = {t: sum(c.get(t, 0) for c in per_source.values()) for t in terms}

    def share(self, term: str) -> float:
        """The pool's share of chunks using `term`."""
        return self.used[term] / self.total if self.total else 0.0


def _vocabulary_hits(
    terms: Sequence[str], counts: _Counts, hits: list[dict[str, list[str]]], names: list[str]
) -> None:
    """Add `vocabulary` to the fields a term hits in a source whose chunks use it at
    least as often as the pool's do."""
    for name, found in zip(names, hits, strict=True):
        size = counts.chunks.get(name, 0)
        source = counts.per_source.get(name, {})
        for t in terms:
            used = source.get(t, 0)
            if size and used and used / size >= counts.share(t):
                found[t].append("vocabulary")


def _likelihood(terms: Sequence[str], counts: _Counts, name: str) -> float:
    n = counts.chunks[name]
    source = counts.per_source[name]
    score = SIZE_PRIOR * math.log(max(n, 1))
    for t in terms:
        pool = (counts.used[t] + 0.5) / counts.total
        score += math.log((source.get(t, 0) + MU_CHUNKS * pool) / (n + MU_CHUNKS)) - math.log(pool)
    return score / max(1, len(terms))


def _probe_score(
    terms: Sequence[str],
    counts: _Counts,
    name: str,
    evidence: RouteEvidence,
    forms: Mapping[str, Sequence[str]],
) -> float:
    weight = {
        t: math.log((counts.total + 1) / (counts.used[t] + 1)) if counts.used[t] else 0.0
        for t in terms
    }
    whole = sum(weight.values())
    if whole <= 0:
        return 0.0
    source = counts.per_source[name]
    found = evidence.probe(forms, frozenset(t for t in terms if source.get(t, 0) > COMMON_CHUNKS))
    scores = sorted(
        (sum(weight.get(t, 0.0) for t in chunk) / whole for chunk in found), reverse=True
    )
    return sum(scores[:PROBE_TOP]) / PROBE_TOP


def _semantic_z(semantic: Mapping[str, float], names: Sequence[str]) -> dict[str, float]:
    """z-scores of the semantic scores among `names`; one without a score counts
    as their mean (0), as do all when fewer than two have one."""
    known = {n: semantic[n] for n in names if n in semantic}
    if len(known) < 2:
        return dict.fromkeys(names, 0.0)
    z = _standard(known)
    return {n: z.get(n, 0.0) for n in names}


def _graded_order(
    terms: Sequence[str],
    matches: list[RouteMatch],
    counts: _Counts,
    evidence: Mapping[str, RouteEvidence],
    semantic: SemanticEvidence,
) -> list[RouteMatch]:
    """`matches` in the graded order of the module docstring."""
    if len(matches) <= 1 or not terms:
        return matches
    forms = term_forms(terms)
    by_name = {m.name: m for m in matches}
    lm = {m.name: _likelihood(terms, counts, m.name) for m in matches}
    lm_z = _standard(lm)
    conf_z = _standard({m.name: m.confidence for m in matches})
    final_weight, probe_weight = semantic.weights
    scores = semantic.adjusted(counts.chunks)
    sem_z = _semantic_z(scores, list(by_name))
    first = {n: lm_z[n] + CONFIDENCE_WEIGHT * conf_z[n] + probe_weight * sem_z[n] for n in by_name}
    order = sorted(by_name, key=lambda n: (-first[n], n))
    probed, rest = order[:PROBED], order[PROBED:]
    probe = {n: _probe_score(terms, counts, n, evidence[n], forms) for n in probed}
    probe_z = _standard(probe)
    lm_probed = _standard({n: lm[n] for n in probed})
    sem_probed = _semantic_z(scores, probed)
    final = {
        n: lm_probed[n] + PROBE_WEIGHT * probe_z[n] + final_weight * sem_probed[n] for n in probed
    }
    probed.sort(key=lambda n: (-final[n], n))
    return [replace(by_name[n], grade=final[n]) for n in probed] + [by_name[n] for n in rest]


def score_pool(
    terms: Sequence[str],
    profiles: Sequence[SourceProfile],
    limit: int,
    *,
    keep_unmatched: bool,
    evidence: Mapping[str, RouteEvidence] | None = None,
    semantic: SemanticEvidence | Mapping[str, float] | None = None,
) -> list[RouteMatch]:
    """Score one pool of sources for `terms` (see the module docstring) and return
    its best `limit`, best first. Sources no term matched are dropped unless
    `keep_unmatched` (collections: always listed, marked weak). With `evidence`
    for every source (by name), the vocabulary field counts and the pool is in
    the graded order (with `semantic`, each source's semantic score by name, as
    `semantic_scores` gives them, or SemanticEvidence with its weights); otherwise
    by confidence (ties on name)."""
    if limit <= 0 or not profiles:
        return []
    unique = list(dict.fromkeys(terms))
    hits = [{t: _fields_hit(t, p) for t in unique} for p in profiles]
    counts = _vocabulary_counts(unique, profiles, hits, evidence)
    idf = _idf(unique, hits, len(profiles))
    out: list[RouteMatch] = []
    for profile, found in zip(profiles, hits, strict=True):
        match = _source_match(profile, found, unique, idf)
        if match.matched or keep_unmatched:
            out.append(match)
    out.sort(key=lambda m: (-m.confidence, m.name))
    if counts is not None and evidence is not None:
        if not isinstance(semantic, SemanticEvidence):
            semantic = SemanticEvidence(semantic or {})
        out = _graded_order(unique, out, counts, evidence, semantic)
    return out[:limit]


def _vocabulary_counts(
    unique: list[str],
    profiles: Sequence[SourceProfile],
    hits: list[dict[str, list[str]]],
    evidence: Mapping[str, RouteEvidence] | None,
) -> _Counts | None:
    """With `evidence` for every source, the terms' chunk counts per source (and
    the vocabulary field added to `hits`); None without it or when no source's
    chunks hold a term."""
    if evidence is None or not all(p.name in evidence for p in profiles) or not unique:
        return None
    forms = term_forms(unique)
    counts = _Counts(
        unique,
        per_source={p.name: evidence[p.name].term_chunks(forms) for p in profiles},
        chunks={p.name: p.chunks for p in profiles},
    )
    if counts.total <= 0:
        return None
    _vocabulary_hits(unique, counts, hits, [p.name for p in profiles])
    return counts


def _idf(unique: list[str], hits: list[dict[str, list[str]]], n: int) -> dict[str, float]:
    """Each term's inverse document frequency among the `n` sources (0 when no
    source has it)."""
    df = {t: sum(1 for h in hits if h[t]) for t in unique}
    return {t: math.log((n + 1) / (df[t] + 1)) if df[t] >= 1 else 0.0 for t in unique}


def _source_match(
    profile: SourceProfile, found: dict[str, list[str]], unique: list[str], idf: dict[str, float]
) -> RouteMatch:
    """One source's match: the idf share of the terms it has, boosted by the
    terms its labels name."""
    total = sum(idf.values())
    matched = [t for t in unique if found[t]]
    coverage = sum(idf[t] for t in matched) / total if total > 0 else 0.0
    label_terms = [t for t in unique if _label_hit(t, profile.labels)]
    boost = 1.0 + 0.5 * (len(label_terms) / len(unique)) if unique else 1.0
    score = min(1.0, coverage * boost)
    rationale = _rationale({t: found[t] for t in matched}, label_terms, score)
    return RouteMatch(profile.name, profile.kind, score, rationale, tuple(matched))
