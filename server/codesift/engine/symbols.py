"""Definitions by name: exact matches first, then similar names.

One implementation for every front end (`codesift symbols`, workspace/symbol,
MCP): exact matches are `nodes_named` (the name, or a qualified name ending
with the typed one after a separator; exact case first); similar names come
from the name and trigram indexes (store/names.py) scored here:

  exact name > name prefix > substring > camel-case/word initials > subsequence
  > trigram overlap, plus a bonus when the qualified name matches the typed
  qualifier (`Pool.imap`, `http::Server`), minus a little for long names.

When those leave room under the limit, definitions whose signatures match the
name's words come next (the `ast` layer through the Searcher: identifier-split
BM25, so `parseConfig` finds `class ConfigParser` and `rrf` a docstring's
`fuse_rankings`). Measured on codesift's own index: the name scorer wins on
typos (`IndexLok` -> IndexLock first, the word search puts IndexPlan first) and
initials (`flv` -> fill_vectors, the word search finds nothing) at ~1 ms; the
word search wins on reordered or spaced words (`parseConfig`, `score name`,
`rrf`) at 2-10 ms. Neither scans the nodes table; a git-time window filters
all of them before the limit.

Every index answers through the same port (store/ports.NodeStore): the local
SQLite index (an apsw connection is wrapped in `SqliteNodeStore`) and the shared
index on PostgreSQL as one reader (store/postgres/nodes.py), whose similar names
come from pg_trgm and which has no signature search here (no `searcher`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import apsw

from codesift.engine.results import MAX_SYMBOLS, Symbol, SymbolMatches
from codesift.errors import QueryError
from codesift.history.records import change_info
from codesift.retrieval.request import SearchRequest
from codesift.store.names import trigrams
from codesift.store.ports import NodeStore
from codesift.store.reader import NodeRow
from codesift.store.sqlite import SqliteNodeStore
from codesift.timespec import TimeFilter

if TYPE_CHECKING:  # the searcher (numpy, the streams) is loaded by a search, not here
    from codesift.retrieval.search import Searcher

__all__ = [
    "MAX_SYMBOLS",
    "find_symbols",
    "node_store",
    "score_name",
    "similar_names",
    "word_matches",
]

_SEPARATORS = re.compile(r"::|\.|#|->|\\|/|\s+")


def _initials(name: str) -> str:
    """`TimedRotatingFileHandler` -> `trfh`, `parse_http_header` -> `phh`."""
    parts = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", name)
    return "".join(p[0] for p in parts).lower()


def _subsequence(query: str, name: str) -> bool:
    it = iter(name)
    return all(ch in it for ch in query)


def score_name(query: str, name: str) -> float:
    """How well `name` matches the typed `query` (both one component), 0 for no match."""
    if not query:
        return 0.0
    q, n = query.lower(), name.lower()
    if name == query:
        return 100.0
    if n == q:
        return 95.0
    if n.startswith(q):
        return 80.0 - min(len(n) - len(q), 30) * 0.2
    if q in n:
        at = n.index(q)
        boundary = at > 0 and (name[at - 1] in "_$" or name[at].isupper())
        return (65.0 if boundary else 55.0) - min(len(n) - len(q), 30) * 0.2
    if len(q) >= 2 and _initials(name).startswith(q):
        return 50.0
    if len(q) >= 3 and _subsequence(q, n):
        return 35.0 - min(len(n) - len(q), 30) * 0.3
    qt, nt = set(trigrams(q)), set(trigrams(n))
    if not qt or not nt:
        return 0.0
    # How much of what was typed the name contains (a typo costs a few trigrams).
    overlap = len(qt & nt) / len(qt)
    if overlap < 0.5:
        return 0.0
    return 30.0 * overlap - min(len(n) - len(q), 30) * 0.2


def _qualifier_bonus(qualifier: list[str], qualified_name: str) -> float:
    qparts = [p.lower() for p in _SEPARATORS.split(qualified_name) if p][:-1]
    if ".".join(qparts).endswith(".".join(qualifier)):
        return 20.0
    if all(any(w in p for p in qparts) for w in qualifier):
        return 8.0
    return -15.0


def node_store(index: apsw.Connection | NodeStore) -> NodeStore:
    """The port over `index`: a local index's connection is wrapped."""
    return SqliteNodeStore(index) if isinstance(index, apsw.Connection) else index


