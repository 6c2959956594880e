"""Git time for nodes and chunks: line-level history and the as_of/since/until filters.

timespec  parse dates, relative times and git revisions into Unix times;
          TimeFilter, the SQL conditions every stream applies
lines     per-line commit numbers of one file, updated one diff at a time
gitlog    first-parent diffs read from `git log -p -U0` (the fast reader)
update    walk new first-parent commits in resumable steps, then time the stale files
state     what the history holds and what is left of its pass (pending, status)
timing    time the stale files' nodes and chunks, a batch at a time
records   read a node's or chunk's created / last-changed time and commit
"""

from __future__ import annotations

from codesift.history.timespec import (
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
