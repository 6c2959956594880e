"""`codesift team`: administering the shared index (docs/team.md).

    codesift team sql [--database NAME] [--indexer ROLE] [--reader ROLE]
    codesift team init --db DSN                    extensions, schema (the indexing role)
    codesift team reader ROLE --db DSN             SELECT on what a search needs
    codesift team delegate ROLE [--remove] --db DSN
    codesift team member GROUP USER [--remove] --db DSN
    codesift team principal NAME [--group] [--remove] --db DSN
    codesift team grant PRINCIPAL KEY [--group] --db DSN
    codesift team revoke PRINCIPAL KEY --db DSN
    codesift team row-security on|off --db DSN
    codesift team list [--principal NAME] --db DSN
    codesift team remove-repo KEY --db DSN

Every command but `sql` runs as the indexing role (the tables' owner) and
takes `--json`. A name or key codesift does not accept, an unknown repository
or an unknown principal is a one-line error (exit code 2).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, Protocol

from codesift.errors import ConfigError, QueryError

if TYPE_CHECKING:
    import psycopg

__all__ = ["add_team_parser", "cmd_team"]

EXIT_OK = 0


class Output(Protocol):
    def print(self, text: str) -> None: ...


def add_team_parser(sub: Any) -> None:
    """`team` and its commands, on the subparsers `sub` of the codesift parser."""
    team = sub.add_parser(
        "team", help="administer the shared PostgreSQL index: roles, principals, grants"
    )
    commands = team.add_subparsers(dest="team_command", required=True)

    def command(name: str, text: str, *, db: bool = True) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = commands.add_parser(name, help=text)
        if db:
            p.add_argument(
                "--db", metavar="DSN", required=True, help="the shared index, as the indexing role"
            )
        p.add_argument("--json", action="store_true", help="machine-readable output")
        return p

    p = command("sql", "print the SQL a database administrator runs first", db=False)
    p.add_argument("--database", default="codesift", help="the database (default codesift)")
    p.add_argument("--indexer", default="codesift_indexer", help="the indexing role")
    p.add_argument("--reader", default="codesift_reader", help="the reader group role")
    command("init", "create the extensions and the schema (or say what an admin must run)")
    p = command("reader", "give a database role what a search needs (SELECT on the index)")
    p.add_argument("role")
    p = command("delegate", "let a database role (a search service) read as any principal")
    p.add_argument("role")
    p.add_argument("--remove", action="store_true", help="take it back")
    p = command("member", "put a user in a group (both created when new)")
    p.add_argument("group")
    p.add_argument("user")
    p.add_argument("--remove", action="store_true", help="take the user out of the group")
    p = command("principal", "create (or remove) a user or group")
    p.add_argument("name")
    p.add_argument("--group", action="store_true", help="a group (default: a user)")
    p.add_argument("--remove", action="store_true", help="remove it with its grants")
    p = command("grant", "let a principal read a repository")
    p.add_argument("principal")
    p.add_argument("repo", metavar="KEY")
    p.add_argument("--group", action="store_true", help="create the principal as a group")
    p = command("revoke", "take back a principal's grant of a repository")
    p.add_argument("principal")
    p.add_argument("repo", metavar="KEY")
    p = command("row-security", "turn row-level security on or off")
    p.add_argument("state", choices=["on", "off"])
    p = command("list", "principals, groups, grants, delegates and repositories")
    p.add_argument("--principal", help="only what this principal reads")
    p = command("remove-repo", "delete a repository and every row of it")
    p.add_argument("repo", metavar="KEY")
    team.set_defaults(func=cmd_team)


def cmd_team(args: argparse.Namespace, inv: Output) -> int:
    """Run one `codesift team` command (see the module docstring)."""
    name = str(args.team_command)
    if name == "sql":
        return _sql(args, inv)
    handler = _HANDLERS[name]
    from codesift.engine.postgres import connect

    for attr, kind in (("role", "role"), ("group", "group"), ("user", "user")):
        value = getattr(args, attr, None)
        if isinstance(value, str):
            _name(value, kind)
    if isinstance(getattr(args, "name", None), str):
        _name(args.name, "principal")
    if isinstance(getattr(args, "principal", None), str):
        _name(args.principal, "principal")
    if isinstance(getattr(args, "repo", None), str):
        from codesift.engine.postgres import check_repo_key

        check_repo_key(args.repo)
    with connect(args.db, autocommit=True) as conn:
        data, text = handler(conn, args)
    if args.json:
        inv.print(json.dumps(data, ensure_ascii=False))
    else:
        for line in text:
            inv.print(line)
    return EXIT_OK


def _name(value: str, kind: str) -> None:
    from codesift.store.postgres.keys import check_name

    check_name(value, kind)


def _sql(args: argparse.Namespace, inv: Output) -> int:
    from codesift.store.postgres.access import setup_sql

    for value, kind in ((args.indexer, "role"), (args.reader, "role"), (args.database, "database")):
        _name(value, kind)
    text = setup_sql(args.database, args.indexer, args.reader)
    if args.json:
        inv.print(json.dumps({"sql": text}))
    else:
        inv.print(text)
    return EXIT_OK


Result = tuple[dict[str, Any], list[str]]


def _init(conn: psycopg.Connection[Any], args: argparse.Namespace) -> Result:
    # `connect` created the extensions and applied the migrations, or said in
    # one line what it could not do.
    from codesift.store.postgres import schema_version

    version = schema_version(conn)
    return {"schema_version": version}, [f"the shared index is ready (schema version {version})"]


def _reader(conn: psycopg.Connection[Any], args: argparse.Namespace) -> Result:
    from codesift.store.postgres.access import READER_TABLES, grant_reader

    _role_exists(conn, args.role)
    grant_reader(conn, args.role)
    return {"role": args.role, "tables": list(READER_TABLES)}, [
        f"{args.role} may now read the index ({', '.join(READER_TABLES)})"
    ]


def _delegate(conn: psycopg.Connection[Any], args: argparse.Namespace) -> Result:
    from codesift.store.postgres.access import add_delegate, remove_delegate

    if args.remove:
        if not remove_delegate(conn, args.role):
            raise QueryError(f"{args.role} is not a delegate")
        return {"role": args.role, "delegate": False}, [
            f"{args.role} may no longer read as another principal"
        ]
    _role_exists(conn, args.role)
    add_delegate(conn, args.role)
    return {"role": args.role, "delegate": True}, [
        f"{args.role} may now read as any principal (--principal): it must take the"
        " principal from its own authentication"
    ]


def _member(conn: psycopg.Connection[Any], args: argparse.Namespace) -> Result:
    from codesift.store.postgres.access import add_member, principal_kind, remove_member

    if args.remove:
        if not remove_member(conn, args.group, args.user):
            raise QueryError(f"{args.user} is not a member of {args.group}")
        return {"group": args.group, "user": args.user, "member": False}, [
            f"{args.user} is no longer in {args.group}"
        ]
    for name, kind in ((args.group, "group"), (args.user, "user")):
        found = principal_kind(conn, name)
        if found is not None and found != kind:
            raise QueryError(f"{name} is a {found}, not a {kind}")
    add_member(conn, args.group, args.user)
    return {"group": args.group, "user": args.user, "member": True}, [
        f"{args.user} is in {args.group}"
    ]


def _principal(conn: psycopg.Connection[Any], args: argparse.Namespace) -> Result:
    from codesift.store.postgres.access import add_principal, principal_kind, remove_principal

    if args.remove:
        if not remove_principal(conn, args.name):
            raise QueryError(f"no principal named {args.name}")
        return {"principal": args.name, "removed": True}, [f"removed {args.name}"]
    kind: Literal["user", "group"] = "group" if args.group else "user"
    found = principal_kind(conn, args.name)
    if found is not None and found != kind:
        raise QueryError(f"{args.name} is a {found}, not a {kind}")
    add_principal(conn, args.name, kind)
    return {"principal": args.name, "kind": kind}, [f"{kind} {args.name}"]


def _grant(conn: psycopg.Connection[Any], args: argparse.Namespace) -> Result:
    from codesift.store.postgres.access import add_principal, grant, principal_kind, repo_exists

    if not repo_exists(conn, args.repo):
        raise QueryError(f"no repository {args.repo} in the shared index")
    if principal_kind(conn, args.principal) is None:
        add_principal(conn, args.principal, "group" if args.group else "user")
    grant(conn, args.principal, args.repo)
    return {"principal": args.principal, "repo": args.repo, "granted": True}, [
        f"{args.principal} may read {args.repo}"
    ]


def _revoke(conn: psycopg.Connection[Any], args: argparse.Namespace) -> Result:
    from codesift.store.postgres.access import revoke

    if not revoke(conn, args.principal, args.repo):
        raise QueryError(f"{args.principal} has no grant of {args.repo}")
    return {"principal": args.principal, "repo": args.repo, "granted": False}, [
        f"{args.principal} may no longer read {args.repo}"
    ]


def _row_security(conn: psycopg.Connection[Any], args: argparse.Namespace) -> Result:
    from codesift.store.postgres.access import disable_row_security, enable_row_security

    if args.state == "on":
        enable_row_security(conn)
    else:
        disable_row_security(conn)
    return {"row_security": args.state == "on"}, [f"row security {args.state}"]


def _list(conn: psycopg.Connection[Any], args: argparse.Namespace) -> Result:
    from codesift.store.postgres.access import access_overview

    seen = access_overview(conn)
    if args.principal is not None:
        if args.principal not in seen.principals:
            raise QueryError(f"no principal named {args.principal}")
        groups = [g for g, m in seen.members.items() if args.principal in m]
        readable = seen.readable(args.principal)
        data = {
            "principal": args.principal,
            "kind": seen.principals[args.principal],
            "groups": groups,
            "repositories": readable,
        }
        text = [
            f"{seen.principals[args.principal]} {args.principal}"
            + (f" (in {', '.join(groups)})" if groups else ""),
            *(f"  reads {key}" for key in readable),
        ]
        if not readable:
            text.append("  reads no repository")
        return data, text
    data = {
        "row_security": seen.row_security,
        "principals": [
            {
                "name": name,
                "kind": kind,
                "members": seen.members.get(name, []),
                "grants": seen.grants.get(name, []),
                "reads": seen.readable(name),
            }
            for name, kind in seen.principals.items()
        ],
        "delegates": seen.delegates,
        "repositories": seen.repos,
    }
    text = [f"row security  {'on' if seen.row_security else 'off'}"]
    text.append(f"delegates     {', '.join(seen.delegates) or '(none)'}")
    text.append(f"repositories  {len(seen.repos)}")
    for name, kind in seen.principals.items():
        members = seen.members.get(name, [])
        head = f"{kind} {name}" + (f": {', '.join(members)}" if members else "")
        text.append(head)
        for key in seen.readable(name):
            text.append(f"  reads {key}")
    return data, text


def _remove_repo(conn: psycopg.Connection[Any], args: argparse.Namespace) -> Result:
    from codesift.store.postgres.access import remove_repo

    if not remove_repo(conn, args.repo):
        raise QueryError(f"no repository {args.repo} in the shared index")
    return {"repo": args.repo, "removed": True}, [f"removed {args.repo} and every row of it"]


def _role_exists(conn: psycopg.Connection[Any], role: str) -> None:
    from codesift.store.postgres.access import database_role_exists

    if not database_role_exists(conn, role):
        raise ConfigError(f"no database role {role}: create it first (codesift team sql)")


_HANDLERS: dict[str, Callable[[psycopg.Connection[Any], argparse.Namespace], Result]] = {
    "init": _init,
    "reader": _reader,
    "delegate": _delegate,
    "member": _member,
    "principal": _principal,
    "grant": _grant,
    "revoke": _revoke,
    "row-security": _row_security,
    "list": _list,
    "remove-repo": _remove_repo,
}
