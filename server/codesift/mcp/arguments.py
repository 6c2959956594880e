"""Reading a tool call's arguments: types checked here, values by the engine.

The MCP SDK's low-level server passes the arguments on as JSON; this module
checks each one's type against the tool's schema and raises QueryError (a
`bad_request` tool error) naming the argument. Ranges and vocabularies (top_k,
layers, languages, edge kinds, times) are checked where the engine checks them
for every front end (SearchRequest.validated, check_graph_query, time_filter).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp_types import Tool

from codesift.errors import QueryError
from codesift.timespec import TimeValue

__all__ = ["Arguments"]


class Arguments:
    """One call's arguments for `tool`; unknown names are refused at once."""

    def __init__(self, tool: Tool, raw: Mapping[str, Any] | None) -> None:
        self.tool = tool.name
        self._raw: dict[str, Any] = dict(raw or {})
        known = tool.input_schema.get("properties", {})
        unknown = sorted(k for k in self._raw if k not in known)
        if unknown:
            names = ", ".join(sorted(known)) or "none"
            raise QueryError(
                f"unknown argument(s) {', '.join(unknown)} for {tool.name}; it takes: {names}"
            )

    def given(self, name: str) -> bool:
        """Whether the call gave `name` (a value of null counts as not given)."""
        return self._get(name) is not None

    def _get(self, name: str) -> Any:
        return self._raw.get(name)

    def _wrong(self, name: str, what: str, value: Any) -> QueryError:
        return QueryError(f"{name} must be {what}, got {value!r}")

    def text(self, name: str) -> str:
        """A required non-empty string."""
        value = self._get(name)
        if value is None:
            raise QueryError(f"{self.tool} needs the argument {name}")
        if not isinstance(value, str):
            raise self._wrong(name, "a string", value)
        if not value.strip():
            raise QueryError(f"{name} is empty")
        return value

    def integer(self, name: str) -> int | None:
        value = self._get(name)
        if value is None:
            return None
        # JSON has one number type: 5.0 is 5, but 5.5 and true are not integers.
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self._wrong(name, "an integer", value)
        return value

    def count(self, name: str, default: int) -> int:
        """An integer with a default (the engine checks its range)."""
        value = self.integer(name)
        return default if value is None else value

    def flag(self, name: str, default: bool) -> bool:
        value = self._get(name)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise self._wrong(name, "true or false", value)
        return value

    def choice(self, name: str, default: str) -> str:
        value = self._get(name)
        if value is None:
            return default
        if not isinstance(value, str):
            raise self._wrong(name, "a string", value)
        return value

    def strings(self, name: str) -> tuple[str, ...]:
        """An array of strings (one string is taken as an array of one)."""
        value = self._get(name)
        if value is None:
            return ()
        if isinstance(value, str):
            return (value,)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self._wrong(name, "an array of strings", value)
        return tuple(value)

    def time(self, name: str) -> TimeValue | None:
        value = self._get(name)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise self._wrong(name, "a time (a string or Unix seconds)", value)
        return value

    def times(self) -> tuple[TimeValue | None, TimeValue | None, TimeValue | None]:
        """(as_of, since, until), as given."""
        return self.time("as_of"), self.time("since"), self.time("until")
