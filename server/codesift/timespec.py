"""Time specifications for the `as_of`, `since` and `until` filters.

One parser for every entry point (CLI, search request, LSP server):

    parse_time_spec("2024-05-01")            # ISO 8601 date: local midnight
    parse_time_spec("2024-05-01T12:00:00Z")  # ISO 8601 date and time (any offset)
    parse_time_spec("2w")                    # relative: 2 weeks before now
    parse_time_spec("3 days ago")            # relative, in words
    parse_time_spec("v1.2.0", root=repo)     # a tag, branch or commit: its commit time
    parse_time_spec("1714560000")            # Unix seconds (9+ digits, or @N as git writes it)
    parse_time_spec(1714560000)              # a number (JSON from the servers) likewise

Values are Unix times in seconds (float). A value that is none of these raises
QueryError with a message that says what is accepted. Times without an offset
are local time, as in git.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from pathlib import Path

from codesift.errors import QueryError

__all__ = [
    "UNCOMMITTED_TIME",
    "TimeFilter",
    "TimeValue",
    "format_time",
    "parse_time_spec",
    "time_filter",
]

# Lines changed in the working tree and not committed count as changed "now",
# whenever the query runs: they carry this time (9999-12-31), which every
# `since` accepts, and bounds at or after the query time (`until`, `as_of`)
# are dropped so they are included there too. "At or after the query time" allows
# NOW_SLACK seconds, so `until=now` parsed a moment before the query still counts.
UNCOMMITTED_TIME = 253402300799
NOW_SLACK = 60.0

TimeValue = str | int | float | datetime | date

_UNITS: dict[str, float] = {
    "s": 1,
    "sec": 1,
    "second": 1,
    "m": 60,
    "min": 60,
    "minute": 60,
    "h": 3600,
    "hr": 3600,
    "hour": 3600,
    "d": 86400,
    "day": 86400,
    "w": 7 * 86400,
    "week": 7 * 86400,
    "mo": 30 * 86400,
    "month": 30 * 86400,
    "y": 365 * 86400,
    "yr": 365 * 86400,
    "year": 365 * 86400,
}
_RELATIVE = re.compile(r"^(\d+(?:\.\d+)?)\s*([a-z]+?)s?(?:\s+ago)?$")
_ACCEPTED = (
    "an ISO 8601 date or time (2024-05-01, 2024-05-01T14:30:00+02:00), a relative time "
    "(2w, 36h, '3 days ago', yesterday), Unix seconds (1714560000 or @1714560000) or a git"
    " tag, branch or commit"
)
# Unix seconds as text: `@N` (git's form) or 9 digits or more (1973 onwards), so a
# year or a short commit id written in digits is not taken for a time in 1970.
_UNIX_SECONDS = re.compile(r"^(?:@(\d+(?:\.\d+)?)|(\d{9,}(?:\.\d+)?))$")


def _from_datetime(value: datetime) -> float:
    # A naive datetime is local time (as git reads dates without an offset).
    return value.timestamp()


def _relative(text: str, now: float) -> float | None:
    lowered = " ".join(text.lower().split())
    if lowered in ("now", "today"):
        if lowered == "now":
            return now
        return _from_datetime(datetime.fromtimestamp(now).replace(hour=0, minute=0, second=0))
    if lowered == "yesterday":
        today = datetime.fromtimestamp(now).replace(hour=0, minute=0, second=0, microsecond=0)
        return _from_datetime(today - timedelta(days=1))
    match = _RELATIVE.match(lowered)
    if match is None:
        return None
    amount, unit = float(match.group(1)), match.group(2)
    seconds = _UNITS.get(unit)
    if seconds is None:
        return None
    return now - amount * seconds


def _iso(text: str, name: str) -> float | None:
    candidate = text.strip()
    if candidate.endswith(("z", "Z")):
        candidate = candidate[:-1] + "+00:00"
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", candidate):
            day = date.fromisoformat(candidate)
            return _from_datetime(datetime(day.year, day.month, day.day))
        if not re.match(r"^\d{4}-\d{2}-\d{2}[T ]\d", candidate):
            return None
        return _from_datetime(datetime.fromisoformat(candidate))
    except ValueError as exc:
        raise QueryError(f"invalid {name} {text!r}: {exc}") from exc


def _revision(text: str, root: Path) -> float | None:
    """Commit time of a tag, branch or commit in the repository holding `root`."""
    import pygit2  # only when a revision is asked for

    try:
        path = pygit2.discover_repository(str(root))
        if path is None:
            return None
        repo = pygit2.Repository(path)
        commit = repo.revparse_single(text).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        return None
    return float(commit.commit_time)


def parse_time_spec(
    value: TimeValue,
    *,
    root: Path | None = None,
    now: float | None = None,
    name: str = "time",
) -> float:
    """A Unix time (seconds) from a date, a time, a relative form or a git revision.

    `root` is a folder inside the git repository whose tags, branches and commits
    may be named (without it only dates and relative forms are accepted). `now`
    anchors relative forms (default: the current time). `name` names the option
    in error messages. Raises QueryError for anything else.
    """
    current = time.time() if now is None else now
    if isinstance(value, bool):
        raise QueryError(f"{name} must be a date or time, got {value!r}")
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, datetime):
        return _from_datetime(value)
    if isinstance(value, date):
        return _from_datetime(datetime(value.year, value.month, value.day))
    if not isinstance(value, str):
        raise QueryError(f"{name} must be a date or time, got {type(value).__name__}")
    text = value.strip()
    if not text:
        raise QueryError(f"{name} is empty; give {_ACCEPTED}")
    seconds = _UNIX_SECONDS.match(text)
    if seconds is not None:
        return float(seconds.group(1) or seconds.group(2))
    parsed = _iso(text, name)
    if parsed is None:
        parsed = _relative(text, current)
    if parsed is None and root is not None and not text.startswith("-"):
        parsed = _revision(text, root)
    if parsed is None:
        hint = "" if root is not None else " (git revisions need a workspace)"
        raise QueryError(f"cannot read {name} {value!r}: give {_ACCEPTED}{hint}")
    return parsed


@dataclass(frozen=True, slots=True)
class TimeFilter:
    """Bounds on content time, in Unix seconds; None means unbounded.

    as_of  content created at or before this time
    since  content last changed at or after this time
    until  content last changed at or before this time
    """

    as_of: float | None = None
    since: float | None = None
    until: float | None = None

    def __bool__(self) -> bool:
        return self.as_of is not None or self.since is not None or self.until is not None

    def active_bounds(
        self, now: float | None = None
    ) -> tuple[float | None, float | None, float | None]:
        """(since, until, as_of) as they apply at `now`: a bound at or after `now`
        is None, so it does not exclude uncommitted content, which changed "now".
        Each backend turns them into conditions of its own (store/filters.py for
        SQLite); content without times (history not computed yet) passes no bound."""
        current = (time.time() if now is None else now) - NOW_SLACK
        until = self.until if self.until is not None and self.until < current else None
        as_of = self.as_of if self.as_of is not None and self.as_of < current else None
        return self.since, until, as_of

    def admits(
        self, created: float | None, changed: float | None, now: float | None = None
    ) -> bool:
        """The test of `active_bounds`, on values in Python."""
        current = (time.time() if now is None else now) - NOW_SLACK
        last = changed if changed is not None else created
        if self.since is not None and (last is None or last < self.since):
            return False
        if self.until is not None and self.until < current and (last is None or last > self.until):
            return False
        return not (
            self.as_of is not None
            and self.as_of < current
            and (created is None or created > self.as_of)
        )


def time_filter(
    as_of: TimeValue | None = None,
    since: TimeValue | None = None,
    until: TimeValue | None = None,
    *,
    root: Path | None = None,
    now: float | None = None,
) -> TimeFilter:
    """Parse the three options into a TimeFilter (QueryError on a malformed one,
    or when `since` is after `until`)."""
    current = time.time() if now is None else now

    def one(value: TimeValue | None, name: str) -> float | None:
        if value is None:
            return None
        return parse_time_spec(value, root=root, now=current, name=name)

    result = TimeFilter(one(as_of, "as_of"), one(since, "since"), one(until, "until"))
    if result.since is not None and result.until is not None and result.since > result.until:
        raise QueryError(
            f"since ({format_time(result.since)}) is after until ({format_time(result.until)})"
        )
    return result


def format_time(value: float | None) -> str | None:
    """ISO 8601 in UTC (`2024-05-01T12:00:00Z`); None for no time; 'uncommitted'
    for working-tree changes."""
    if value is None:
        return None
    if value >= UNCOMMITTED_TIME:
        return "uncommitted"
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(value))
