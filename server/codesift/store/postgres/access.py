"""Principals, groups and grants of the shared index.

A principal is a user or a group; a user belongs to groups (memberships); a
grant lets a principal (and so every member of a group) read one repository.
The search store (search.py) joins these tables inside every statement it runs.
"""

from __future__ import annotations

from typing import Any, Literal

import psycopg

__all__ = [
    "add_member",
    "add_principal",
    "disable_row_security",
    "enable_row_security",
    "grant",
    "remove_repo",
    "revoke",
]


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


# The tables whose rows belong to a repository, and the column naming it.
_REPO_TABLES = (
    ("repos", "id"),
    ("files", "repo_id"),
    ("nodes", "repo_id"),
    ("edges", "repo_id"),
    ("chunks", "repo_id"),
    ("chunk_vectors", "repo_id"),
    ("commits", "repo_id"),
    ("term_stats", "repo_id"),
    ("layer_stats", "repo_id"),
    ("grants", "repo_id"),
)


def enable_row_security(pg: psycopg.Connection[Any]) -> None:
    """Row-level security as a second line of defence: a database role that is not
    the tables' owner (nor a superuser, nor BYPASSRLS) then reads only the rows of
    repositories granted to the principal named as the role it logged in as (or to
    that principal's groups), whatever SQL it sends. The indexing role, which owns
    the tables, is not affected; neither are searches, which join the same grants
    themselves.

    Run by the tables' owner; it can be run again."""
    with pg.transaction():
        # SECURITY DEFINER: it reads grants and memberships as their owner, so the
        # policies on those tables do not apply inside it (no recursion).
        # Inside the function current_user is its owner: the reader is the role
        # that authenticated (session_user), so no one can ask for another's rows.
        pg.execute("DROP FUNCTION IF EXISTS codesift_readable_repos(name)")
        pg.execute(
            "CREATE OR REPLACE FUNCTION codesift_readable_repos() RETURNS SETOF integer"
            " LANGUAGE sql STABLE SECURITY DEFINER SET search_path FROM CURRENT AS $$"
            " SELECT g.repo_id FROM grants g JOIN principals p ON p.id = g.principal_id"
            " WHERE p.name = session_user OR p.id IN (SELECT m.group_id FROM memberships m"
            " JOIN principals u ON u.id = m.member_id WHERE u.name = session_user) $$"
        )
        for table, column in _REPO_TABLES:
            # Table and column names are the fixed ones above, never user text.
            pg.execute(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
            pg.execute(f"DROP POLICY IF EXISTS codesift_read ON {table}")
            pg.execute(
                f"CREATE POLICY codesift_read ON {table} FOR SELECT"
                f" USING ({column} IN (SELECT codesift_readable_repos()))"
            )


def disable_row_security(pg: psycopg.Connection[Any]) -> None:
    """Undo `enable_row_security`: roles read every row their privileges allow."""
    with pg.transaction():
        for table, _ in _REPO_TABLES:
            pg.execute(f"DROP POLICY IF EXISTS codesift_read ON {table}")
            pg.execute(f"ALTER TABLE {table} DISABLE ROW LEVEL SECURITY")
