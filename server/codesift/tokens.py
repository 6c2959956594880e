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

__all__ = ["code_index_text", "compact_name", "module_name", "split_identifier", "word_tokens"]

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


# An identifier is `[A-Za-z_][A-Za-z0-9_]*`. This table keeps those characters and
# makes every other byte of the UTF-8 text a space: a text's identifiers are then its
# space-separated runs without their leading digits (`2nd` -> `nd`, as that pattern
# finds them). bytes.translate and split run in C at about twice the speed of the
# pattern's findall.
_RUN_BYTES = bytes(
    c if (48 <= c <= 57 or 65 <= c <= 90 or 97 <= c <= 122 or c == 95) else 32 for c in range(256)
)
_DIGITS = b"0123456789"


# Identifiers repeat (Zipf): a bounded cache keeps the frequent ones. Unbounded, it
# grew an index worker by ~40 MiB on the Go standard library.
@lru_cache(maxsize=65_536)
def _compound_parts(run: bytes) -> tuple[str, ...]:
    """The parts of the identifier in a run of identifier characters, () unless it
    is a compound."""
    identifier = run.lstrip(_DIGITS).decode("ascii")
    return split_identifier(identifier) if _BOUNDARY.search(identifier) else ()


def code_index_text(text: str) -> str:
    """Text to put in the code FTS index: `text` plus the parts of its compound
    identifiers, once each, in the order they first appear (the same text always
    gives the same index text: a set's order would change with the hash seed)."""
    # map/chain keep the per-identifier loop in C: this runs on every code chunk.
    runs = dict.fromkeys(text.encode("utf-8", "surrogatepass").translate(_RUN_BYTES).split())
    extra = dict.fromkeys(chain.from_iterable(map(_compound_parts, runs)))
    if not extra:
        return text
    return f"{text}\n{' '.join(extra)}"


def word_tokens(text: str) -> list[str]:
    """Word-ish tokens of a query, in order, as written (not lower-cased)."""
    return _WORD.findall(text)


# File names that stand for their folder (`widget/mod.rs`, `widget/index.ts`,
# `widget/__init__.py`): the module they make is the folder's.
_FOLDER_MODULE_STEMS = frozenset({"mod", "index", "__init__", "init", "main", "lib", "package"})


def compact_name(name: str) -> str:
    """A name without case or separators: `foo_bar`, `FooBar` and `foo-bar` alike."""
    return "".join(c for c in name if c.isalnum()).lower()


@lru_cache(maxsize=16_384)
def module_name(path: str) -> str:
    """The name a file's path gives its module, compacted (`compact_name`): its stem
    (`Widget` of `src/Widget.java`, `foo_bar` of `foo_bar.h`), or its folder's name
    for a file that stands for its folder (`widget/mod.rs`, `widget/index.ts`,
    `widget/__init__.py`). The file each language's convention names after the
    definition it holds."""
    parts = path.rsplit("/", 2)
    name = parts[-1]
    stem = name if name.startswith(".") else name.split(".", 1)[0]
    if stem.lower() in _FOLDER_MODULE_STEMS and len(parts) > 1:
        stem = parts[-2]
    return compact_name(stem)
