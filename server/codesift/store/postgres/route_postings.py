"""A routing probe of many repositories from the term postings of the shared index.

A route probes its best candidate repositories (codesift.retrieval.routing): for
each, the `limit` code chunks and doc sections that score best for any of the
query's terms, as the sets of terms they hold. Asked with one full-text statement
per repository and layer, ranking every chunk that matches by `ts_rank`, a route
over 15 candidates ran 30 statements: about 160 ms over 21 repositories. The
postings the lexical stream reads (term_stats: per lexeme and repository, its
chunks, their occurrences and token counts) answer every candidate at once: one
statement fetches the query's postings in every repository in view, and numpy
scores them with BM25 (k1 1.2, b 0.75, as the local index's FTS5 `bm25` ranks a
local probe: store/route_profile.py).

A term matches a chunk through any of its forms (code: identifier tokens of its
word forms, `term_forms`; doc sections: its English stem), and a chunk is a
candidate only when it holds a term outside `common` (when there is one), as the
statement-per-repository probe decides.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["MAX_PROBE_TERMS", "PostingRow", "RoutePostings", "posting_rows"]

# Terms are held as bits of an unsigned 64-bit mask.
MAX_PROBE_TERMS = 63

_K1 = 1.2
_B = 0.75


@dataclass(frozen=True, slots=True)
class PostingRow:
    """One term form's postings in one repository's layer (term_stats), with the
    layer's size (layer_stats)."""

    key: str
    layer: str
    term: str
    chunk_ids: bytes  # big-endian int4, ascending
    occurrences: bytes  # big-endian int2
    lengths: bytes  # big-endian int4 token counts, -1 unknown
    df: int
    layer_chunks: int
    layer_tokens: int


@dataclass(slots=True)
class _Layer:
    chunks: int
    tokens: int
    ids: list[npt.NDArray[np.int64]] = field(default_factory=list)
    scores: list[npt.NDArray[np.float64]] = field(default_factory=list)
    bits: list[int] = field(default_factory=list)


class RoutePostings:
    """The postings of one query's terms in the repositories in view; `probe`
    answers for any of them without reading the database again."""

    def __init__(self, terms: Sequence[str], rows: Iterable[PostingRow]) -> None:
        if len(terms) > MAX_PROBE_TERMS:
            raise ValueError(f"at most {MAX_PROBE_TERMS} terms")
        self.terms = tuple(terms)
        self._bit = {t: i for i, t in enumerate(self.terms)}
        self._layers: dict[tuple[str, str], _Layer] = {}
        for row in rows:
            bit = self._bit.get(row.term)
            if bit is None or not row.chunk_ids:
                continue
            layer = self._layers.setdefault(
                (row.key, row.layer), _Layer(row.layer_chunks, row.layer_tokens)
            )
            ids = np.frombuffer(row.chunk_ids, dtype=">i4").astype(np.int64)
            tf = np.frombuffer(row.occurrences, dtype=">i2").astype(np.float64)
            tokens = np.frombuffer(row.lengths, dtype=">i4").astype(np.float64)
            mean = layer.tokens / layer.chunks if layer.chunks and layer.tokens > 0 else 1.0
            tokens[tokens < 0] = mean
            n = max(layer.chunks, row.df)
            idf = float(np.log(1.0 + (n - row.df + 0.5) / (row.df + 0.5)))
            layer.ids.append(ids)
            layer.scores.append(idf * tf * (_K1 + 1) / (tf + _K1 * (1 - _B + _B * tokens / mean)))
            layer.bits.append(bit)

    def probe(
        self, key: str, common: frozenset[str], limit: int, layers: Sequence[str] = ("code", "doc")
    ) -> list[frozenset[str]]:
        """The best `limit` chunks of each layer of repository `key` for any of the
        terms, each as the set of terms it holds (code chunks first); a chunk
        holding `common` terms only is no candidate, unless every term is common."""
        out: list[frozenset[str]] = []
        for name in layers:
            layer = self._layers.get((key, name))
            if layer is not None:
                out += self._best(layer, common, limit)
        return out

    def _best(self, layer: _Layer, common: frozenset[str], limit: int) -> list[frozenset[str]]:
        ids = np.concatenate(layer.ids)
        scores = np.concatenate(layer.scores)
        masks = np.concatenate(
            [
                np.full(len(part), 1 << bit, dtype=np.uint64)
                for part, bit in zip(layer.ids, layer.bits, strict=True)
            ]
        )
        chunk_ids, inverse = np.unique(ids, return_inverse=True)
        total = np.bincount(inverse, weights=scores, minlength=len(chunk_ids))
        held = np.zeros(len(chunk_ids), dtype=np.uint64)
        np.bitwise_or.at(held, inverse, masks)
        rare = [t for t in self.terms if t not in common] or list(self.terms)
        rare_mask = np.uint64(sum(1 << self._bit[t] for t in rare))
        keep = np.flatnonzero(held & rare_mask)
        if len(keep) == 0:
            return []
        best = keep[np.lexsort((chunk_ids[keep], -total[keep]))[:limit]]
        return [self._terms_of(int(held[i])) for i in best]

    def _terms_of(self, mask: int) -> frozenset[str]:
        return frozenset(t for t, bit in self._bit.items() if mask >> bit & 1)


def posting_rows(rows: Iterable[Sequence[Any]]) -> list[PostingRow]:
    """PostingRow from the statement's rows (key, layer, term, chunk_ids,
    occurrences, lengths, df, layer chunks, layer tokens)."""
    out: list[PostingRow] = []
    for key, layer, term, ids, occurrences, lengths, df, chunks, tokens in rows:
        out.append(
            PostingRow(
                str(key),
                str(layer),
                str(term),
                bytes(ids),
                bytes(occurrences),
                bytes(lengths),
                int(df),
                int(chunks),
                int(tokens),
            )
        )
    return out
