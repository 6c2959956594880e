"""The shared PostgreSQL index on the command line: which DSN a command reads
(--db, else `index.dsn` with `index.backend = "postgres"`), and the commands'
reads and writes there.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

import apsw

from codesift.cli.invocation import Invocation
from codesift.engine.workspace import Workspace
from codesift.errors import ConfigError, QueryError

if TYPE_CHECKING:
    from codesift.engine.api import IndexReader
    from codesift.engine.postgres import SharedSearch
    from codesift.retrieval import SearchResponse


def request_options(args: argparse.Namespace) -> dict[str, Any]:
    """`codesift search`'s options as SearchRequest fields (all but the query and
    the time filters)."""
    return {
        "top_k": args.top_k,
        "layers": tuple(args.layer or ()),
        "languages": tuple(args.lang or ()),
        "paths": tuple(args.path or ()),
        "snippet_chars": args.snippet_chars,
        "max_tokens": args.max_tokens,
        "include_graph": args.graph,
    }


def given_dsn(args: argparse.Namespace) -> str | None:
    """--db, when given (ConfigError when empty)."""
    db: str | None = getattr(args, "db", None)
    if db is not None and not db.strip():
        raise ConfigError("--db needs a DSN (postgresql://user@host/db)")
    return db


def settings_dsn(ws: Workspace) -> str | None:
    """`index.dsn` when the settings say `index.backend = "postgres"` (ConfigError
    when it is empty), else None."""
    settings = ws.settings.index
    if settings.backend != "postgres":
        return None
    if not settings.dsn.strip():
        raise ConfigError(
            'index.backend is "postgres" but index.dsn is empty: set index.dsn'
            " (.codesift.toml or --config) or give --db DSN"
        )
    from codesift.engine.postgres import dsn_has_password

    if dsn_has_password(settings.dsn):
        raise ConfigError(
            "index.dsn holds a password: settings files are read (and indexed) as text;"
            " keep the password in ~/.pgpass, PGPASSWORD or a pg_service.conf service"
        )
    return settings.dsn


def shared_dsn(args: argparse.Namespace, inv: Invocation) -> tuple[str | None, Workspace | None]:
    """(the DSN of the shared index a reading command reads, or None for the local
    index; the workspace, when resolved to find out): `--db DSN`, else `index.dsn`
    when the workspace's settings say `index.backend = "postgres"`. ConfigError for
    an empty DSN; QueryError for --repo or --principal without a shared index."""
    db = given_dsn(args)
    if db is not None:
        return db, None
    ws = inv.workspace(args)
    dsn = settings_dsn(ws)
    if dsn is not None:
        return dsn, ws
    if getattr(args, "repo", None) or getattr(args, "principal", None):
        raise QueryError(
            "--repo and --principal read the shared index: give --db DSN"
            ' or set index.backend = "postgres"'
        )
    return None, ws


def open_shared(args: argparse.Namespace, dsn: str) -> SharedSearch:
    """The shared index at `dsn`, read as --principal, over the --repo keys."""
    from codesift.engine.postgres import open_shared_search

    return open_shared_search(
        dsn, principal=args.principal, repos=tuple(args.repo or ()), parallel=False
    )


def open_reader(args: argparse.Namespace, inv: Invocation) -> IndexReader:
    """What `symbols`, `callers`, `callees` and `graph` read: the shared index
    (see `shared_dsn`) or the workspace's engine."""
    dsn, ws = shared_dsn(args, inv)
    if dsn is not None:
        return open_shared(args, dsn)
    return inv.engine(args, quiet=bool(args.json), workspace=ws)


def write_into_shared(
    args: argparse.Namespace, inv: Invocation, ws: Workspace, conn: apsw.Connection, dsn: str
) -> None:
    """`index --db` (or `index.backend = "postgres"`): the index just updated,
    written into the shared index under --repo, else `index.repo`, else the
    default key."""
    from codesift.engine.postgres import repo_key, write_shared

    key = repo_key(ws.root, args.repo or ws.settings.index.repo or None)
    shared = write_shared(conn, dsn, key, str(ws.root), on_wait=inv.say)
    if args.json:
        inv.print(
            json.dumps(
                {
                    "repo": key,
                    "files_added": shared.files_added,
                    "files_replaced": shared.files_replaced,
                    "files_deleted": shared.files_deleted,
                    "files_unchanged": shared.files_unchanged,
                    "rows": dict(shared.rows),
                    "seconds": round(shared.seconds, 3),
                }
            )
        )
    elif not args.quiet:
        inv.print(
            f"shared index {key}: {shared.files_added} files added,"
            f" {shared.files_replaced} replaced, {shared.files_deleted} deleted,"
            f" {shared.files_unchanged} unchanged ({shared.rows_written} rows)"
            f" in {shared.seconds:.1f} s"
        )


def search_shared(
    args: argparse.Namespace, inv: Invocation, dsn: str, ws: Workspace | None
) -> SearchResponse:
    """`search --db` (or `index.backend = "postgres"`): the same search over the
    shared PostgreSQL index, with the workspace's search and embedding settings
    when it was resolved (else the defaults)."""
    from codesift.config import EmbeddingSettings, SearchSettings
    from codesift.engine.folder_search import search_shared_index
    from codesift.engine.models import make_embedder
    from codesift.engine.postgres import open_shared_search
    from codesift.engine.search import keeps_tests, search_request

    defaults = ws.settings.search if ws is not None else SearchSettings()
    request = search_request(
        defaults,
        args.query,
        **request_options(args),
        as_of=args.as_of,
        since=args.since,
        until=args.until,
    )
    embedding = ws.settings.embedding if ws is not None else EmbeddingSettings()
    embedder = None if args.no_embed or not embedding.enabled else make_embedder(embedding)
    with open_shared_search(
        dsn,
        principal=args.principal,
        repos=tuple(args.repo or ()),
        settings=defaults,
        embedder=embedder,
    ) as shared:
        return search_shared_index(shared, request, tests=keeps_tests(args.tests, args.query))
