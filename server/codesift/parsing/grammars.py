"""Loading tree-sitter grammars and their definition/call queries.

Grammars come compiled in tree-sitter-language-pack 0.13 (no downloads). Query
files live beside this module in `queries/<language>.scm`. Parsers are not
thread-safe, so each thread gets its own.
"""

from __future__ import annotations

import threading
from functools import cache
from importlib import resources

from tree_sitter import Language, Parser, Query
from tree_sitter_language_pack import get_language

from codesift.parsing.languages import spec_for

__all__ = ["language_for", "parser_for", "query_for", "query_source", "split_queries"]

_local = threading.local()


@cache
def language_for(language: str) -> Language:
    spec = spec_for(language)
    if spec is None:
        raise KeyError(f"no grammar for language {language!r}")
    language_obj: Language = get_language(spec.grammar)  # type: ignore[arg-type]
    return language_obj


# Query files read around a language's own: the patterns JavaScript and TypeScript
# share (ecmascript.scm) before it, TypeScript's before TSX's own, and JSX's
# (jsx.scm) after JavaScript's and TSX's.
_QUERY_PARTS = {
    "javascript": ("ecmascript", "javascript", "jsx"),
    "typescript": ("ecmascript", "typescript"),
    "tsx": ("ecmascript", "typescript", "tsx", "jsx"),
}


def query_source(language: str) -> str:
    """The query of `language`: its `queries/<language>.scm`, with the files it
    shares with other languages (_QUERY_PARTS)."""
    folder = resources.files("codesift.parsing") / "queries"
    parts = _QUERY_PARTS.get(language, (language,))
    return "\n".join((folder / f"{part}.scm").read_text(encoding="utf-8") for part in parts)


@cache
def query_for(language: str) -> Query:
    return Query(language_for(language), query_source(language))


@cache
def split_queries(language: str) -> tuple[Query, Query]:
    """The language's query as two: every pattern except call sites (walked match by
    match), and the call-site patterns alone (read as flat captures, which is several
    times cheaper for the most frequent matches)."""
    source = query_source(language)
    encoded = source.encode("utf-8")
    structure = Query(language_for(language), source)
    calls = Query(language_for(language), source)
    for index in range(structure.pattern_count):
        text = encoded[
            structure.start_byte_for_pattern(index) : structure.end_byte_for_pattern(index)
        ]
        if b"@reference.call" in text:
            structure.disable_pattern(index)
        else:
            calls.disable_pattern(index)
    return structure, calls


def parser_for(language: str) -> Parser:
    parsers: dict[str, Parser] | None = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = {}
        _local.parsers = parsers
    parser = parsers.get(language)
    if parser is None:
        parser = Parser(language_for(language))
        parsers[language] = parser
    return parser
