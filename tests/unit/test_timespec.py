"""Parsing as_of / since / until values and the SQL they become."""

from __future__ import annotations

import subprocess
from datetime import UTC, date, datetime
from pathlib import Path

import pytest

from codesift.errors import QueryError
from codesift.store.filters import time_conditions
from codesift.timespec import (
    UNCOMMITTED_TIME,
    TimeFilter,
    format_time,
    parse_time_spec,
    time_filter,
)

NOW = datetime(2024, 6, 15, 12, 0, tzinfo=UTC).timestamp()
DAY = 86400


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-05-01T10:00:00Z", datetime(2024, 5, 1, 10, tzinfo=UTC).timestamp()),
        ("2024-05-01T12:00:00+02:00", datetime(2024, 5, 1, 10, tzinfo=UTC).timestamp()),
        ("2024-05-01 10:00Z", datetime(2024, 5, 1, 10, tzinfo=UTC).timestamp()),
        ("2024-05-01", datetime(2024, 5, 1).timestamp()),  # local midnight, as git
        ("2w", NOW - 14 * DAY),
        ("36h", NOW - 36 * 3600),
        ("3 days ago", NOW - 3 * DAY),
        ("1 week ago", NOW - 7 * DAY),
        ("2 months", NOW - 60 * DAY),
        ("1y", NOW - 365 * DAY),
        ("now", NOW),
    ],
)
def test_accepted_forms(text: str, expected: float) -> None:
    assert parse_time_spec(text, now=NOW) == pytest.approx(expected)


def test_yesterday_and_today_are_local_midnights() -> None:
    today = datetime.fromtimestamp(NOW).replace(hour=0, minute=0, second=0).timestamp()
    assert parse_time_spec("today", now=NOW) == today
    assert parse_time_spec("yesterday", now=NOW) == pytest.approx(today - DAY, abs=3600)


def test_numbers_dates_and_datetimes_pass_through() -> None:
    assert parse_time_spec(1_700_000_000) == 1_700_000_000.0
    assert parse_time_spec(date(2024, 5, 1)) == datetime(2024, 5, 1).timestamp()
    moment = datetime(2024, 5, 1, 8, tzinfo=UTC)
    assert parse_time_spec(moment) == moment.timestamp()


@pytest.mark.parametrize(
    "text", ["", "   ", "soon", "2024-13-01", "2024-02-30T10:00", "3 fortnights ago", "-2w", "v1.0"]
)
def test_malformed_values_are_query_errors(text: str) -> None:
    with pytest.raises(QueryError, match="since"):
        parse_time_spec(text, now=NOW, name="since")


def test_booleans_are_not_times() -> None:
    with pytest.raises(QueryError):
        parse_time_spec(True)  # type: ignore[arg-type]


@pytest.mark.usefixtures("git_isolation")
def test_git_revisions_resolve_to_commit_times(make_repo: object, tmp_path: Path) -> None:
    root = make_repo({"a.txt": "a\n"}, commit=False)  # type: ignore[operator]
    env = {"GIT_COMMITTER_DATE": "2023-03-04T05:06:07Z", "GIT_AUTHOR_DATE": "2020-01-01T00:00:00Z"}
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "one"], cwd=root, check=True, env={**_environ(), **env})
    subprocess.run(["git", "tag", "v1.2.0"], cwd=root, check=True)
    expected = datetime(2023, 3, 4, 5, 6, 7, tzinfo=UTC).timestamp()
    assert parse_time_spec("v1.2.0", root=root) == expected  # committer time
    assert parse_time_spec("HEAD", root=root) == expected
    with pytest.raises(QueryError, match="v9"):
        parse_time_spec("v9", root=root)
    with pytest.raises(QueryError, match="workspace"):
        parse_time_spec("v1.2.0")


def _environ() -> dict[str, str]:
    import os

    return dict(os.environ)


def test_time_filter_orders_its_bounds() -> None:
    with pytest.raises(QueryError, match="after until"):
        time_filter(since="2024-05-02", until="2024-05-01")
    window = time_filter(since="2w", now=NOW)
    assert window.since == pytest.approx(NOW - 14 * DAY)
    assert not time_filter()
    assert window


def test_time_conditions_and_admits_agree() -> None:
    window = TimeFilter(as_of=100.0, since=50.0, until=200.0)
    sql, params = time_conditions(window, "c.changed", "c.created", now=NOW)
    assert sql == (
        " AND coalesce(c.changed, c.created) >= ? AND coalesce(c.changed, c.created) <= ?"
        " AND c.created <= ?"
    )
    assert params == [50.0, 200.0, 100.0]
    assert window.admits(90, 150, now=NOW)
    assert not window.admits(110, 150, now=NOW)  # created after as_of
    assert not window.admits(10, 40, now=NOW)  # changed before since
    assert not window.admits(10, 250, now=NOW)  # changed after until
    assert window.admits(90, None, now=NOW)  # changed falls back to created


def test_bounds_at_now_keep_uncommitted_content() -> None:
    window = TimeFilter(as_of=NOW, until=NOW)
    assert time_conditions(window, "changed", "created", now=NOW) == ("", [])
    assert window.admits(UNCOMMITTED_TIME, UNCOMMITTED_TIME, now=NOW)
    assert TimeFilter(since=NOW - DAY).admits(UNCOMMITTED_TIME, UNCOMMITTED_TIME, now=NOW)
    assert not TimeFilter(until=NOW - DAY).admits(1.0, UNCOMMITTED_TIME, now=NOW)


def test_format_time() -> None:
    assert format_time(0) == "1970-01-01T00:00:00Z"
    assert format_time(UNCOMMITTED_TIME) == "uncommitted"
    assert format_time(None) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1714560000", 1714560000.0),
        ("1714560000.25", 1714560000.25),
        ("@1714560000", 1714560000.0),
        (" 1714560000 ", 1714560000.0),
        ("@0", 0.0),
    ],
)
def test_unix_seconds_in_text_are_read_as_numbers_are(text: str, expected: float) -> None:
    # The CLI passes text; the language server and MCP may pass a JSON number.
    assert parse_time_spec(text, now=NOW) == expected == parse_time_spec(expected, now=NOW)


def test_a_short_number_is_not_unix_seconds(tmp_path: Path) -> None:
    with pytest.raises(QueryError, match="Unix seconds"):
        parse_time_spec("2024", now=NOW)
