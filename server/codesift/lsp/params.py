"""Checking request parameters: every problem becomes a JSON-RPC InvalidParams
error whose message names the parameter and says what was expected.

Custom `codesift/*` requests arrive as plain JSON objects (dicts); standard LSP
requests arrive as lsprotocol objects, already checked by their converter.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
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
    """Git-time filters of a search (ISO 8601, timezone-aware, UTC if none given)."""

    as_of: datetime | None = None
    since: datetime | None = None
    until: datetime | None = None

    @property
    def given(self) -> bool:
        return any(v is not None for v in (self.as_of, self.since, self.until))


def parse_iso_time(value: Any, key: str) -> datetime | None:
    """An ISO 8601 date or date-time (`2025-03-01`, `2025-03-01T12:00:00+02:00`, `...Z`)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise invalid(f"parameter {key!r} must be an ISO 8601 date or time string, got {value!r}")
    text = value.strip()
    try:
        parsed = datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)
    except ValueError:
        raise invalid(
            f"parameter {key!r} is not an ISO 8601 date or time: {value!r}"
            " (examples: 2025-03-01, 2025-03-01T12:00:00Z)"
        ) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def parse_time_filters(params: dict[str, Any]) -> TimeFilters:
    """The one place where as_of / since / until are read from a request."""
    filters = TimeFilters(
        as_of=parse_iso_time(params.get("as_of"), "as_of"),
        since=parse_iso_time(params.get("since"), "since"),
        until=parse_iso_time(params.get("until"), "until"),
    )
    if filters.since and filters.until and filters.since > filters.until:
        raise invalid("parameter 'since' is later than 'until'")
    return filters
