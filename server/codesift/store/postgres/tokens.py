"""The bearer tokens of `codesift web` in the shared index (table `web_tokens`).

Only a secret's SHA-256 is stored; `token_by_hash` goes through the SECURITY
DEFINER function `codesift_web_token`, so a search service's role (which may
not select the table) can check a token and learn nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import psycopg

__all__ = [
    "TokenRow",
    "add_token",
    "any_token",
    "list_tokens",
    "remove_token",
    "token_by_hash",
]


@dataclass(frozen=True, slots=True)
class TokenRow:
    name: str
    principal: str
    created: str


def add_token(pg: psycopg.Connection[Any], name: str, principal: str, sha256: str) -> bool:
    """Store a token; False when a token of that name exists already."""
    row = pg.execute(
        "INSERT INTO web_tokens (name, principal, secret_sha256) VALUES (%s, %s, %s)"
        " ON CONFLICT (name) DO NOTHING RETURNING name",
        (name, principal, sha256),
    ).fetchone()
    return row is not None


def remove_token(pg: psycopg.Connection[Any], name: str) -> bool:
    """Delete a token; whether there was one of that name."""
    row = pg.execute("DELETE FROM web_tokens WHERE name = %s RETURNING name", (name,)).fetchone()
    return row is not None


def list_tokens(pg: psycopg.Connection[Any]) -> list[TokenRow]:
    rows = pg.execute(
        "SELECT name, principal, to_char(created_at AT TIME ZONE 'UTC',"
        ' \'YYYY-MM-DD"T"HH24:MI:SS"Z"\') FROM web_tokens ORDER BY name'
    ).fetchall()
    return [TokenRow(str(r[0]), str(r[1]), str(r[2])) for r in rows]


def token_by_hash(pg: psycopg.Connection[Any], sha256: str) -> tuple[str, str] | None:
    """(name, principal) of the token whose secret hashes to `sha256`, or None."""
    row = pg.execute("SELECT name, principal FROM codesift_web_token(%s)", (sha256,)).fetchone()
    return (str(row[0]), str(row[1])) if row is not None else None


def any_token(pg: psycopg.Connection[Any]) -> bool:
    """Whether at least one token exists (authentication is configured)."""
    row = pg.execute("SELECT codesift_web_tokens_exist()").fetchone()
    return bool(row and row[0])
