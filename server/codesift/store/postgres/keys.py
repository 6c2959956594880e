"""Repository keys of the shared index: checked before they reach a statement.

A key names a repository in every front end and in grants
(`github.com/acme/web@main`): printable characters without spaces at either
end, at most `MAX_KEY_LENGTH` of them, no control characters (a newline would
forge a line of `status`), no NUL (PostgreSQL text cannot hold it).
"""

from __future__ import annotations

import unicodedata

from codesift.errors import QueryError

__all__ = ["MAX_KEY_LENGTH", "MAX_NAME_LENGTH", "check_name", "check_repo_key"]

MAX_KEY_LENGTH = 255
# Principals, groups and database role names (PostgreSQL's own limit is 63 bytes).
MAX_NAME_LENGTH = 63


_CONTROL = ("Cc", "Cf", "Cs", "Zl", "Zp")


def _check(kind: str, value: str, limit: int) -> str:
    if not value or not value.strip():
        raise QueryError(f"the {kind} is empty")
    if len(value) > limit:
        raise QueryError(f"the {kind} is {len(value)} characters long (at most {limit})")
    if value != value.strip():
        raise QueryError(f"the {kind} {value.strip()!r} starts or ends with a space")
    bad = next((c for c in value if unicodedata.category(c) in _CONTROL), None)
    if bad is not None:
        raise QueryError(f"the {kind} {value!r} holds a control character (U+{ord(bad):04X})")
    return value


def check_repo_key(key: str) -> str:
    """`key`, or QueryError (one line) for a key codesift does not accept."""
    return _check("repository key", key, MAX_KEY_LENGTH)


def check_name(name: str, kind: str = "principal") -> str:
    """A principal, group or role name, or QueryError (one line)."""
    return _check(kind, name, MAX_NAME_LENGTH)
