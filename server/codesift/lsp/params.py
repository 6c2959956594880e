"""Checking request parameters: every problem becomes a JSON-RPC InvalidParams
error whose message names the parameter and says what was expected.

Custom `codesift/*` requests arrive as plain JSON objects (dicts); standard LSP
requests arrive as lsprotocol objects, already checked by their converter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pygls.exceptions import JsonRpcInvalidParams

__all__ = [
    "TimeFilters",
    "invalid",
    "opt_bool",
    "opt_int",
    "opt_str_list",
    "parse_time_filters",
    "require_object",
    "require_str",
]


def invalid(message: str) -> JsonRpcInvalidParams:
    return JsonRpcInvalidParams(message=message)


def require_object(params: Any, method: str) -> dict[str, Any]:
    if params is None:
        raise invalid(f"{method} needs params (an object); none were given")
    if not isinstance(params, dict):
        raise invalid(f"{method} params must be an object, got {type(params).__name__}")
    return params


def require_str(params: dict[str, Any], key: str, *, max_chars: int | None = None) -> str:
    value = params.get(key)
    if value is None:
        raise invalid(f"missing required parameter {key!r} (a string)")
    if not isinstance(value, str):
        raise invalid(f"parameter {key!r} must be a string, got {type(value).__name__}")
    if max_chars is not None and len(value) > max_chars:
        raise invalid(
            f"parameter {key!r} is {len(value)} characters long; the limit is {max_chars}"
        )
    return value


def opt_str(params: dict[str, Any], key: str) -> str | None:
    value = params.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise invalid(f"parameter {key!r} must be a string, got {type(value).__name__}")
    return value


def opt_int(
    params: dict[str, Any], key: str, default: int | None, low: int, high: int
) -> int | None:
    value = params.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise invalid(f"parameter {key!r} must be an integer, got {value!r}")
    if not low <= value <= high:
        raise invalid(f"parameter {key!r} must be between {low} and {high}, got {value}")
    return value


def opt_bool(params: dict[str, Any], key: str, default: bool) -> bool:
    value = params.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise invalid(f"parameter {key!r} must be true or false, got {value!r}")
    return value


def opt_str_list(params: dict[str, Any], key: str) -> tuple[str, ...]:
    value = params.get(key)
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise invalid(f"parameter {key!r} must be a list of strings, got {value!r}")
    return tuple(value)


@dataclass(frozen=True, slots=True)
class TimeFilters:
    """Git-time filters of a search as sent: each a string the history module
    parses (ISO 8601, a relative form such as `2w`, or a git revision) or Unix
    seconds. Revisions are resolved in each folder's repository."""

    as_of: str | float | None = None
    since: str | float | None = None
    until: str | float | None = None

    @property
    def given(self) -> bool:
        return any(v is not None for v in (self.as_of, self.since, self.until))


def _time_value(value: Any, key: str) -> str | float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise invalid(
            f"parameter {key!r} must be a date, time, relative time or git revision string"
            f" (or Unix seconds), got {value!r}"
        )
    if isinstance(value, str) and not value.strip():
        raise invalid(f"parameter {key!r} is empty")
    return value if isinstance(value, str) else float(value)


def parse_time_filters(params: dict[str, Any]) -> TimeFilters:
    """The one place where as_of / since / until are read from a request."""
    return TimeFilters(
        as_of=_time_value(params.get("as_of"), "as_of"),
        since=_time_value(params.get("since"), "since"),
        until=_time_value(params.get("until"), "until"),
    )
