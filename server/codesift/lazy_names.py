"""A package's names loaded on first use (PEP 562), so importing the package (or
one of its modules) does not import every module behind its names."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(
    package: str, homes: Mapping[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module `__getattr__` and `__dir__` of `package`: each name of `homes`
    (name -> the module that defines it) is imported on first use and kept in
    `namespace` (the package's globals())."""

    def module_getattr(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        namespace[name] = value
        return value

    def module_dir() -> list[str]:
        return sorted({*namespace, *namespace.get("__all__", ())})

    return module_getattr, module_dir
