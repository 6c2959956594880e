"""The parts of a shared search's statements (store/postgres/search.py): who reads
(`Reader`), a search's file filters as SQL conditions (`glob_regex`), and the
symbol stream's candidate cut in pg_trgm's terms (`candidate_threshold`,
`shared_trigram_patterns`)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from codesift.store.filters import SearchFilters, time_conditions
from codesift.timespec import TimeFilter

__all__ = [
    "LEXICAL_RANK",
    "MAX_TRIGRAM_PATTERNS",
    "RANK_NORMALIZATION",
    "SYMBOL_THRESHOLD",
    "LexicalScore",
    "Reader",
    "candidate_threshold",
    "glob_regex",
    "kept_lexical_terms",
    "lexical_score_sql",
    "shared_trigram_patterns",
]

# How the lexical stream scores (search.py, lexical_hits): "bm25", FTS5's BM25 from
# ts_rank_cd's term frequencies; "cd", plain ts_rank_cd with the normalization
# below (1: divided by 1 + log(length); 32: r / (r + 1)) weighted by IDF.
LEXICAL_RANK = "bm25"
RANK_NORMALIZATION = 1 | 32

# The shared symbol stream keeps names whose similarity by codesift's own trigrams
# reaches its threshold (0.3, as for the local index). pg_trgm pads each word with
# spaces (three more trigrams per word), so a name can be below 0.3 there and
# above it in codesift's trigrams (`code` for the probe `node`: 0.25 and 0.33);
# cutting candidates at 0.3 in pg_trgm lost such names (dev set 1, js-npm:
# NDCG@10 -0.017). Candidates are cut at the pg_trgm similarity such a name has
# at least (candidate_threshold); a lower cut for every probe made long probes
# slow (0.1: 0.5 s for TimedRotatingFileHandler on the Python stdlib).
SYMBOL_THRESHOLD = 0.3


def candidate_threshold(probe: str, threshold: float = SYMBOL_THRESHOLD) -> float:
    """The lowest pg_trgm similarity of a one-word name to the one-word `probe`
    when their similarity by codesift's trigrams (unpadded) is `threshold`: they
    share s >= threshold * (len - 2) trigrams and, in the worst case, none of
    pg_trgm's three padded ones, so s / (s / threshold + 6 - s) at least."""
    shared = max(1, math.ceil(threshold * (len(probe) - 2)))
    lowest = shared / (shared / threshold + 6 - shared)
    return round(min(threshold, lowest), 3)


_INDEXED_TRIGRAM = re.compile(r"[a-z0-9]{3}")
# A short probe's candidates over every repository in view are narrowed to the
# names holding one of its own trigrams (shared_trigram_patterns) when it has at
# most this many: over 1.16M chunks the symbol statement took 3.1 s -> 1.0 s for
# 34 probes of 1-3 trigrams (`type` 250 -> 40 ms), 0.45 -> 0.34 s for 4; longer
# probes, whose pg_trgm cut is higher, took longer with the patterns (0.9 -> 1.0 s
# for 5, up to 2x for 9-13).
MAX_TRIGRAM_PATTERNS = 4


def shared_trigram_patterns(lowered: str, threshold: float) -> list[str] | None:
    """LIKE patterns (`%abc%`), one for each trigram of the lower-case probe
    `lowered` that pg_trgm's index holds (letters and digits only), when every
    name whose trigram similarity to the probe (retrieval/streams.py's: Jaccard
    of the unpadded trigram sets) reaches `threshold` contains one of them; else
    None. Such a name shares s >= threshold * |probe trigrams| of them (s /
    (|q| + |n| - s) >= t with |n| >= s), so when fewer of the probe's trigrams
    than that are outside the index, one shared trigram is inside it."""
    if threshold <= 0:
        return None
    grams = {lowered[i : i + 3] for i in range(len(lowered) - 2)}
    indexed = sorted(g for g in grams if _INDEXED_TRIGRAM.fullmatch(g))
    at_least = max(1, math.ceil(threshold * len(grams) - 1e-9))
    if not indexed or len(grams) - len(indexed) >= at_least:
        return None
    return [f"%{g}%" for g in indexed]


