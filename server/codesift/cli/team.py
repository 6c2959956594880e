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
from typing import TYPE_CHECKING, Any, Protocol

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
    """Run one `codesift team` command (see the module docstring): the engine
    does it (engine/team_admin.py), this draws what it did."""
    from codesift.engine import team_admin

    name = str(args.team_command)
    if name == "sql":
        text = team_admin.setup_sql(args.database, args.indexer, args.reader)
        inv.print(json.dumps({"sql": text}) if args.json else text)
        return EXIT_OK
    _check_names(args)  # before connecting: a bad name says so at once
    operation = _operations()[name]
    with team_admin.admin_connection(args.db) as conn:
        data = operation(conn, args)
    if args.json:
        inv.print(json.dumps(data, ensure_ascii=False))
    else:
        for line in _RENDER[name](data):
            inv.print(line)
    return EXIT_OK


def _check_names(args: argparse.Namespace) -> None:
    from codesift.engine.team_admin import check_name, check_repo

    for attr, kind in (("role", "role"), ("group", "group"), ("user", "user")):
        value = getattr(args, attr, None)
        if isinstance(value, str):
            check_name(value, kind)
    for attr in ("name", "principal"):
        value = getattr(args, attr, None)
        if isinstance(value, str):
            check_name(value, "principal")
    if isinstance(getattr(args, "repo", None), str):
        check_repo(args.repo)


Answer = dict[str, Any]
Operation = Callable[["psycopg.Connection[Any]", argparse.Namespace], Answer]
Render = Callable[[Answer], list[str]]


def _operations() -> dict[str, Operation]:
    """What the engine does for each command (imported here: psycopg is loaded
    only by `codesift team`)."""
    from codesift.engine import team_admin as t

    return {
        "init": lambda c, a: t.init(c),
        "reader": lambda c, a: t.reader(c, a.role),
        "delegate": lambda c, a: t.delegate(c, a.role, remove=a.remove),
        "member": lambda c, a: t.member(c, a.group, a.user, remove=a.remove),
        "principal": lambda c, a: t.principal(c, a.name, group=a.group, remove=a.remove),
        "grant": lambda c, a: t.grant(c, a.principal, a.repo, group=a.group),
        "revoke": lambda c, a: t.revoke(c, a.principal, a.repo),
        "row-security": lambda c, a: t.row_security(c, on=a.state == "on"),
        "list": lambda c, a: t.overview(c, a.principal),
        "remove-repo": lambda c, a: t.remove_repo(c, a.repo),
    }


def _init_text(data: Answer) -> list[str]:
    return [f"the shared index is ready (schema version {data['schema_version']})"]


def _reader_text(data: Answer) -> list[str]:
    return [f"{data['role']} may now read the index ({', '.join(data['tables'])})"]


def _delegate_text(data: Answer) -> list[str]:
    if not data["delegate"]:
        return [f"{data['role']} may no longer read as another principal"]
    return [
        f"{data['role']} may now read as any principal (--principal): it must take the"
        " principal from its own authentication"
    ]


def _member_text(data: Answer) -> list[str]:
    if not data["member"]:
        return [f"{data['user']} is no longer in {data['group']}"]
    return [f"{data['user']} is in {data['group']}"]


def _principal_text(data: Answer) -> list[str]:
    if data.get("removed"):
        return [f"removed {data['principal']}"]
    return [f"{data['kind']} {data['principal']}"]


def _grant_text(data: Answer) -> list[str]:
    if data["granted"]:
        return [f"{data['principal']} may read {data['repo']}"]
    return [f"{data['principal']} may no longer read {data['repo']}"]


def _row_security_text(data: Answer) -> list[str]:
    return [f"row security {'on' if data['row_security'] else 'off'}"]


def _list_text(data: Answer) -> list[str]:
    if "principal" in data:
        groups = data["groups"]
        text = [
            f"{data['kind']} {data['principal']}"
            + (f" (in {', '.join(groups)})" if groups else ""),
            *(f"  reads {key}" for key in data["repositories"]),
        ]
        if not data["repositories"]:
            text.append("  reads no repository")
        return text
    text = [f"row security  {'on' if data['row_security'] else 'off'}"]
    text.append(f"delegates     {', '.join(data['delegates']) or '(none)'}")
    text.append(f"repositories  {len(data['repositories'])}")
    for entry in data["principals"]:
        members = entry["members"]
        text.append(
            f"{entry['kind']} {entry['name']}" + (f": {', '.join(members)}" if members else "")
        )
        text.extend(f"  reads {key}" for key in entry["reads"])
    return text


def _remove_repo_text(data: Answer) -> list[str]:
    return [f"removed {data['repo']} and every row of it"]


_RENDER: dict[str, Render] = {
    "init": _init_text,
    "reader": _reader_text,
    "delegate": _delegate_text,
    "member": _member_text,
    "principal": _principal_text,
    "grant": _grant_text,
    "revoke": _grant_text,
    "row-security": _row_security_text,
    "list": _list_text,
    "remove-repo": _remove_repo_text,
}
