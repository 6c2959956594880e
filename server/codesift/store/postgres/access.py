"""Principals, groups and grants of the shared index.

A principal is a user or a group; a user belongs to groups (memberships); a
grant lets a principal (and so every member of a group) read one repository.
The search store (search.py) joins these tables inside every statement it runs.
"""

from __future__ import annotations

from typing import Any, Literal

import psycopg

__all__ = ["add_member", "add_principal", "grant", "remove_repo", "revoke"]


def add_principal(
    pg: psycopg.Connection[Any], name: str, kind: Literal["user", "group"] = "user"
) -> int:
    """The id of the principal `name`, created when new."""
    with pg.transaction():
        row = pg.execute(
            "INSERT INTO principals (name, kind) VALUES (%s, %s)"
            " ON CONFLICT (name) DO UPDATE SET kind = principals.kind RETURNING id",
            (name, kind),
        ).fetchone()
    assert row is not None
    return int(row[0])


def add_member(pg: psycopg.Connection[Any], group: str, member: str) -> None:
    """Put `member` (a user, created when new) in `group` (created when new)."""
    group_id = add_principal(pg, group, "group")
    member_id = add_principal(pg, member, "user")
    with pg.transaction():
        pg.execute(
            "INSERT INTO memberships (group_id, member_id) VALUES (%s, %s) ON CONFLICT DO NOTHING",
            (group_id, member_id),
        )


def grant(pg: psycopg.Connection[Any], principal: str, repo: str) -> bool:
    """Let `principal` read the repository `repo`; False when no such repository."""
    with pg.transaction():
        row = pg.execute(
            "INSERT INTO grants (principal_id, repo_id)"
            " SELECT p.id, r.id FROM principals p, repos r WHERE p.name = %s AND r.key = %s"
            " ON CONFLICT DO NOTHING RETURNING repo_id",
            (principal, repo),
        ).fetchone()
        if row is not None:
            return True
        again = pg.execute(
            "SELECT 1 FROM grants g JOIN principals p ON p.id = g.principal_id"
            " JOIN repos r ON r.id = g.repo_id WHERE p.name = %s AND r.key = %s",
            (principal, repo),
        ).fetchone()
    return again is not None


def revoke(pg: psycopg.Connection[Any], principal: str, repo: str) -> None:
    with pg.transaction():
        pg.execute(
            "DELETE FROM grants g USING principals p, repos r WHERE g.principal_id = p.id"
            " AND g.repo_id = r.id AND p.name = %s AND r.key = %s",
            (principal, repo),
        )


def remove_repo(pg: psycopg.Connection[Any], repo: str) -> None:
    """Delete a repository and every row of it (files, nodes, edges, chunks, vectors,
    commits, grants)."""
    with pg.transaction():
        pg.execute("DELETE FROM repos WHERE key = %s", (repo,))
