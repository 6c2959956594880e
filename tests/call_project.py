"""A generated Python project large enough for an index run to defer its calls
to the call pass (more than DEFER_CALLS_MIN_FILES files), with relative imports,
methods through `self` and module-qualified calls across files."""

from __future__ import annotations

from pathlib import Path

from codesift.indexer import DEFER_CALLS_MIN_FILES

MODULES = DEFER_CALLS_MIN_FILES + 20


def write_project(root: Path) -> Path:
    """`app/m<i>.py`: a class whose method calls the previous module's function
    through a relative import, its own helper through `self`, and a module-level
    function calling the next module's class through the package."""
    package = root / "app"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('"""The generated app."""\n')
    for i in range(MODULES):
        prev, nxt = (i - 1) % MODULES, (i + 1) % MODULES
        (package / f"m{i}.py").write_text(
            f'"""Module {i}."""\n'
            f"from .m{prev} import work_{prev}\n"
            f"from . import m{nxt}\n\n\n"
            f"class Store{i}:\n"
            f'    """Keeps the items of part {i}."""\n\n'
            f"    def put_{i}(self, item):\n"
            f"        self.check_{i}(item)\n"
            f"        return work_{prev}(item)\n\n"
            f"    def check_{i}(self, item):\n"
            f"        return item is not None\n\n\n"
            f"def work_{i}(item):\n"
            f'    """Works on one item of part {i}."""\n'
            f"    store = m{nxt}.Store{nxt}()\n"
            f"    return store.check_{nxt}(item)\n"
        )
    return root
