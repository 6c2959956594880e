"""Definitions for an editor's navigation: by id, in a file, at a place in a file,
and the calls in and out of one. The language server (lsp/navigation.py,
lsp/symbols.py, lsp/graph.py) reads the index through these, never store/ itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import apsw

from codesift.engine.graph import walk_graph
from codesift.engine.results import GraphLink, GraphQuery, NodeRow
from codesift.store.reader import node_ids_in_file, node_rows, nodes_at_line, nodes_named
from codesift.store.reader import resolved_target as _resolved_target

__all__ = ["CallsOf", "calls_of", "definitions_at", "definitions_by_id", "file_definitions"]

# Definitions named like the word at a place that navigation lists at most.
NAMED_LIMIT = 20
# A definition's name may sit this many lines below the line it starts on
# (decorators, annotations, a signature over several lines).
NAME_LINES = 2
# The most definitions a walk lists (the definition itself and those calling it,
# or called by it): the walk's own bound.
CALLS_LIMIT = 2000


def definitions_by_id(conn: apsw.Connection, ids: Sequence[int]) -> dict[int, NodeRow]:
    """The definitions with these ids (those that exist), by id."""
    return node_rows(conn, list(ids))


def file_definitions(conn: apsw.Connection, path: str) -> tuple[list[int], dict[int, NodeRow]]:
    """The ids of the definitions in file `path` (in the file's order) and the
    definitions by id."""
    ids = node_ids_in_file(conn, path)
    return ids, node_rows(conn, ids)


def definitions_at(
    conn: apsw.Connection, path: str, line: int, word: str
) -> tuple[list[NodeRow], bool]:
    """The definitions the identifier `word` on line `line` (1-based) of file `path`
    means, best first, and whether the place is the definition itself:

    1. `word` names a definition that starts on this line: that one;
    2. a call from the innermost definition around the line to that name,
       resolved by the indexer: its target;
    3. definitions with that name: this file's first, then the rest.
    """
    here = nodes_at_line(conn, path, line)
    for node_id, name, start in here:
        if name == word and start <= line <= start + NAME_LINES:
            return list(node_rows(conn, [node_id]).values()), True
    for node_id, _, _ in here:  # innermost first
        target = _resolved_target(conn, node_id, word)
        if target is not None:
            found = node_rows(conn, [target])
            if found:
                return list(found.values()), False
    named = nodes_named(conn, word, limit=NAMED_LIMIT, include_modules=True)
    named.sort(key=lambda n: n.path != path)
    return named, False


class CallsOf(NamedTuple):
    """The definitions calling or called by one definition (`calls`: each with
    its call edges and whether all of them are guesses), and how many more the
    limit left out (`omitted`)."""

    calls: list[tuple[NodeRow, list[GraphLink], bool]]
    omitted: int


def calls_of(
    conn: apsw.Connection,
    node_id: int,
    direction: str,
    guesses: str = "show",
    limit: int = CALLS_LIMIT,
) -> CallsOf:
    """The definitions calling (`callers`) or called by (`callees`) a definition,
    each with its call edges and whether all of them were found by the name alone
    (a guess: confidence unique or guess), in the order the engine's walk lists
    them; with `guesses` "apart" the guesses come last, with "hide" they are left
    out, with "show" they stay in place (and are not marked). At most `limit`
    definitions besides this one; how many more there are is `omitted`."""
    start = list(node_rows(conn, [node_id]).values())
    if not start:
        return CallsOf([], 0)
    # The definition itself is one of the walk's nodes: one more than the limit.
    query = GraphQuery(direction, 1, ("calls",), min(max(limit, 1) + 1, CALLS_LIMIT))
    walk = walk_graph(conn, start, query, history=False)
    out: dict[int, tuple[NodeRow, list[GraphLink]]] = {}
    for link in walk.edges:
        other_id = link.source if direction == "callers" else link.target
        other = walk.node(other_id) if other_id is not None else None
        if other is None:
            continue
        out.setdefault(other.node.id, (other.node, []))[1].append(link)
    found = [(node, links, all(link.guessed for link in links)) for node, links in out.values()]
    if guesses == "hide":
        return CallsOf([item for item in found if not item[2]], walk.omitted)
    if guesses == "apart":
        apart = [item for item in found if not item[2]] + [item for item in found if item[2]]
        return CallsOf(apart, walk.omitted)
    return CallsOf([(node, links, False) for node, links, _ in found], walk.omitted)
