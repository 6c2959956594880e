"""An index's outline: its files and their module-level definitions, for describing a
whole source (routing a question to the repository it is about)."""

from __future__ import annotations

from dataclasses import dataclass

import apsw

__all__ = ["OutlineFile", "source_outline"]


@dataclass(frozen=True, slots=True)
class OutlineFile:
    path: str
    language: str
    names: tuple[str, ...]  # qualified names of its module-level definitions, in line order


def source_outline(conn: apsw.Connection) -> list[OutlineFile]:
    """Every indexed file (by path) with the qualified names of the definitions at
    its top level (no parent, or a module as parent)."""
    names: dict[int, list[str]] = {}
    for file_id, qualified_name in conn.execute(
        "SELECT n.file_id, n.qualified_name FROM nodes n"
        " LEFT JOIN nodes p ON p.id = n.parent_id"
        " WHERE n.kind != 'module' AND (n.parent_id IS NULL OR p.kind = 'module')"
        " ORDER BY n.file_id, n.start_line, n.id"
    ):
        names.setdefault(int(file_id), []).append(str(qualified_name))
    return [
        OutlineFile(str(path), str(language), tuple(names.get(int(file_id), ())))
        for file_id, path, language in conn.execute(
            "SELECT id, path, language FROM files ORDER BY path"
        )
    ]
