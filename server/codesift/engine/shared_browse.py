"""The shared index's definitions, code graph and files as a server browses
them (`codesift web`'s symbols, graph and file over shared repositories).

    exact, fuzzy, status = shared_symbols(shared, "RetryPolicy", 20, TimeFilter())
    (walk, keys), status = shared_graph(shared, "submit", GraphQuery("callers"))
    window, status = shared_file(shared, "github.com/acme/pay@main", "pay/retry.py", 40, 10)

Each reads as the SharedIndex's principal (engine/shared_overlay.py): a
repository it may not read answers as one that does not exist (nothing found,
the same status). The served folders' own repositories (`exclude`) are left
out, as for a search. Paths come back within their repository, each with its
key. The shared index keeps no whole files: a file's lines are rebuilt from its
code and doc chunks (`stored_lines`), and lines no chunk holds as written (a
class's lines between its methods, say) come back as None.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from codesift.engine.results import GraphQuery, GraphResult, Symbol
from codesift.engine.shared_overlay import SharedIndex, SharedStatus, _is_database_error
from codesift.errors import QueryError
from codesift.timespec import TimeFilter

if TYPE_CHECKING:
    from codesift.engine.postgres import SharedSearch

__all__ = ["shared_file", "shared_graph", "shared_symbols", "split_key", "stored_lines"]

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
            value = read(shared._searcher(visible), visible)
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
    times: TimeFilter,
    exclude: Collection[str] = (),
    only: Collection[str] | None = None,
) -> tuple[Keyed, Keyed, SharedStatus]:
    """Definitions named `name`, then similar names, each with its repository."""

    def read(search: SharedSearch, visible: tuple[str, ...]) -> tuple[Keyed, Keyed]:
        found = search.symbols(name, limit, times)
        return _keyed(found.exact, visible), _keyed(found.fuzzy, visible)

    nothing: tuple[Keyed, Keyed] = ([], [])
    (exact, fuzzy), status = _read_visible(shared, exclude, only, read, nothing)
    return exact, fuzzy, status


def shared_graph(
    shared: SharedIndex,
    name: str,
    query: GraphQuery,
    exclude: Collection[str] = (),
    only: Collection[str] | None = None,
) -> tuple[tuple[GraphResult, dict[int, str]], SharedStatus]:
    """The walk from the definitions named `name` in the repositories in view,
    its nodes' paths within their repositories, and each node's repository."""

    def read(search: SharedSearch, visible: tuple[str, ...]) -> tuple[GraphResult, dict[int, str]]:
        walk = search.graph(name, query)
        keyed = _keyed(walk.nodes, visible)
        keys = {symbol.node.id: key for symbol, key in keyed}
        return replace(walk, nodes=tuple(symbol for symbol, _ in keyed)), keys

    return _read_visible(shared, exclude, only, read, (GraphResult((), (), ()), {}))


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
