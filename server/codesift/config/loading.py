"""Reading, checking and merging settings: the flat list of every setting
(`setting_fields`), the cattrs converter, the one validation pass
(`check_settings`), and the strict and lenient entry points (`load_settings`,
`merge_settings`; `resolve_settings`, `merge_settings_leniently`).
codesift/config/__init__.py says more."""

from __future__ import annotations

import functools
import math
import typing
from collections.abc import Iterator, Mapping
from dataclasses import MISSING, Field, dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codesift.config.schema import (
    _LIST_SECTIONS,
    _NO_LIMITS,
    CONFIG_FILE_NAME,
    Limits,
    Settings,
)
from codesift.errors import ConfigError

if TYPE_CHECKING:
    import cattrs

__all__ = [
    "Problem",
    "Setting",
    "check_fields",
    "check_settings",
    "check_value",
    "converter",
    "load_settings",
    "merge_settings",
    "merge_settings_leniently",
    "resolve_settings",
    "setting_fields",
]


@dataclass(frozen=True, slots=True)
class Setting:
    """One leaf of an options dataclass: its dotted key, type, default and limits."""

    key: str
    name: str
    type: Any
    default: Any
    limits: Limits


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _default(spec: Field[Any]) -> Any:
    if spec.default_factory is not MISSING:
        return spec.default_factory()
    return spec.default


def _leaves(cls: type, prefix: str) -> Iterator[Setting]:
    hints = _hints(cls)
    for spec in fields(cls):
        if spec.metadata.get("internal"):
            continue
        yield Setting(
            f"{prefix}{spec.name}",
            spec.name,
            hints[spec.name],
            _default(spec),
            spec.metadata.get("limits", _NO_LIMITS),
        )


def _section_class(name: str) -> type:
    return _LIST_SECTIONS.get(name) or _hints(Settings)[name]


def setting_fields(cls: type = Settings) -> list[Setting]:
    """Every setting of the tree rooted at `cls`, as dotted keys (`search.top_k`,
    `collections[].name`), in declaration order; the sections of `Settings` are
    walked into."""
    if cls is Settings:
        return [
            leaf
            for section in fields(Settings)
            for leaf in _leaves(
                _section_class(section.name),
                f"{section.name}[]." if section.name in _LIST_SECTIONS else f"{section.name}.",
            )
        ]
    return list(_leaves(cls, ""))


# -- the converter -----------------------------------------------------------------------
#
# cattrs structures the tree from plain mappings and unstructures it back. Its own
# hooks for primitives are lenient (int("10"), str(3), bool(1)); a setting must have
# the type it is documented with, so these hooks accept exactly that type (an int
# where a number is asked for) and say what was expected.


def _bool(value: Any, _: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"must be true or false, got {value!r}")
    return value


def _int(value: Any, _: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"must be an integer, got {value!r}")
    return value


def _float(value: Any, _: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"must be a number, got {value!r}")
    return float(value)


def _str(value: Any, _: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"must be a string, got {value!r}")
    return value


def _strings(value: Any, _: Any) -> tuple[str, ...]:
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"must be a list of strings, got {value!r}")
    return tuple(value)


@functools.cache
def converter() -> cattrs.Converter:
    """The converter of every options dataclass (imported on first use: a CLI run
    without a `.codesift.toml` or overrides never needs it)."""
    import cattrs

    conv = cattrs.Converter(forbid_extra_keys=True)
    conv.register_structure_hook(bool, _bool)
    conv.register_structure_hook(int, _int)
    conv.register_structure_hook(float, _float)
    conv.register_structure_hook(str, _str)
    conv.register_structure_hook_func(lambda t: t == tuple[str, ...], _strings)
    return conv


# -- the validation ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Problem:
    """An invalid value (or unknown key) and why; `key` is dotted (`search.top_k`)."""

    key: str
    message: str
    unknown: bool = False  # a key the tree does not have (rather than a bad value)

    def __str__(self) -> str:
        return self.message


def _number_problem(value: float, lim: Limits, integer: bool) -> str | None:
    low, high = lim.minimum, lim.maximum
    shown = [None if b is None else (int(b) if integer else b) for b in (low, high)]
    if low is not None and high is not None and not low <= value <= high:
        return f"must be between {shown[0]} and {shown[1]}, got {value}"
    if low is not None and high is None and value < low:
        if low == 1 and integer:
            return f"must be positive, got {value}"
        if low == 0:
            return f"must not be negative, got {value}"
        return f"must be at least {shown[0]}, got {value}"
    if high is not None and low is None and value > high:
        return f"must be at most {shown[1]}, got {value}"
    return None


