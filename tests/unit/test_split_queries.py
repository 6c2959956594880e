"""split_queries compiles each half of a language's query from its own patterns'
text: the halves must hold exactly the patterns tree-sitter reads in the whole
query, split by whether they capture a call site."""

from __future__ import annotations

import re
from importlib import resources

import pytest

from codesift.parsing.grammars import _top_level_patterns, query_for, query_source, split_queries
from codesift.parsing.languages import spec_for

_LANGUAGES = sorted(
    entry.name.removesuffix(".scm")
    for entry in (resources.files("codesift.parsing") / "queries").iterdir()
    if entry.name.endswith(".scm") and spec_for(entry.name.removesuffix(".scm")) is not None
)


def _normal(text: str) -> str:
    return " ".join(re.sub(r";[^\n]*", "", text).split())


@pytest.mark.parametrize("language", _LANGUAGES)
def test_patterns_match_tree_sitter(language: str) -> None:
    source = query_source(language)
    encoded = source.encode("utf-8")
    whole = query_for(language)
    theirs = [
        _normal(encoded[whole.start_byte_for_pattern(i) : whole.end_byte_for_pattern(i)].decode())
        for i in range(whole.pattern_count)
    ]
    assert [_normal(p) for p in _top_level_patterns(source)] == theirs
    structure, calls = split_queries(language)
    call_count = sum("@reference.call" in p for p in theirs)
    assert calls.pattern_count == call_count
    assert structure.pattern_count == whole.pattern_count - call_count


def test_strings_and_comments_do_not_split() -> None:
    source = (
        '; a (comment\n((call) @x (#eq? @x "a ( ;b\\"")) @reference.call\n[(a) (b)] @c\n"kw" @d'
    )
    assert _top_level_patterns(source) == [
        '((call) @x (#eq? @x "a ( ;b\\"")) @reference.call',
        "[(a) (b)] @c",
        '"kw" @d',
    ]
