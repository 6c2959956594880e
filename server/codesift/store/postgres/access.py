"""Principals, groups and grants of the shared index.

A principal is a user or a group; a user belongs to groups (memberships); a
grant lets a principal (and so every member of a group) read one repository.
Every statement of the search store (search.py, route.py) keeps the
repositories `readable_condition` names: those of a principal come from the
function `codesift_readable_for` (schema migration 9), which reads the grants
as their owner and refuses a database role that may not read as someone else
(only superusers, BYPASSRLS roles, the tables' owner and the roles listed as
delegates may: a search service). So a reader role needs SELECT on the content
tables only (`READER_TABLES`), never on principals, memberships or grants.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import psycopg
from psycopg import sql

__all__ = [
    "READER_TABLES",
    "AccessOverview",
    "access_overview",
    "add_delegate",
    "add_member",
    "add_principal",
    "database_role_exists",
    "disable_row_security",
    "enable_row_security",
    "grant",
    "grant_reader",
    "principal_kind",
    "readable_condition",
    "reads_for_others",
    "remove_delegate",
    "remove_member",
    "remove_principal",
    "remove_repo",
    "repo_exists",
    "revoke",
    "row_security_enabled",
    "session_role",
    "setup_sql",
]

# What a reader role selects: the index's content, never who may read it.
READER_TABLES = (
    "schema_migrations",
    "repos",
    "files",
    "nodes",
    "edges",
    "chunks",
    "chunk_vectors",
    "commits",
    "layer_stats",
    "term_stats",
)


def readable_condition(principal: str | None) -> tuple[str, list[Any]]:
    """SQL (` AND ...`) keeping the `repos r` rows `principal` may read, and its
    parameters; nothing for None (the database role's own view)."""
    if principal is None:
        return "", []
    return " AND r.id IN (SELECT codesift_readable_for(%s))", [principal]


def reads_for_others(pg: psycopg.Connection[Any]) -> bool:
    """Whether the role that logged in may read as any principal (a superuser,
    BYPASSRLS, the tables' owner, or a delegate)."""
    row = pg.execute("SELECT codesift_reads_for_others()").fetchone()
    return bool(row and row[0])


def session_role(pg: psycopg.Connection[Any]) -> str:
    """The database role that logged in on `pg`."""
    row = pg.execute("SELECT session_user").fetchone()
    return str(row[0]) if row else ""


def row_security_enabled(pg: psycopg.Connection[Any]) -> bool:
    """Whether `enable_row_security` is in force (on the repos table)."""
    row = pg.execute("SELECT relrowsecurity FROM pg_class WHERE oid = 'repos'::regclass").fetchone()
    return bool(row and row[0])


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


def revoke(pg: psycopg.Connection[Any], principal: str, repo: str) -> bool:
    """Take back `principal`'s grant of `repo`; False when it had none."""
    with pg.transaction():
        cur = pg.execute(
            "DELETE FROM grants g USING principals p, repos r WHERE g.principal_id = p.id"
            " AND g.repo_id = r.id AND p.name = %s AND r.key = %s",
            (principal, repo),
        )
    return cur.rowcount > 0


def remove_member(pg: psycopg.Connection[Any], group: str, member: str) -> bool:
    """Take `member` out of `group`; False when it was not in it."""
    with pg.transaction():
        cur = pg.execute(
            "DELETE FROM memberships m USING principals g, principals u"
            " WHERE m.group_id = g.id AND m.member_id = u.id AND g.name = %s AND u.name = %s",
            (group, member),
        )
    return cur.rowcount > 0


def remove_principal(pg: psycopg.Connection[Any], name: str) -> bool:
    """Delete a user or group with its memberships and grants; False when none."""
    with pg.transaction():
        cur = pg.execute("DELETE FROM principals WHERE name = %s", (name,))
    return cur.rowcount > 0


def remove_repo(pg: psycopg.Connection[Any], repo: str) -> bool:
    """Delete a repository and every row of it (files, nodes, edges, chunks, vectors,
    commits, grants); False when there was none."""
    with pg.transaction():
        cur = pg.execute("DELETE FROM repos WHERE key = %s", (repo,))
    return cur.rowcount > 0


def add_delegate(pg: psycopg.Connection[Any], role: str) -> None:
    """Let the database role `role` (a search service) read as any principal:
    its searches pass the person they act for (`principal=`), and under row
    security it reads every repository (its searches join the principal's
    grants). Without this, a role may only read as itself."""
    with pg.transaction():
        pg.execute("INSERT INTO delegates (role) VALUES (%s) ON CONFLICT DO NOTHING", (role,))


def remove_delegate(pg: psycopg.Connection[Any], role: str) -> bool:
    with pg.transaction():
        cur = pg.execute("DELETE FROM delegates WHERE role = %s", (role,))
    return cur.rowcount > 0


def grant_reader(pg: psycopg.Connection[Any], role: str) -> None:
    """Give the database role `role` what a search needs and nothing more: USAGE
    on the schema and SELECT on `READER_TABLES` (not on principals, memberships,
    grants or delegates)."""
    with pg.transaction():
        schema = pg.execute("SELECT current_schema()").fetchone()
        assert schema is not None
        pg.execute(
            sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(
                sql.Identifier(str(schema[0])), sql.Identifier(role)
            )
        )
        for table in READER_TABLES:
            pg.execute(
                sql.SQL("GRANT SELECT ON {} TO {}").format(
                    sql.Identifier(table), sql.Identifier(role)
                )
            )


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
)
# Who may read which: a role sees its own principal, its groups and their grants
# (a role that reads for others sees them all).
_ACCESS_POLICIES = (
    ("principals", "id IN (SELECT codesift_own_principals())"),
    ("memberships", "member_id IN (SELECT codesift_own_principals())"),
    ("grants", "principal_id IN (SELECT codesift_own_principals())"),
    ("delegates", "role = session_user"),
)


