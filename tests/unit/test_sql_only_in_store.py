"""SQL lives only in codesift/store/: every other module of the package reads and
writes the index through the store's functions and classes.

The check reads the source of every module outside store/ and lists each place
that runs a statement (`.execute(`, `.executemany(`, `.executescript(`, or the
store's `scalar(` helper) or spells one (a string that starts with an SQL
statement keyword), with its file and line.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import codesift

PACKAGE = Path(codesift.__file__).resolve().parent
STORE = PACKAGE / "store"

# Methods of an apsw connection or cursor that run statements, and the store's helper
# that runs one (a plain function call); a module's own function named `execute`
# is not SQL.
_RUNS_SQL_METHODS = frozenset({"execute", "executemany", "executescript"})
_RUNS_SQL_FUNCTIONS = frozenset({"scalar"})
_SQL_TEXT = re.compile(
    r"^\s*(SELECT|INSERT|UPDATE|DELETE|REPLACE|CREATE|DROP|ALTER|PRAGMA|WITH|VACUUM)\s"
)


def _runs_sql(call: ast.Call) -> str | None:
    func = call.func
    if isinstance(func, ast.Attribute) and func.attr in _RUNS_SQL_METHODS | _RUNS_SQL_FUNCTIONS:
        return func.attr
    if isinstance(func, ast.Name) and func.id in _RUNS_SQL_FUNCTIONS:
        return func.id
    return None


def sql_in(path: Path) -> list[str]:
    """`line: what` for each line of the module at `path` that runs or spells a
    statement, in line order."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: dict[int, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (name := _runs_sql(node)) is not None:
            found.setdefault(node.lineno, f"{name}(...)")
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and _SQL_TEXT.match(node.value)
        ):
            found.setdefault(node.lineno, repr(node.value.strip()[:40]))
    return [f"{line}: {what}" for line, what in sorted(found.items())]


def modules_outside_store() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if STORE not in p.parents)


def test_the_check_finds_sql(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "def f(conn, ids):\n"
        "    conn.execute('SELECT 1')\n"
        "    conn.executemany(f'UPDATE t SET a = ? WHERE id IN ({ids})', [])\n"
        "    return scalar(conn, q)\n"
        "Q = '''\n    DELETE FROM files WHERE id = ?'''\n"
        "DOC = 'Select a node, then delete it.'\n"
        "def g(args):\n"
        "    return execute(args)\n"
    )
    assert [line.split(":")[0] for line in sql_in(module)] == ["2", "3", "4", "5"]


def test_no_module_outside_store_runs_or_spells_sql() -> None:
    offenders = {
        str(path.relative_to(PACKAGE)): found
        for path in modules_outside_store()
        if (found := sql_in(path))
    }
    listing = "\n".join(
        f"  {module}:{line}" for module, lines in sorted(offenders.items()) for line in lines
    )
    assert not offenders, f"SQL outside codesift/store/ (move it into store/):\n{listing}"


# Writes of the meta table go through store/meta.py (`write_meta`); the migrations
# change it as a schema step. store/vectors.py still records the vectors' model
# key with a statement of its own (one line) until it calls write_meta; it may not
# add more.
META_WRITERS = frozenset({"store/meta.py", "store/migrations.py"})
META_WRITES_MOVING: dict[str, int] = {"store/vectors.py": 1}
_META_WRITE = re.compile(r"\b(INTO|UPDATE|DELETE\s+FROM)\s+meta\b", re.IGNORECASE)


def meta_writes_in(path: Path) -> list[str]:
    """`line: statement` for each string in the module that writes the meta table."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return sorted(
        {
            f"{node.lineno}: {node.value.strip()[:50]!r}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and _META_WRITE.search(node.value)
        }
    )


def test_meta_is_written_through_one_helper() -> None:
    offenders: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = str(path.relative_to(PACKAGE))
        found = meta_writes_in(path)
        if module not in META_WRITERS and len(found) > META_WRITES_MOVING.get(module, 0):
            offenders[module] = found
    listing = "\n".join(
        f"  {module}:{line}" for module, lines in sorted(offenders.items()) for line in lines
    )
    assert not offenders, f"meta written outside store/meta.py (call write_meta):\n{listing}"


def test_the_check_finds_meta_writes_and_not_reads(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "READ = 'SELECT value FROM meta WHERE key = ?'\n"
        "A = 'INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)'\n"
        "B = 'DELETE FROM meta WHERE key = ?'\n"
        "C = 'UPDATE metadata SET x = 1'\n"
    )
    assert [line.split(":")[0] for line in meta_writes_in(module)] == ["2", "3"]
