"""Administering the shared index: roles, principals, groups, grants, row
security and repositories (docs/team.md).

Each operation checks what it is given (names codesift accepts, a role, principal
or repository that exists, a principal of the right kind), changes the index and
returns what it did as data: the JSON `codesift team --json` prints, which
cli/team.py also draws as text. A name or key codesift does not accept, an
unknown repository or principal, or a principal of the other kind is a
QueryError; a database role that does not exist, a ConfigError.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Literal

from codesift.errors import ConfigError, QueryError

if TYPE_CHECKING:
    import psycopg

__all__ = [
    "admin_connection",
    "check_name",
    "check_repo",
    "delegate",
    "grant",
    "init",
    "member",
    "overview",
    "principal",
    "reader",
    "remove_repo",
    "revoke",
    "row_security",
    "setup_sql",
]

Answer = dict[str, Any]


def check_name(value: str, kind: str) -> None:
    """QueryError unless `value` is a `kind` name codesift accepts (role, group,
    user, principal, database)."""
    from codesift.store.postgres.keys import check_name as check

    check(value, kind)


def check_repo(key: str) -> None:
    from codesift.engine.shared_connect import check_repo_key

    check_repo_key(key)


@contextmanager
def admin_connection(dsn: str) -> Iterator[psycopg.Connection[Any]]:
    """The shared index as its indexing role, each statement committed at once
    (connecting applies the migrations, or says in one line what it cannot do)."""
    from codesift.engine.shared_connect import connect

    with connect(dsn, autocommit=True) as conn:
        yield conn


def setup_sql(database: str, indexer: str, reader_role: str) -> str:
    """The SQL a database administrator runs first."""
    from codesift.store.postgres.access import setup_sql as sql

    for value, kind in ((indexer, "role"), (reader_role, "role"), (database, "database")):
        check_name(value, kind)
    return sql(database, indexer, reader_role)


def init(conn: psycopg.Connection[Any]) -> Answer:
    from codesift.store.postgres import schema_version

    return {"schema_version": schema_version(conn)}


def reader(conn: psycopg.Connection[Any], role: str) -> Answer:
    from codesift.store.postgres.access import READER_TABLES, grant_reader

    check_name(role, "role")
    _role_exists(conn, role)
    grant_reader(conn, role)
    return {"role": role, "tables": list(READER_TABLES)}


def delegate(conn: psycopg.Connection[Any], role: str, *, remove: bool) -> Answer:
    from codesift.store.postgres.access import add_delegate, remove_delegate

    check_name(role, "role")
    if remove:
        if not remove_delegate(conn, role):
            raise QueryError(f"{role} is not a delegate")
        return {"role": role, "delegate": False}
    _role_exists(conn, role)
    add_delegate(conn, role)
    return {"role": role, "delegate": True}


def member(conn: psycopg.Connection[Any], group: str, user: str, *, remove: bool) -> Answer:
    from codesift.store.postgres.access import add_member, remove_member

    check_name(group, "group")
    check_name(user, "user")
    if remove:
        if not remove_member(conn, group, user):
            raise QueryError(f"{user} is not a member of {group}")
        return {"group": group, "user": user, "member": False}
    _kind_is(conn, group, "group")
    _kind_is(conn, user, "user")
    add_member(conn, group, user)
    return {"group": group, "user": user, "member": True}


def principal(conn: psycopg.Connection[Any], name: str, *, group: bool, remove: bool) -> Answer:
    from codesift.store.postgres.access import add_principal, remove_principal

    check_name(name, "principal")
    if remove:
        if not remove_principal(conn, name):
            raise QueryError(f"no principal named {name}")
        return {"principal": name, "removed": True}
    kind: Literal["user", "group"] = "group" if group else "user"
    _kind_is(conn, name, kind)
    add_principal(conn, name, kind)
    return {"principal": name, "kind": kind}


def grant(conn: psycopg.Connection[Any], name: str, repo: str, *, group: bool) -> Answer:
    """Let principal `name` read `repo` (created as a user, or a group, when new)."""
    from codesift.store.postgres.access import add_principal, principal_kind, repo_exists
    from codesift.store.postgres.access import grant as grant_repo

    check_name(name, "principal")
    check_repo(repo)
    if not repo_exists(conn, repo):
        raise QueryError(f"no repository {repo} in the shared index")
    if principal_kind(conn, name) is None:
        add_principal(conn, name, "group" if group else "user")
    grant_repo(conn, name, repo)
    return {"principal": name, "repo": repo, "granted": True}


def revoke(conn: psycopg.Connection[Any], name: str, repo: str) -> Answer:
    from codesift.store.postgres.access import revoke as revoke_repo

    check_name(name, "principal")
    check_repo(repo)
    if not revoke_repo(conn, name, repo):
        raise QueryError(f"{name} has no grant of {repo}")
    return {"principal": name, "repo": repo, "granted": False}


def row_security(conn: psycopg.Connection[Any], *, on: bool) -> Answer:
    from codesift.store.postgres.access import disable_row_security, enable_row_security

    if on:
        enable_row_security(conn)
    else:
        disable_row_security(conn)
    return {"row_security": on}


def overview(conn: psycopg.Connection[Any], name: str | None = None) -> Answer:
    """Everything (row security, principals with their members, grants and what
    they read, delegates, repositories), or what principal `name` reads."""
    from codesift.store.postgres.access import access_overview

    if name is not None:
        check_name(name, "principal")
    seen = access_overview(conn)
    if name is not None:
        if name not in seen.principals:
            raise QueryError(f"no principal named {name}")
        return {
            "principal": name,
            "kind": seen.principals[name],
            "groups": [g for g, m in seen.members.items() if name in m],
            "repositories": seen.readable(name),
        }
    return {
        "row_security": seen.row_security,
        "principals": [
            {
                "name": principal_name,
                "kind": kind,
                "members": seen.members.get(principal_name, []),
                "grants": seen.grants.get(principal_name, []),
                "reads": seen.readable(principal_name),
            }
            for principal_name, kind in seen.principals.items()
        ],
        "delegates": seen.delegates,
        "repositories": seen.repos,
    }


def remove_repo(conn: psycopg.Connection[Any], repo: str) -> Answer:
    from codesift.store.postgres.access import remove_repo as remove

    check_repo(repo)
    if not remove(conn, repo):
        raise QueryError(f"no repository {repo} in the shared index")
    return {"repo": repo, "removed": True}


def _role_exists(conn: psycopg.Connection[Any], role: str) -> None:
    from codesift.store.postgres.access import database_role_exists

    if not database_role_exists(conn, role):
        raise ConfigError(f"no database role {role}: create it first (codesift team sql)")


def _kind_is(conn: psycopg.Connection[Any], name: str, kind: str) -> None:
    """QueryError when `name` is a principal of the other kind."""
    from codesift.store.postgres.access import principal_kind

    found = principal_kind(conn, name)
    if found is not None and found != kind:
        raise QueryError(f"{name} is a {found}, not a {kind}")
