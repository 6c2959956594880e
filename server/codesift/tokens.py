"""Identifier-aware tokens, shared by indexing and querying.

FTS5's unicode61 tokenizer (with `_` as a token character) keeps
`parse_http_header` and `parseHTTPHeader` whole. To make their parts findable
too, the indexed text of a code chunk is the text followed by the parts of every
compound identifier in it, once each. So a query for `http header`, for
`parseHTTPHeader` or for `parse_http_header` all match, and nothing is stemmed.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import chain

__all__ = ["code_index_text", "split_identifier", "word_tokens"]

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Boundaries inside an identifier: lower->Upper, UPPER->Upper+lower, letter<->digit.
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
_WORD = re.compile(r"\w+", re.UNICODE)


def split_identifier(identifier: str) -> tuple[str, ...]:
    """`parseHTTPHeader` -> ("parse", "http", "header"); `get_v2_url` -> ("get", "v", "2", "url").

    Returns lower-case parts; a simple word gives a one-element tuple.
    """
    # No _CAMEL match contains or looks past an underscore, so matching the whole
    # identifier gives the parts of its `_`-separated pieces in order.
    parts = _CAMEL.findall(identifier)
    return tuple(map(str.lower, parts)) if parts else (identifier.lower(),)


# An inner boundary: an underscore between word characters, a lower-to-upper step,
# an upper run followed by lower, or a letter next to a digit.
_BOUNDARY = re.compile(r"[A-Za-z0-9]_[A-Za-z0-9]|[a-z][A-Z]|[A-Z][A-Z][a-z]|[A-Za-z][0-9]")


# Identifiers repeat (Zipf): a bounded cache keeps the frequent ones. Unbounded, it
# grew an index worker by ~40 MiB on the Go standard library.
@lru_cache(maxsize=65_536)
def _compound_parts(identifier: str) -> tuple[str, ...]:
    return split_identifier(identifier) if _BOUNDARY.search(identifier) else ()


def code_index_text(text: str) -> str:
    """Text to put in the code FTS index: `text` plus the parts of its compound
    identifiers, once each, in the order they first appear (the same text always
    gives the same index text: a set's order would change with the hash seed)."""
    # map/chain keep the per-identifier loop in C: this runs on every code chunk.
    identifiers = dict.fromkeys(_IDENTIFIER.findall(text))
    extra = dict.fromkeys(chain.from_iterable(map(_compound_parts, identifiers)))
    if not extra:
        return text
    return f"{text}\n{' '.join(extra)}"


def word_tokens(text: str) -> list[str]:
    """Word-ish tokens of a query, in order, as written (not lower-cased)."""
    return _WORD.findall(text)
