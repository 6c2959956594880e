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

__all__ = ["language_for", "parser_for", "query_for", "query_source"]

_local = threading.local()


@cache
def language_for(language: str) -> Language:
    spec = spec_for(language)
    if spec is None:
        raise KeyError(f"no grammar for language {language!r}")
    language_obj: Language = get_language(spec.grammar)  # type: ignore[arg-type]
    return language_obj


def query_source(language: str) -> str:
    return (resources.files("codesift.parsing") / "queries" / f"{language}.scm").read_text(
        encoding="utf-8"
    )


@cache
def query_for(language: str) -> Query:
    return Query(language_for(language), query_source(language))


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