def enable_row_security(pg: psycopg.Connection[Any]) -> None:
    """Row-level security as a second line of defence: a database role that is not
    the tables' owner (nor a superuser, nor BYPASSRLS) then reads only the rows of
    repositories granted to the principal named as the role it logged in as (or to
    that principal's groups), whatever SQL it sends, and of principals,
    memberships and grants only its own and its groups'. The indexing role, which
    owns the tables, is not affected, nor a delegate (`add_delegate`: a search
    service, whose searches join the grants of the principal they act for).

    Run by the tables' owner; it can be run again."""
    with pg.transaction():
        # codesift_readable_repos and codesift_own_principals (schema migration 9)
        # read as their owner, so these policies do not apply inside them, and
        # name the reader by session_user: the role that authenticated.
        for table, column in _REPO_TABLES:
            # Table and column names are the fixed ones above, never user text.
            pg.execute(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
            pg.execute(f"DROP POLICY IF EXISTS codesift_read ON {table}")
            pg.execute(
                f"CREATE POLICY codesift_read ON {table} FOR SELECT"
                f" USING ({column} IN (SELECT codesift_readable_repos()))"
            )
        for table, condition in _ACCESS_POLICIES:
            pg.execute(f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY")
            pg.execute(f"DROP POLICY IF EXISTS codesift_read ON {table}")
            pg.execute(
                f"CREATE POLICY codesift_read ON {table} FOR SELECT"
                f" USING (codesift_reads_for_others() OR {condition})"
            )


def disable_row_security(pg: psycopg.Connection[Any]) -> None:
    """Undo `enable_row_security`: roles read every row their privileges allow."""
    with pg.transaction():
        for table in [t for t, _ in _REPO_TABLES] + [t for t, _ in _ACCESS_POLICIES]:
            pg.execute(f"DROP POLICY IF EXISTS codesift_read ON {table}")
            pg.execute(f"ALTER TABLE {table} DISABLE ROW LEVEL SECURITY")


@dataclass(frozen=True, slots=True)
class AccessOverview:
    """Who may read what: each principal (name -> "user" / "group"), each
    group's members, each principal's directly granted repositories, the
    delegates, every repository key, and whether row security is on."""

    principals: dict[str, str] = field(default_factory=dict)
    members: dict[str, list[str]] = field(default_factory=dict)
    grants: dict[str, list[str]] = field(default_factory=dict)
    delegates: list[str] = field(default_factory=list)
    repos: list[str] = field(default_factory=list)
    row_security: bool = False

    def readable(self, principal: str) -> list[str]:
        """The repositories `principal` reads: its grants and its groups'."""
        groups = [g for g, members in self.members.items() if principal in members]
        keys = set(self.grants.get(principal, []))
        for group in groups:
            keys.update(self.grants.get(group, []))
        return sorted(keys)


def access_overview(pg: psycopg.Connection[Any]) -> AccessOverview:
    """Everything `AccessOverview` holds, as the indexing role reads it."""
    principals = {
        str(n): str(k) for n, k in pg.execute("SELECT name, kind FROM principals ORDER BY name")
    }
    members: dict[str, list[str]] = {}
    for group, member in pg.execute(
        "SELECT g.name, u.name FROM memberships m JOIN principals g ON g.id = m.group_id"
        " JOIN principals u ON u.id = m.member_id ORDER BY g.name, u.name"
    ):
        members.setdefault(str(group), []).append(str(member))
    grants: dict[str, list[str]] = {}
    for name, key in pg.execute(
        "SELECT p.name, r.key FROM grants g JOIN principals p ON p.id = g.principal_id"
        " JOIN repos r ON r.id = g.repo_id ORDER BY p.name, r.key"
    ):
        grants.setdefault(str(name), []).append(str(key))
    delegates = [str(r[0]) for r in pg.execute("SELECT role FROM delegates ORDER BY role")]
    repos = [str(r[0]) for r in pg.execute("SELECT key FROM repos ORDER BY key")]
    return AccessOverview(principals, members, grants, delegates, repos, row_security_enabled(pg))


def principal_kind(pg: psycopg.Connection[Any], name: str) -> str | None:
    """ "user" or "group" for an existing principal, else None."""
    row = pg.execute("SELECT kind FROM principals WHERE name = %s", (name,)).fetchone()
    return None if row is None else str(row[0])


def database_role_exists(pg: psycopg.Connection[Any], role: str) -> bool:
    return pg.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone() is not None


def repo_exists(pg: psycopg.Connection[Any], key: str) -> bool:
    return pg.execute("SELECT 1 FROM repos WHERE key = %s", (key,)).fetchone() is not None


def setup_sql(database: str, indexer: str, reader: str) -> str:
    """The SQL a database administrator runs once before the first indexing job:
    the extensions (`vector` needs a superuser on most servers), the indexing
    role's rights, and a reader group role with what a search needs."""

    def ident(name: str) -> str:
        return '"' + name.replace('"', '""') + '"'

    db, ix, rd = ident(database), ident(indexer), ident(reader)
    tables = ", ".join(READER_TABLES)
    return "\n".join(
        [
            f"-- as a superuser (or the service's admin role), connected to {database}:",
            "CREATE EXTENSION IF NOT EXISTS vector;",
            "CREATE EXTENSION IF NOT EXISTS pg_trgm;",
            "CREATE EXTENSION IF NOT EXISTS btree_gin;",
            f"CREATE ROLE {ix} LOGIN;  -- its password in ~/.pgpass or the service's IAM",
            f"GRANT CREATE ON DATABASE {db} TO {ix};",
            f"GRANT CREATE ON SCHEMA public TO {ix};",
            f"CREATE ROLE {rd} NOLOGIN;",
            f"GRANT CONNECT ON DATABASE {db} TO {rd};",
            f"GRANT USAGE ON SCHEMA public TO {rd};",
            f"-- as {indexer}, once its first job (or `codesift team init`) made the tables:",
            f"GRANT SELECT ON {tables} TO {rd};",
            "-- then a login role per person or service, in the reader role:",
            f"-- CREATE ROLE ana LOGIN IN ROLE {rd};",
        ]
    )