def _limit_problem(value: Any, lim: Limits) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return _number_problem(value, lim, isinstance(value, int))
    if isinstance(value, str):
        if lim.choices and value not in lim.choices:
            return f"must be one of {', '.join(lim.choices)}, got {value!r}"
        if not value and not lim.empty:
            return "must be a non-empty string, got ''"
        return None
    if lim.choices:
        wrong = [v for v in value if v not in lim.choices]
        if wrong:
            return f"must list only {', '.join(lim.choices)}, got {list(value)!r}"
    return None


def _structure(value: Any, kind: Any) -> Any:
    """`value` as a leaf of type `kind`: the converter's own hook for it, called
    directly for the leaf types settings have (a command that reads a
    `.codesift.toml` of plain values never loads cattrs)."""
    hook = _LEAF_HOOKS.get(kind)
    if hook is None and kind == tuple[str, ...]:
        hook = _strings
    return converter().structure(value, kind) if hook is None else hook(value, kind)


_LEAF_HOOKS: dict[Any, Any] = {bool: _bool, int: _int, float: _float, str: _str}


def check_value(setting: Setting, value: Any) -> tuple[Any, str | None]:
    """`value` structured to the setting's type, or a message naming its key."""
    try:
        structured = _structure(value, setting.type)
    except (TypeError, ValueError) as exc:
        return None, f"{setting.key} {exc}"
    problem = _limit_problem(structured, setting.limits)
    return structured, None if problem is None else f"{setting.key} {problem}"


def check_fields(
    cls: type,
    values: Mapping[str, Any],
    *,
    prefix: str = "",
    names: Mapping[str, str] | None = None,
) -> tuple[dict[str, Any], list[Problem]]:
    """The valid values among `values` for the options dataclass `cls`, by field name,
    and a problem for every unknown key and invalid value. `names` maps field names
    to the keys a front end uses instead (`quiet_ms` to the editor's `quietMs`)."""
    rename = names or {}
    by_key = {rename.get(s.name, s.name): s for s in _leaves(cls, prefix)}
    valid: dict[str, Any] = {}
    problems: list[Problem] = []
    for key, value in values.items():
        setting = by_key.get(key)
        if setting is None:
            problems.append(Problem(f"{prefix}{key}", f"unknown setting {prefix}{key}", True))
            continue
        shown = replace(setting, key=f"{prefix}{key}")
        structured, problem = check_value(shown, value)
        if problem is None:
            valid[setting.name] = structured
        else:
            problems.append(Problem(shown.key, problem))
    return valid, problems


def _check_list_section(
    section: str, cls: type, items: Any
) -> tuple[list[dict[str, Any]], list[Problem]]:
    """The valid items of an array-of-tables section (`[[collections]]`): each must be
    a table with every non-empty-required key set and a name no earlier item has."""
    if not isinstance(items, list | tuple):
        return [], [Problem(section, f"{section} must be an array of tables ([[{section}]])")]
    valid: list[dict[str, Any]] = []
    problems: list[Problem] = []
    names: set[str] = set()
    required = [s.name for s in _leaves(cls, "") if not s.limits.empty]
    for i, item in enumerate(items):
        prefix = f"{section}[{i}]."
        if not isinstance(item, Mapping):
            problems.append(Problem(f"{section}[{i}]", f"{section}[{i}] must be a table"))
            continue
        good, bad = check_fields(cls, item, prefix=prefix)
        problems.extend(bad)
        missing = [k for k in required if k not in item]
        for key in missing:
            problems.append(Problem(f"{prefix}{key}", f"{prefix}{key} is required"))
        if bad or missing:
            continue
        name = str(good.get("name", ""))
        if name in names:
            problems.append(Problem(f"{prefix}name", f"{prefix}name {name!r} is listed twice"))
            continue
        names.add(name)
        valid.append(good)
    return valid, problems


