"""Full-text vectors of the shared index, with the SQLite index's own tokens.

The SQLite index's code and signature tables tokenize with FTS5 `unicode61
remove_diacritics 2 tokenchars '_'` over text that codesift.tokens has already
extended with the parts of compound identifiers (`code_index_text`). PostgreSQL's
parsers split differently (`_` ends a word there, `a.b` is one host name), so
the `simple` vectors are built here from those same tokens and handed over as
tsvector literals with positions (ts_rank_cd reads them); queries are tsquery
literals of the same tokens. Doc sections use PostgreSQL's own `english`
configuration (stemming, as the porter tokenizer does in SQLite).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

__all__ = ["doc_token_count", "fts_tokens", "or_query", "tsvector_literal"]

# FTS5 unicode61 token characters: letters, numbers (and private-use), plus `_`.
_TOKEN = re.compile(r"[^\W]+|[\ue000-\uf8ff]+")
# PostgreSQL limits: positions 1..16383, 256 positions per lexeme, lexemes < 2 KiB.
_MAX_POSITION = 16383
_MAX_POSITIONS = 256
_MAX_LEXEME_BYTES = 2046


def _fold(token: str) -> str:
    lowered = token.lower()
    if lowered.isascii():
        return lowered
    decomposed = unicodedata.normalize("NFKD", lowered)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def fts_tokens(text: str) -> list[str]:
    """The tokens FTS5 unicode61 (remove_diacritics 2, `_` a token character)
    finds in `text`, folded as it folds them, in order."""
    return [_fold(m.group()) for m in _TOKEN.finditer(text)]


def _quote(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


# FTS5 unicode61 without token characters (the doc table): `_` separates.
_DOC_TOKEN = re.compile(r"[^\W_]+|[\ue000-\uf8ff]+")


def doc_token_count(text: str) -> int:
    """Tokens FTS5 unicode61 (no extra token characters) finds in `text`."""
    return sum(1 for _ in _DOC_TOKEN.finditer(text))


def tsvector_literal(text: str) -> tuple[str, int]:
    """A tsvector literal of `text`'s tokens (as `fts_tokens`) with positions, and
    how many tokens `text` has."""
    positions: dict[str, list[int]] = {}
    tokens = fts_tokens(text)
    for i, token in enumerate(tokens, start=1):
        if not token or len(token.encode("utf-8")) > _MAX_LEXEME_BYTES:
            continue
        seen = positions.setdefault(token, [])
        if len(seen) < _MAX_POSITIONS:
            seen.append(min(i, _MAX_POSITION))
    literal = " ".join(
        f"{_quote(lexeme)}:{','.join(map(str, dict.fromkeys(pos)))}"
        for lexeme, pos in positions.items()
    )
    return literal, len(tokens)


def or_query(terms: Sequence[str]) -> str:
    """A tsquery literal matching any of `terms` (each folded into its tokens; a
    term of several tokens matches them as a phrase)."""
    parts: list[str] = []
    for term in terms:
        tokens = [t for t in fts_tokens(term) if t]
        if not tokens:
            continue
        parts.append(" <-> ".join(_quote(t) for t in tokens))
    return " | ".join(dict.fromkeys(parts))
