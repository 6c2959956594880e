"""The shared index's definitions, code graph and files as a server browses
them (`codesift web`'s symbols, graph and file over shared repositories).

    exact, fuzzy, status = shared_symbols(shared, "RetryPolicy", 20, NO_TIMES)
    as_of_v2 = ("v2.0", None, None)    # (as_of, since, until) as given
    (walk, keys), status = shared_graph(shared, "submit", GraphQuery("callers"), as_of_v2)
    window, status = shared_file(shared, "github.com/acme/pay@main", "pay/retry.py", 40, 10)

Each reads as the SharedIndex's principal (engine/shared_overlay.py): a
repository it may not read answers as one that does not exist (nothing found,
the same status). The served folders' own repositories (`exclude`) are left
out, as for a search. Paths come back within their repository, each with its
key.

A git-time window (`as_of`, `since`, `until`, as given) is resolved in each
repository on its own (engine/shared_pages.py, `repository_windows`): a
revision (`v2.0`, `HEAD~20`, a commit) in the folder that repository was
indexed from, so each repository is read at its own `v2.0`; a date or a
duration is the same window everywhere. A repository whose folder is not on
this machine, or that has no such revision, is left out of a read with
revisions.

The shared index keeps no whole files: a file's lines are rebuilt from its
code and doc chunks (`stored_lines`), and lines no chunk holds as written (a
class's lines between its methods, say) come back as None.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from codesift.engine.graph_merge import merge_walks
from codesift.engine.results import GraphQuery, GraphResult, Symbol
from codesift.engine.shared_overlay import SharedIndex, SharedStatus, _is_database_error
from codesift.engine.shared_pages import NO_TIMES, RawTimes, repository_windows
from codesift.errors import QueryError
from codesift.timespec import TimeFilter

if TYPE_CHECKING:
    from codesift.engine.postgres import SharedSearch

__all__ = [
    "NO_TIMES",
    "RawTimes",
    "shared_file",
    "shared_graph",
    "shared_symbols",
    "split_key",
    "stored_lines",
]

T = TypeVar("T")

Keyed = list[tuple[Symbol, str]]


def _read_visible(
    shared: SharedIndex,
    exclude: Collection[str],
    only: Collection[str] | None,
    read: Callable[[SharedSearch, tuple[str, ...]], T],
    empty: T,
) -> tuple[T, SharedStatus]:
    """`read(search, visible)` over the repositories in view (`exclude` left out,
    only those in `only` when given); `empty` when none is in view or the index
    cannot answer (the status says why)."""
    return _read_windows(
        shared, exclude, only, NO_TIMES, lambda search, keys, _: read(search, keys), empty
    )


def _read_windows(
    shared: SharedIndex,
    exclude: Collection[str],
    only: Collection[str] | None,
    times: RawTimes,
    read: Callable[[SharedSearch, tuple[str, ...], TimeFilter], T],
    empty: T,
    combine: Callable[[list[T]], T] | None = None,
) -> tuple[T, SharedStatus]:
    """`read(search, keys, window)` for each group of the repositories in view
    that share a time window (`_windows`), the answers `combine`d (one group:
    its answer); `empty` as `_read_visible` says."""
    with shared._lock:
        waiting = shared._waiting()
        if waiting is not None:
            return empty, waiting
        try:
            visible = tuple(s.key for s in shared._route_store(exclude).stamps())
            if only is not None:
                visible = tuple(key for key in visible if key in only)
            if not visible:
                shared._down = None
                return empty, SharedStatus("ok")
            values = [
                read(shared._searcher(keys), keys, window)
                for window, keys in repository_windows(shared._searcher, visible, times)
            ]
            if not values:
                value = empty
            elif len(values) == 1 or combine is None:
                value = values[0]
            else:
                value = combine(values)
        except QueryError:
            raise
        except Exception as exc:
            if not _is_database_error(exc):
                raise
            return empty, shared._failed(exc)
        shared._down = None
        return value, SharedStatus("ok", "", visible)


def split_key(path: str, visible: Sequence[str]) -> tuple[str, str] | None:
    """(repository key, path within it) of a path the shared index shows (with
    its key in front when several repositories are in view)."""
    if len(visible) == 1:
        return visible[0], path
    for key in sorted(visible, key=len, reverse=True):
        if path.startswith(key + "/"):
            return key, path[len(key) + 1 :]
    return None


def _keyed(symbols: Sequence[Symbol], visible: Sequence[str]) -> Keyed:
    out: Keyed = []
    for symbol in symbols:
        place = split_key(symbol.node.path, visible)
        if place is not None:
            out.append((replace(symbol, node=replace(symbol.node, path=place[1])), place[0]))
    return out


def shared_symbols(
    shared: SharedIndex,
    name: str,
    limit: int,
    times: RawTimes = NO_TIMES,
    exclude: Collection[str] = (),
    only: Collection[str] | None = None,
) -> tuple[Keyed, Keyed, SharedStatus]:
    """Definitions named `name`, then similar names, each with its repository;
    `times` resolved in each repository."""

    def read(
        search: SharedSearch, visible: tuple[str, ...], window: TimeFilter
    ) -> tuple[Keyed, Keyed]:
        found = search.symbols(name, limit, window)
        return _keyed(found.exact, visible), _keyed(found.fuzzy, visible)

    def combine(parts: list[tuple[Keyed, Keyed]]) -> tuple[Keyed, Keyed]:
        fuzzy = [item for _, similar in parts for item in similar]
        fuzzy.sort(key=lambda item: -item[0].score)  # stable: each group's order kept
        return [item for exact, _ in parts for item in exact], fuzzy

    nothing: tuple[Keyed, Keyed] = ([], [])
    (exact, fuzzy), status = _read_windows(shared, exclude, only, times, read, nothing, combine)
    return exact, fuzzy, status


def shared_graph(
    shared: SharedIndex,
    name: str,
    query: GraphQuery,
    times: RawTimes = NO_TIMES,
    exclude: Collection[str] = (),
    only: Collection[str] | None = None,
) -> tuple[tuple[GraphResult, dict[int, str]], SharedStatus]:
    """The walk from the definitions named `name` in the repositories in view,
    its nodes' paths within their repositories, and each node's repository;
    `times` resolved in each repository (the query's own `times` unused then),
    the walks of repositories with different windows as one (graph_merge)."""
    Walk = tuple[GraphResult, dict[int, str]]

    def read(search: SharedSearch, visible: tuple[str, ...], window: TimeFilter) -> Walk:
        walk = search.graph(name, replace(query, times=window) if times != NO_TIMES else query)
        keyed = _keyed(walk.nodes, visible)
        keys = {symbol.node.id: key for symbol, key in keyed}
        return replace(walk, nodes=tuple(symbol for symbol, _ in keyed)), keys

    def key_of(keys: dict[int, str]) -> Callable[[Symbol], str]:
        return lambda symbol: keys.get(symbol.node.id, "")

    def combine(parts: list[Walk]) -> Walk:
        return merge_walks([(walk, key_of(keys)) for walk, keys in parts], query.max_nodes)

    return _read_windows(shared, exclude, only, times, read, (GraphResult((), (), ()), {}), combine)


def shared_file(
    shared: SharedIndex,
    key: str,
    path: str,
    line: int,
    context: int,
    exclude: Collection[str] = (),
) -> tuple[dict[str, Any] | None, SharedStatus]:
    """Lines `line - context` .. `line + context` of the file `path` of the
    repository `key` as `stored_lines` rebuilds them; None when this principal
    reads no such file (or the index cannot answer: the status says so)."""
    if key in exclude:
        return None, SharedStatus("ok")
    first, last = max(1, line - context), line + context

    def read(search: SharedSearch, visible: tuple[str, ...]) -> dict[str, Any] | None:
        found = search.file_chunks(key, path, first, last)
        if found is None:
            return None
        count, chunks = found
        return {"repo": key, "path": path, **stored_lines(count, chunks, line, context)}

    return _read_visible(shared, exclude, (key,), read, None)


def stored_lines(
    count: int, chunks: Sequence[tuple[int, int, int, str]], line: int, context: int
) -> dict[str, Any]:
    """A file's lines around `line` from its chunks (start, end, part, text):
    each line from the narrowest chunk that holds it as written (a chunk whose
    text has one line per line of its span; a later part's first line, its
    header, left out). `lines[i]` is None where no chunk does; `missing` lists
    those line numbers."""
    line = max(1, min(line, count))
    first = max(1, line - context)
    last = min(count, line + context)
    lines: list[str | None] = [None] * max(0, last - first + 1)
    for start, end, part, text in sorted(chunks, key=lambda c: c[0] - c[1]):
        body = text.split("\n")
        if part > 0:
            body = body[1:]
        if len(body) != end - start + 1:
            continue  # stubs for nested definitions: not the file's own lines
        for number in range(max(start, first), min(end, last) + 1):
            lines[number - first] = body[number - start]
    return {
        "start_line": first,
        "end_line": last,
        "total_lines": count,
        "lines": lines,
        "stored": "chunks",
        "missing": [first + i for i, text in enumerate(lines) if text is None],
    }
