"""Doc comments and docstrings as parsing reads them from the tree: the first
statement of a body, a comment tree-sitter keeps inside the previous definition,
and Haskell equations (looked for only in grammars that have them)."""

from __future__ import annotations

import pytest

from codesift.config import IndexSettings
from codesift.parsing import parse_source
from codesift.parsing.comments import EQUATION_KINDS
from codesift.parsing.grammars import has_equations, language_for
from codesift.parsing.model import ParsedNode

PY = '''class Store:
    def get(self):
        return 1
        # Puts a value.
    def put(self):
        return 2


def documented():
    # a note before the docstring
    """The doc."""
    return 1


def undocumented():
    x = 1
    """A string, but not the first statement."""
'''


def _nodes() -> dict[str, ParsedNode]:
    parsed = parse_source(PY, "store.py", "python", IndexSettings())
    return {n.name: n for n in parsed.nodes}


def test_the_docstring_is_the_first_statement_after_comments() -> None:
    nodes = _nodes()
    assert nodes["documented"].docstring == "The doc."
    assert nodes["undocumented"].docstring == ""


def test_a_comment_left_inside_the_previous_definition_documents_the_next() -> None:
    # tree-sitter-python ends `get`'s block with the comment written above `put`.
    put = _nodes()["put"]
    assert (put.docstring, put.doc_start_line, put.start_line) == ("Puts a value.", 4, 5)
    assert _nodes()["get"].docstring == ""


@pytest.mark.parametrize("language", ["haskell", "python", "c", "javascript", "elixir"])
def test_equations_are_looked_for_where_the_grammar_has_them(language: str) -> None:
    grammar = language_for(language)
    kinds = [grammar.id_for_node_kind(kind, True) for kind in EQUATION_KINDS]
    assert has_equations(language) == any(k is not None for k in kinds)
    assert has_equations(language) == (language == "haskell")
