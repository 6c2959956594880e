"""web/ is a thin front end: it never imports the CLI, the store or the
retrieval layer (it asks the engine, through the MCP handlers, and renders)."""

from __future__ import annotations

import ast
from pathlib import Path

import codesift

WEB = Path(codesift.__file__).resolve().parent / "web"
FORBIDDEN = ("codesift.cli", "codesift.store", "codesift.retrieval")


def imports_of(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_web_imports_no_cli_store_or_retrieval() -> None:
    modules = sorted(WEB.glob("*.py"))
    assert modules
    bad = {p.name: sorted(m for m in imports_of(p) if m.startswith(FORBIDDEN)) for p in modules}
    assert {name: found for name, found in bad.items() if found} == {}
