"""Candidate lookups for name search: the name index and the trigram index over names.

`name_candidates` never scans: it reads the exact/prefix name index
(nodes_name_ci), the trigram index over names (names_fts: every trigram of the
typed name must occur) and, when those give few candidates (a typo), names
holding the trigrams of either half of the typed name. Scoring is the caller's
(codesift.engine.symbols).
"""

from __future__ import annotations

from collections.abc import Iterable

import apsw

from codesift.store.ports import NameRow

__all__ = ["NameRow", "fts_or_query", "fts_quote", "name_candidates", "name_rows", "trigrams"]

_CANDIDATE_LIMIT = 800


def fts_quote(term: str) -> str:
    """One term as an FTS5 string (no operator can hide in it)."""
    return '"' + term.replace('"', '""') + '"'


def fts_or_query(terms: tuple[str, ...] | list[str]) -> str:
    """An FTS5 query matching any of `terms` (each quoted; empty ones left out)."""
    return " OR ".join(fts_quote(t) for t in terms if t)


def trigrams(text: str) -> list[str]:
    lowered = text.lower()
    return sorted({lowered[i : i + 3] for i in range(len(lowered) - 2)})


def _like_prefix(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def _initials_globs(initials: str) -> tuple[str, str]:
    """GLOB patterns (case-sensitive) for names whose words start with the letters
    after the first of `initials` (ASCII letters): camel case (`?*R*F*H*`) and
    snake case (`?*_[rR]*_[fF]*_[hH]*`)."""
    rest = initials[1:]
    camel = "?" + "".join(f"*{c.upper()}" for c in rest) + "*"
    snake = "?" + "".join(f"*_[{c.lower()}{c.upper()}]" for c in rest) + "*"
    return camel, snake


def _names_matching(conn: apsw.Connection, match: str, limit: int) -> set[int]:
    return {
        int(r[0])
        for r in conn.execute(
            "SELECT rowid FROM names_fts WHERE names_fts MATCH ? LIMIT ?", (match, limit)
        )
    }


def name_candidates(conn: apsw.Connection, tail: str) -> set[int]:
    """Node ids whose name may match `tail` (one name component, as typed)."""
    ids: set[int] = {
        int(r[0])
        for r in conn.execute(
            "SELECT id FROM nodes WHERE name LIKE ? ESCAPE '\\' LIMIT 300", (_like_prefix(tail),)
        )
    }
    if 2 <= len(tail) <= 6 and tail.isalpha() and tail.isascii():
        # Word initials (`trfh` for TimedRotatingFileHandler) share no trigram with the
        # name; such names start with the query's first letter (the name index reads
        # that range) and have each further letter start a word, camel-case or after
        # `_` (the GLOB filters the range before the limit: a large index has
        # thousands of names starting with any one letter).
        ids.update(
            int(r[0])
            for r in conn.execute(
                "SELECT id FROM nodes WHERE name LIKE ? ESCAPE '\\'"
                " AND (name GLOB ? OR name GLOB ?) LIMIT 500",
                (_like_prefix(tail[0]), *_initials_globs(tail)),
            )
        )
    tris = trigrams(tail)
    if tris:
        ids |= _names_matching(conn, " AND ".join(fts_quote(t) for t in tris), _CANDIDATE_LIMIT)
        if len(ids) < 20 and len(tris) >= 4:
            # A typo breaks the trigrams around it: the part before it or the part
            # after it still matches in full.
            ordered = [tail[i : i + 3].lower() for i in range(len(tail) - 2)]
            half = len(ordered) // 2
            for part in (ordered[:half], ordered[half:]):
                match = " AND ".join(fts_quote(t) for t in dict.fromkeys(part))
                ids |= _names_matching(conn, match, 300)
    return ids


def name_rows(conn: apsw.Connection, ids: Iterable[int]) -> list[NameRow]:
    """(id, name, qualified_name, kind) of the nodes `ids`."""
    wanted = list(dict.fromkeys(ids))
    out: list[NameRow] = []
    for start in range(0, len(wanted), 900):
        batch = wanted[start : start + 900]
        out.extend(
            (int(i), str(n), str(q), str(k))
            for i, n, q, k in conn.execute(
                "SELECT id, name, qualified_name, kind FROM nodes"
                f" WHERE id IN ({','.join('?' * len(batch))})",
                batch,
            )
        )
    return out
