"""No function of the package over cyclomatic complexity 25, as radon counts it
(`radon cc -s -n D server/codesift` lists those from 21): a function that
branches more has two jobs; split it by role.

ruff's C901 (mccabe) guards the same limit but counts differently (boolean
operators and comprehensions are free there), so a function can pass ruff and
still be over 25 here."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from radon.complexity import cc_visit
from radon.visitors import Function

PACKAGE = Path(__file__).resolve().parents[2] / "server" / "codesift"
LIMIT = 25


def _over_limit(package: Path = PACKAGE) -> Iterator[tuple[str, int]]:
    """("path/in/package.py:Class.function", complexity) of every function and
    method over LIMIT (radon's class blocks average their methods: not counted)."""
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).as_posix()
        for block in cc_visit(path.read_text(encoding="utf-8")):
            if isinstance(block, Function) and block.complexity > LIMIT:
                yield f"{rel}:{block.fullname}", int(block.complexity)


def test_no_function_is_over_complexity_25() -> None:
    over = dict(_over_limit())
    assert not over, (
        f"over cyclomatic complexity {LIMIT} (radon cc -s server/codesift); split by role:\n"
        + "\n".join(f"  {name}: {c}" for name, c in sorted(over.items()))
    )


def test_the_check_finds_functions_and_methods_over_the_limit(tmp_path: Path) -> None:
    branches = "".join(f"        if x == {i}:\n            return {i}\n" for i in range(LIMIT))
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "m.py").write_text(
        f"class C:\n    def m(self, x):\n{branches}        return -1\n\n\n"
        f"def f(x):\n{branches.replace('        ', '    ')}    return -1\n",
        encoding="utf-8",
    )
    # LIMIT branches and the function itself: one over.
    assert dict(_over_limit(tmp_path)) == {"sub/m.py:C.m": LIMIT + 1, "sub/m.py:f": LIMIT + 1}