def similar_names(
    index: apsw.Connection | NodeStore, query: str, limit: int, times: TimeFilter | None = None
) -> list[tuple[float, int]]:
    """(score, node id) of the definitions whose names best match `query`, best first."""
    parts = [p for p in _SEPARATORS.split(query.strip()) if p]
    if not parts:
        return []
    tail = parts[-1]
    qualifier = [p.lower() for p in parts[:-1]]
    scored: list[tuple[float, int]] = []
    for node_id, name, qname, kind in node_store(index).similar_names(tail, times):
        score = score_name(tail, name)
        if score <= 0:
            continue
        if qualifier:
            score += _qualifier_bonus(qualifier, qname)
        if kind == "module":
            score -= 5
        scored.append((score, node_id))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return scored[:limit]


def word_matches(
    searcher: Searcher, name: str, limit: int, times: TimeFilter | None = None
) -> list[int]:
    """Node ids of the signatures matching the words of `name`, best first."""
    window = times or TimeFilter()
    response = searcher.search(
        SearchRequest(
            query=name,
            top_k=min(MAX_SYMBOLS, limit),
            layers=("ast",),
            as_of=window.as_of,
            since=window.since,
            until=window.until,
        )
    )
    return [r.node_id for r in response.results if r.node_id is not None]


def _similar(
    store: NodeStore, name: str, limit: int, exact: list[NodeRow], window: TimeFilter | None
) -> list[tuple[float, NodeRow]]:
    """Similar names after the `exact` ones (`limit` in all), best first."""
    if len(exact) >= limit:
        return []
    seen = {n.id for n in exact}
    # Ask for more than needed: the time window and the exact ones drop some.
    wanted = (limit - len(exact)) * (4 if window else 1) + len(exact)
    fuzzy = [(s, i) for s, i in similar_names(store, name, wanted, window) if i not in seen]
    if window:
        kept = store.nodes_in_time([i for _, i in fuzzy], window)
        fuzzy = [(s, i) for s, i in fuzzy if i in kept]
    fuzzy = fuzzy[: limit - len(exact)]
    rows = store.node_rows([i for _, i in fuzzy])
    similar = [(s, rows[i]) for s, i in fuzzy if i in rows]
    # Equal scores: the shorter qualified name first (the more likely meant).
    similar.sort(key=lambda item: (-item[0], len(item[1].qualified_name), item[1].path))
    return similar


def _by_words(
    store: NodeStore,
    searcher: Searcher,
    name: str,
    limit: int,
    room: int,
    listed: set[int],
    window: TimeFilter | None,
) -> list[tuple[float, NodeRow]]:
    """Up to `room` definitions whose signatures match the name's words (of the
    best `limit`), not `listed`."""
    ids = [i for i in word_matches(searcher, name, limit, window) if i not in listed]
    words = store.node_rows(ids[:room])
    return [(0.0, words[i]) for i in ids[:room] if i in words]


def find_symbols(
    index: apsw.Connection | NodeStore,
    name: str,
    limit: int = 20,
    times: TimeFilter | None = None,
    *,
    searcher: Searcher | None = None,
    history: bool = True,
) -> SymbolMatches:
    """Exact matches (at most `limit`), then similar names, then (with a `searcher`
    over the same index) signatures matching the name's words, `limit` in all, from
    a local index's connection or any `NodeStore`. QueryError for a name holding a
    NUL character (SQLite's text ends there)."""
    if "\x00" in name:
        raise QueryError("the name holds a NUL character")
    store = node_store(index)
    window = times if times else None
    exact = store.nodes_named(name, limit=limit, include_modules=True, times=window)
    similar = _similar(store, name, limit, exact, window)
    room = limit - len(exact) - len(similar)
    if room > 0 and searcher is not None:
        listed = {n.id for n in exact} | {n.id for _, n in similar}
        similar.extend(_by_words(store, searcher, name, limit, room, listed, window))
    shown = [*(n.id for n in exact), *(n.id for _, n in similar)]
    times_of = (
        {i: change_info(row) for i, row in store.node_times(shown).items()} if history else {}
    )
    return SymbolMatches(
        name=name,
        exact=tuple(Symbol(n, times_of.get(n.id)) for n in exact),
        fuzzy=tuple(Symbol(n, times_of.get(n.id), s) for s, n in similar),
    )