@dataclass(frozen=True, slots=True)
class Reader:
    """Who reads: `principal` (a user or group name; None: the database role's own
    view, every repository) and optionally only the repositories `repos` (keys)."""

    principal: str | None = None
    repos: tuple[str, ...] = ()


def glob_regex(pattern: str) -> str:
    """A POSIX regular expression matching what SQLite GLOB matches for `pattern`
    (`*` any characters, `/` included; `?` one; `[...]` a class)."""
    out = ["^"]
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "*":
            out.append(".*")
        elif ch == "?":
            out.append(".")
        elif ch == "[":
            end = pattern.find("]", i + 2)
            if end < 0:
                out.append(re.escape(ch))
            else:
                body = pattern[i + 1 : end]
                if body.startswith("^"):
                    body = "^" + body[1:].replace("\\", "\\\\")
                else:
                    body = body.replace("\\", "\\\\")
                out.append(f"[{body}]")
                i = end
        else:
            out.append(re.escape(ch))
        i += 1
    out.append("$")
    return "".join(out)


def _file_conditions(filters: SearchFilters, alias: str = "f") -> tuple[str, list[Any]]:
    sql = ""
    params: list[Any] = []
    if filters.languages:
        sql += f" AND {alias}.language = ANY(%s)"
        params.append(list(filters.languages))
    if filters.paths:
        regexes: list[str] = []
        for pattern in filters.paths:
            glob = pattern.replace("**/", "*").replace("**", "*")
            if "/" in pattern:
                regexes.append(glob_regex(glob.lstrip("/")))
            else:  # a pattern without a slash matches the file name in any folder
                regexes.extend([glob_regex(glob), glob_regex(f"*/{glob}")])
        sql += f" AND {alias}.path ~ ANY(%s)"
        params.append(regexes)
    return sql, params


def _time_conditions(window: TimeFilter, changed: str, created: str) -> tuple[str, list[Any]]:
    return time_conditions(window, changed, created, mark="%s")


def _files_join(filters: SearchFilters, file_id: str) -> str:
    return f" JOIN files f ON f.id = {file_id}" if filters.on_files else ""


def kept_lexical_terms(
    queries: Sequence[str], counts: Mapping[str, int], total: int, max_df: float
) -> list[str]:
    """The term queries the lexical stream scores, given each one's document
    frequency among `total` chunks. As the SQLite store does
    (sqlite/search.py, scored_terms): of several terms, those in at least half the
    chunks, or common ones above `max_df`, are left out; terms no chunk holds score
    nothing, and when they are all that is left, every term is kept."""
    kept = list(queries)
    if len(queries) > 1:
        rare = [
            q
            for q in queries
            if not (2 * counts[q] >= total or (counts[q] >= max_df * total and counts[q] >= 2000))
        ]
        kept = rare if any(counts[q] > 0 for q in rare) else list(queries)
    return [q for q in kept if counts[q] > 0]


@dataclass(frozen=True, slots=True)
class LexicalScore:
    """The lexical statement's parts: each term's frequency column (`t0`, `t1`...),
    the score over them (one IDF parameter per term) and the length norm."""

    tf_sql: str
    score_sql: str
    length_sql: str
    length_params: tuple[float, ...]


def lexical_score_sql(terms: int, tsquery: str, mean_tokens: float) -> LexicalScore:
    """The score of `terms` term queries by LEXICAL_RANK."""
    if LEXICAL_RANK == "cd":
        return LexicalScore(
            ", ".join(
                f"ts_rank_cd(c.tsv, {tsquery}, {RANK_NORMALIZATION}) AS t{i}" for i in range(terms)
            ),
            " + ".join(f"%s * t{i}" for i in range(terms)),
            "",
            (),
        )
    # tf * (k1 + 1) / (tf + k1 * (1 - b + b * tokens / mean tokens))
    return LexicalScore(
        ", ".join(f"10 * ts_rank_cd(c.tsv, {tsquery}, 0) AS t{i}" for i in range(terms)),
        " + ".join(f"%s * t{i} * 2.2 / (t{i} + norm)" for i in range(terms)),
        ", 1.2 * (0.25 + 0.75 * coalesce(c.tokens, %s) / %s) AS norm",
        (mean_tokens, mean_tokens),
    )
