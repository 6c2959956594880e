"""Git time for nodes and chunks: line-level history and the as_of/since/until filters.

(The time filters themselves, TimeFilter and the parsing of dates, relative times
and git revisions, live in codesift/timespec.py, below store/: every store module
applies them. They are re-exported here.)

lines     per-line commit numbers of one file, updated one diff at a time
gitlog    first-parent diffs read from `git log -p -U0` (the fast reader)
update    walk new first-parent commits in resumable steps, then time the stale files
state     what the history holds and what is left of its pass (pending, status)
timing    time the stale files' nodes and chunks, a batch at a time
records   read a node's or chunk's created / last-changed time and commit
"""

from __future__ import annotations

from codesift.timespec import (
    UNCOMMITTED_TIME,
    TimeFilter,
    TimeValue,
    format_time,
    parse_time_spec,
    time_filter,
)

__all__ = [
    "UNCOMMITTED_TIME",
    "TimeFilter",
    "TimeValue",
    "format_time",
    "parse_time_spec",
    "time_filter",
]