def check_settings(raw: Mapping[str, Any]) -> tuple[dict[str, Any], list[Problem]]:
    """The one validation pass over a nested mapping like `.codesift.toml`'s
    (`{"search": {"top_k": 20}}`): its valid values, by section, and a problem for
    every unknown section or key and every invalid value (each checked on its own).
    A list section (`collections`) maps to its list of valid items."""
    sections = {s.name: _hints(Settings)[s.name] for s in fields(Settings)}
    valid: dict[str, Any] = {}
    problems: list[Problem] = []
    for section, values in raw.items():
        cls = sections.get(section)
        if section in _LIST_SECTIONS:
            items, bad = _check_list_section(section, _LIST_SECTIONS[section], values)
            if items or not bad:
                valid[section] = items
            problems.extend(bad)
        elif cls is None:
            problems.append(Problem(str(section), f"unknown setting section {section!r}", True))
        elif not isinstance(values, Mapping):
            problems.append(Problem(section, f"setting section {section!r} must be a table"))
        else:
            good, bad = check_fields(cls, values, prefix=f"{section}.")
            if good:
                valid[section] = good
            problems.extend(bad)
    return valid, problems


def merge_settings_leniently(
    settings: Settings, overrides: Mapping[str, Any]
) -> tuple[Settings, list[Problem]]:
    """`settings` with the valid values of `overrides` applied, and the problems of
    the others (which keep the value they had)."""
    valid, problems = check_settings(overrides)
    if not valid:
        return settings, problems
    if not any(section in _LIST_SECTIONS for section in valid):
        # Plain sections: their valid values are structured already.
        sections = {
            section: replace(getattr(settings, section), **values)
            for section, values in valid.items()
        }
        return replace(settings, **sections), problems
    conv = converter()
    tree: dict[str, Any] = conv.unstructure(settings)
    for section, values in valid.items():
        if section in _LIST_SECTIONS:
            # Items of a later source replace the earlier ones of the same name.
            by_name = {item["name"]: item for item in tree[section]}
            by_name.update({item["name"]: {**_defaults_of(section), **item} for item in values})
            tree[section] = list(by_name.values())
        else:
            tree[section] = {**tree[section], **values}
    return conv.structure(tree, Settings), problems


def _defaults_of(section: str) -> dict[str, Any]:
    defaults: dict[str, Any] = converter().unstructure(_LIST_SECTIONS[section]())
    return defaults


def merge_settings(settings: Settings, overrides: Mapping[str, Any]) -> Settings:
    """Apply a nested mapping like {"index": {"max_file_bytes": 10}} to `settings`;
    ConfigError naming every invalid value."""
    merged, problems = merge_settings_leniently(settings, overrides)
    if problems:
        raise ConfigError("; ".join(p.message for p in problems))
    return merged


def _read_file(root: Path) -> dict[str, Any] | None:
    """`<root>/.codesift.toml` as a mapping, None without one; ConfigError (one line,
    naming the file) when it is not valid TOML."""
    config_file = root / CONFIG_FILE_NAME
    if not config_file.is_file():
        return None
    import tomllib  # only with a settings file (~2 CPU-ms of a one-shot command)

    try:
        return tomllib.loads(config_file.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{config_file}: {exc}") from exc


def load_settings(root: Path, overrides: Mapping[str, Any] | None = None) -> Settings:
    """Defaults, then `<root>/.codesift.toml`, then `overrides`; ConfigError for a
    malformed file or any invalid value (the CLI's exit 2)."""
    settings = Settings()
    data = _read_file(root)
    if data:
        try:
            settings = merge_settings(settings, data)
        except ConfigError as exc:
            raise ConfigError(f"{root / CONFIG_FILE_NAME}: {exc}") from exc
    if overrides:
        settings = merge_settings(settings, overrides)
    return settings


def resolve_settings(
    root: Path, overrides: Mapping[str, Any] | None = None
) -> tuple[Settings, list[str]]:
    """As `load_settings`, but nothing fails: a malformed `.codesift.toml` is skipped
    and an invalid value keeps its default; each is reported in the messages."""
    settings = Settings()
    messages: list[str] = []
    try:
        data = _read_file(root)
    except ConfigError as exc:
        messages.append(f"{exc}; using the defaults")
        data = None
    if data:
        settings, problems = merge_settings_leniently(settings, data)
        file = root / CONFIG_FILE_NAME
        messages.extend(f"{file}: {p.message}; using the default" for p in problems)
    if overrides:
        settings, problems = merge_settings_leniently(settings, overrides)
        messages.extend(f"{p.message}; using the default" for p in problems)
    return settings, messages
