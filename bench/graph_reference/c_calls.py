#!/usr/bin/env python3
"""Print every call site of a C source tree and the definition clang resolves it
to, as JSON lines (the format of go_calls.go and ts_calls.cjs). libclang from
PyPI (`clang.cindex`), run on each `.c` file as one translation unit.

    python c_calls.py ROOT [-I DIR ...] [-D NAME ...]

- A call (`CALL_EXPR`) whose callee is a function (`cursor.referenced` a
  function declaration) lands on that function's definition, found by its USR
  over every translation unit (a static function's USR names its file, so a
  static `f` of a.c is never the target of a call in b.c). Calls through a
  function pointer (a variable, a parameter, a struct field) reach no
  definition clang can name and are left out.
- A function-like macro invoked (`MACRO_INSTANTIATION`, with the detailed
  preprocessing record) lands on its `#define`.
- A call that a macro's expansion makes (its location is the macro's
  invocation, where the callee's name is not written) has shape `f() in a
  macro`.

Each site: path, line, column (1-based, of the callee's name or the macro's
invocation), name, shape (`f()`, `f() in a macro`, `macro()`), target path,
target_line (the line of the definition's name), target_name. Sites in headers
included by several translation units are printed once.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import clang.cindex as ci

_FUNCTION_LIKE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\(")


def system_includes() -> list[str]:
    """gcc's own header folder (stddef.h, stdarg.h): the libclang wheel has no
    resource headers of its own."""
    if shutil.which("gcc") is None:
        return []
    done = subprocess.run(["gcc", "-print-file-name=include"], capture_output=True, text=True)
    folder = done.stdout.strip()
    return [f"-isystem{folder}"] if folder and Path(folder).is_dir() else []


class Tree:
    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.lines: dict[str, list[str]] = {}

    def rel(self, location: ci.SourceLocation) -> str | None:
        if location.file is None:
            return None
        try:
            return Path(location.file.name).resolve().relative_to(self.root).as_posix()
        except ValueError:
            return None

    def text(self, path: str, line: int) -> str:
        if path not in self.lines:
            self.lines[path] = (self.root / path).read_text(errors="replace").splitlines()
        lines = self.lines[path]
        return lines[line - 1] if 1 <= line <= len(lines) else ""


def main() -> int:
    root = Path(sys.argv[1])
    flags = sys.argv[2:]
    tree = Tree(root)
    args = ["-x", "c", "-std=gnu11", *system_includes(), *flags]
    index = ci.Index.create()
    options = ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD
    definitions: dict[str, tuple[str, int, str]] = {}  # USR -> path, line, name
    macros: dict[tuple[str, int], str] = {}  # a function-like #define: (path, line) -> name
    calls: dict[tuple[str, int, int], tuple[str, str, str]] = {}  # site -> name, shape, USR
    invocations: dict[tuple[str, int, int], tuple[str, str, int]] = {}  # -> name, path, line
    for source in sorted(tree.root.rglob("*.c")):
        unit = index.parse(str(source), args=args, options=options)
        for cursor in unit.cursor.walk_preorder():
            kind = cursor.kind
            if kind == ci.CursorKind.FUNCTION_DECL and cursor.is_definition():
                path = tree.rel(cursor.location)
                if path is not None:
                    definitions.setdefault(
                        cursor.get_usr(), (path, cursor.location.line, cursor.spelling)
                    )
            elif kind == ci.CursorKind.MACRO_DEFINITION:
                path = tree.rel(cursor.location)
                line = cursor.location.line
                if path is not None:
                    text = tree.text(path, line)[cursor.location.column - 1 :]
                    if _FUNCTION_LIKE.match(text):
                        macros[(path, line)] = cursor.spelling
            elif kind == ci.CursorKind.MACRO_INSTANTIATION:
                _invocation(tree, cursor, invocations)
            elif kind == ci.CursorKind.CALL_EXPR:
                _call(tree, cursor, calls)
    out = sys.stdout
    for (path, line, column), (name, shape, usr) in sorted(calls.items()):
        if usr not in definitions:
            continue
        target, target_line, _ = definitions[usr]
        site = _site(path, line, column, name, shape, target, target_line)
        out.write(json.dumps(site) + "\n")
    for (path, line, column), (name, target, target_line) in sorted(invocations.items()):
        if macros.get((target, target_line)) != name:
            continue
        site = _site(path, line, column, name, "macro()", target, target_line)
        out.write(json.dumps(site) + "\n")
    return 0


def _site(
    path: str, line: int, column: int, name: str, shape: str, target: str, target_line: int
) -> dict[str, object]:
    return {
        "path": path,
        "line": line,
        "column": column,
        "name": name,
        "shape": shape,
        "target": target,
        "target_line": target_line,
        "target_name": name,
    }


def _call(
    tree: Tree, cursor: ci.Cursor, calls: dict[tuple[str, int, int], tuple[str, str, str]]
) -> None:
    callee = cursor.referenced
    if callee is None or callee.kind != ci.CursorKind.FUNCTION_DECL:
        return  # through a function pointer: no definition to name
    location = cursor.location
    path = tree.rel(location)
    if path is None:
        return
    name = callee.spelling
    written = tree.text(path, location.line)[location.column - 1 :]
    shape = "f()" if written.startswith(name) else "f() in a macro"
    calls.setdefault((path, location.line, location.column), (name, shape, callee.get_usr()))


def _invocation(
    tree: Tree, cursor: ci.Cursor, invocations: dict[tuple[str, int, int], tuple[str, str, int]]
) -> None:
    location = cursor.location
    path = tree.rel(location)
    definition = cursor.referenced
    if path is None or definition is None:
        return
    target = tree.rel(definition.location)
    if target is None:
        return
    after = tree.text(path, location.line)[location.column - 1 + len(cursor.spelling) :]
    if not after.lstrip().startswith("("):
        return  # an object-like use of the name
    key = (path, location.line, location.column)
    invocations.setdefault(key, (cursor.spelling, target, definition.location.line))


if __name__ == "__main__":
    sys.exit(main())
