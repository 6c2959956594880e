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

from codesift.parsing.comments import EQUATION_KINDS
from codesift.parsing.languages import spec_for

__all__ = [
    "has_equations",
    "language_for",
    "parser_for",
    "query_for",
    "query_source",
    "split_queries",
]

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


def _top_level_patterns(source: str) -> list[str]:
    """The patterns of a query source, each as its text from its opening bracket (or
    string) to the start of the next (trailing captures and quantifiers included),
    without comments."""
    patterns: list[str] = []
    current: list[str] = []
    depth = 0
    i, n = 0, len(source)
    while i < n:
        ch = source[i]
        if ch == ";":  # a comment, to the end of the line
            end = source.find("\n", i)
            i = n if end < 0 else end
            continue
        if ch == '"':
            end = i + 1
            while end < n and source[end] != '"':
                end += 2 if source[end] == "\\" else 1
            if depth == 0 and current:
                patterns.append("".join(current))
                current = []
            current.append(source[i : end + 1])
            i = end + 1
            continue
        if ch in "([":
            if depth == 0 and current:
                patterns.append("".join(current))
                current = []
            depth += 1
        elif ch in ")]":
            depth -= 1
        if current or not ch.isspace():
            current.append(ch)
        i += 1
    if current:
        patterns.append("".join(current))
    return [p.strip() for p in patterns if p.strip()]


@cache
def split_queries(language: str) -> tuple[Query, Query]:
    """The language's query as two: every pattern except call sites (walked match by
    match), and the call-site patterns alone (read as flat captures, which is several
    times cheaper for the most frequent matches). Each is compiled from its own
    patterns' text: compiling the whole query twice and disabling half of each cost
    a worker about 0.4 s for C++ alone."""
    structure: list[str] = []
    calls: list[str] = []
    for pattern in _top_level_patterns(query_source(language)):
        (calls if "@reference.call" in pattern else structure).append(pattern)
    grammar = language_for(language)
    return Query(grammar, "\n".join(structure)), Query(grammar, "\n".join(calls))


@cache
def has_equations(language: str) -> bool:
    """Whether the grammar has the node kinds a function's later equations are
    (Haskell's `function` and `bind`: comments.py `last_equation`). Other grammars
    skip looking at each definition's next sibling: tree-sitter finds a sibling
    through the parent, which it finds by descending from the root."""
    grammar = language_for(language)
    return any(grammar.id_for_node_kind(kind, True) is not None for kind in EQUATION_KINDS)


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
