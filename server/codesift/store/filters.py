"""Search filters and their SQLite conditions.

`SearchFilters` says what a search keeps (layers, languages, path globs, a git
time window); it is plain data that every backend receives. The functions here
turn it into SQLite SQL: conditions prefixed with AND and their parameters, to be
put inside a stream's own statement, before its candidate cap. User text (paths,
languages) is always bound as a parameter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from codesift.timespec import TimeFilter

__all__ = [
    "PATH_HIT_LAYERS",
    "PathRow",
    "SearchFilters",
    "file_conditions",
    "files_join",
    "like_suffix",
    "path_hit_order",
    "time_conditions",
]


@dataclass(frozen=True, slots=True)
class SearchFilters:
    """layers     the chunk layers searched (code, ast, summary, doc)
    languages  file languages kept (none: all)
    paths      path globs kept (`**/` and `**` match any folders; a glob without a
               slash matches the file name in any folder)
    times      the git time window on created / last-changed times"""

    layers: tuple[str, ...]
    languages: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    times: TimeFilter = field(default_factory=TimeFilter)

    @property
    def on_files(self) -> bool:
        """Whether a language or path filter applies (it needs the files table)."""
        return bool(self.languages or self.paths)


def files_join(filters: SearchFilters, file_id: str) -> str:
    """` JOIN files f ON f.id = <file_id>` when a language or path filter needs the
    files table (`file_conditions`), else nothing: the join costs a lookup per row."""
    return f" JOIN files f ON f.id = {file_id}" if filters.on_files else ""


def file_conditions(filters: SearchFilters, alias: str = "f") -> tuple[str, list[object]]:
    """SQL conditions (prefixed with AND) on the files table, and their parameters."""
    sql = ""
    params: list[object] = []
    if filters.languages:
        sql += f" AND {alias}.language IN ({','.join('?' * len(filters.languages))})"
        params.extend(filters.languages)
    if filters.paths:
        ors = []
        for pattern in filters.paths:
            glob = pattern.replace("**/", "*").replace("**", "*")
            if "/" in pattern:
                ors.append(f"{alias}.path GLOB ?")
                params.append(glob.lstrip("/"))
            else:
                # A pattern without a slash matches the file name in any folder.
                ors.append(f"({alias}.path GLOB ? OR {alias}.path GLOB ?)")
                params.extend([glob, f"*/{glob}"])
        sql += " AND (" + " OR ".join(ors) + ")"
    return sql, params


def time_conditions(
    window: TimeFilter,
    changed: str,
    created: str,
    now: float | None = None,
    *,
    mark: str = "?",
) -> tuple[str, list[object]]:
    """Conditions (each prefixed with AND) on the given changed/created columns.

    A row without times (history not computed yet) passes no bound; bounds at or
    after `now` are left out (`TimeFilter.active_bounds`). `mark` is the driver's
    parameter placeholder (`?` for SQLite, `%s` for psycopg)."""
    since, until, as_of = window.active_bounds(now)
    sql = ""
    params: list[object] = []
    if since is not None:
        sql += f" AND coalesce({changed}, {created}) >= {mark}"
        params.append(since)
    if until is not None:
        sql += f" AND coalesce({changed}, {created}) <= {mark}"
        params.append(until)
    if as_of is not None:
        sql += f" AND {created} <= {mark}"
        params.append(as_of)
    return sql, params


# The layers a file's path hit is shown in, most telling first.
PATH_HIT_LAYERS = ("code", "doc", "summary", "ast")


# (chunk id, file path, layer, start line, part, end line) of a path query's files.
PathRow = tuple[int, str, str, int, int, int]


def path_hit_order(
    path: str, rows: Sequence[Sequence[Any]], cap: int, line: int = 0
) -> list[tuple[int, float]]:
    """Of the rows (PathRow, as a backend's driver gives them) of the files a path
    query names, each file's first chunk in its
    most telling layer (with `line`: its code chunk holding that line, the
    narrowest, if it has one), scored 1.0 for the file whose path is `path`, 0.95
    for one whose path ends with it in case, else 0.9; best first, then shorter
    paths first (`path_hits` of every backend)."""
    best: dict[str, tuple[int, int, int, int, int]] = {}
    typed: list[PathRow] = [
        (int(a), str(b), str(c), int(d), int(e), int(f)) for a, b, c, d, e, f in rows
    ]
    for chunk_id, file_path, layer, start, part, end in typed:
        rank = PATH_HIT_LAYERS.index(layer) if layer in PATH_HIT_LAYERS else len(PATH_HIT_LAYERS)
        holds = line > 0 and layer == "code" and start <= line <= end
        key = (0 if holds else 1, rank, end - start if holds else start, part, chunk_id)
        if file_path not in best or key < best[file_path]:
            best[file_path] = key
    scored = [
        (
            1.0 if file_path == path else 0.95 if file_path.endswith("/" + path) else 0.9,
            file_path,
            key[4],
        )
        for file_path, key in best.items()
    ]
    scored.sort(key=lambda item: (-item[0], len(item[1]), item[1]))
    return [(chunk_id, score) for score, _, chunk_id in scored[:cap]]


def like_suffix(path: str) -> str:
    """A LIKE pattern (escape character `\\`) for paths ending with `/path`."""
    escaped = path.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return "%/" + escaped
