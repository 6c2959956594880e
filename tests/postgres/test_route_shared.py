"""Routing over the shared index on a real PostgreSQL: its repositories join the
repository pool, profiled and scored by the same code as local ones, with the same term counts
as the local index's
(store/postgres/route.py, engine/shared_overlay.py), grants inside the SQL (an
ungranted repository never reaches a profile, a count or a rationale), the
workspaces' own repositories left out, and a shared index that is down leaves
local routing working."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psycopg
import pytest

from codesift.engine import Workspace
from codesift.engine.listener import EngineListener
from codesift.engine.postgres import index_into
from codesift.engine.route import route_sources
from codesift.engine.route_folders import route
from codesift.engine.shared_overlay import SharedIndex
from codesift.retrieval.routing import route_terms, term_forms
from codesift.store.database import open_reader
from codesift.store.postgres import Reader, add_member, add_principal, grant
from codesift.store.postgres.route import SharedRouteStore
from codesift.store.route_profile import IndexEvidence, chunk_total

pytestmark = pytest.mark.usefixtures("git_isolation")

NO_VECTORS = {"embedding": {"enabled": False}}
DOWN_DSN = "postgresql://nobody@127.0.0.1:1/nothing"

BILLING = {
    "billing/retry.py": (
        "class RetryPolicy:\n"
        '    """How a failed charge is retried: exponential backoff."""\n\n'
        "    def next_delay(self, attempt: int) -> float:\n"
        "        return 2.0 ** attempt\n\n\n"
        "def retry_failed_charge(charge, policy: RetryPolicy) -> bool:\n"
        "    return charge.submit()\n"
    ),
    "README.md": "# Billing\n\nCharges that fail are retried with exponential backoff.\n",
}
VAULT = {
    "vault/keys.py": (
        "def rotate_master_key(vault) -> None:\n"
        '    """Rotate the master encryption key of the vault."""\n'
        "    vault.key = derive_master_key(vault.seed)\n\n\n"
        "def derive_master_key(seed: bytes) -> bytes:\n"
        "    return seed[::-1]\n"
    ),
    "README.md": "# Vault\n\nKeeps the master encryption key and rotates it.\n",
}
HTTP = {
    "http/server.py": (
        "def parse_http_header(line: str) -> tuple[str, str]:\n"
        '    """Split one HTTP header line into its name and value."""\n'
        "    name, _, value = line.partition(':')\n"
        "    return name.strip().lower(), value.strip()\n"
    ),
    "README.md": "# Web\n\nA small HTTP server that parses request headers.\n",
}
KEY_QUERY = "where is the master encryption key rotated"


@pytest.fixture
def shared_repos(pg_dsn: str, make_repo: Any) -> dict[str, Path]:
    roots = {
        "acme/billing@main": make_repo(BILLING, name="billing"),
        "acme/vault@main": make_repo(VAULT, name="vault"),
        "acme/web@main": make_repo(HTTP, name="web"),
    }
    for key, root in roots.items():
        index_into(pg_dsn, root, repo=key, overrides=NO_VECTORS)
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        add_member(conn, "devs", "ana")
        add_principal(conn, "bob")
        assert grant(conn, "devs", "acme/billing@main")
        assert grant(conn, "ana", "acme/web@main")
    return roots


def test_shared_repositories_are_routed_by_the_shared_scoring(
    pg_dsn: str, shared_repos: dict[str, Path]
) -> None:
    shared = SharedIndex(pg_dsn)
    try:
        profiles, evidence, status = shared.route_pool()
        assert status.state == "ok"
        assert sorted(p.name for p in profiles) == sorted(shared_repos)
        vault = next(p for p in profiles if p.name == "acme/vault@main")
        fields = dict(vault.fields)
        assert "master encryption key" in fields["readme"]
        assert "vault/keys.py" in fields["outline"] and "rotate_master_key" in fields["outline"]
        assert fields["branch"] == "main" and vault.chunks > 0
        counts = evidence["acme/vault@main"].term_chunks(term_forms(route_terms(KEY_QUERY)))
        assert counts.get("master", 0) > 0 and counts.get("encryption", 0) > 0
        assert evidence["acme/billing@main"].term_chunks({"master": ("master",)}) == {}
        # The probe finds the chunks that hold the query's terms together.
        found = evidence["acme/vault@main"].probe(term_forms(("master", "key", "rotate")))
        assert any({"master", "key"} <= hit for hit in found)
        result = route_sources(KEY_QUERY, profiles, limit=3, evidence=evidence)
        assert result.repositories[0].name == "acme/vault@main"
        assert "vocabulary" in result.repositories[0].rationale
        web = route_sources("parse an http request header", profiles, limit=3, evidence=evidence)
        assert web.repositories[0].name == "acme/web@main"
    finally:
        shared.close()


def test_an_ungranted_repository_is_in_no_profile_count_or_rationale(
    pg_dsn: str, shared_repos: dict[str, Path]
) -> None:
    shared = SharedIndex(pg_dsn, principal="ana")
    try:
        profiles, evidence, status = shared.route_pool()
        assert sorted(p.name for p in profiles) == ["acme/billing@main", "acme/web@main"]
        assert status.repositories == ("acme/billing@main", "acme/web@main")
        result = route_sources(KEY_QUERY, profiles, limit=20, evidence=evidence)
        text = repr(result)
        assert "vault" not in text
    finally:
        shared.close()
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        forms = term_forms(("master", "encryption", "retry"))
        ana = SharedRouteStore(conn, Reader("ana"))
        counts = ana.term_chunks(forms)
        assert "acme/vault@main" not in counts and counts["acme/billing@main"]["retry"] > 0
        # Asking for the ungranted repository by key reads nothing of it.
        assert ana.probe("acme/vault@main", forms) == []
        assert ana.outlines(["acme/vault@main"], 2000)["acme/vault@main"].files == ()
        assert [s.key for s in SharedRouteStore(conn, Reader("bob")).stamps()] == []
        # The role's own view reads it.
        assert SharedRouteStore(conn, Reader()).probe("acme/vault@main", forms)


def test_codesift_route_adds_the_shared_pool_without_the_workspace_itself(
    pg_dsn: str, shared_repos: dict[str, Path], make_repo: Any
) -> None:
    # The vault is also open locally under the same key: only the local one is routed.
    local = shared_repos["acme/vault@main"]
    overrides = {
        **NO_VECTORS,
        "index": {"backend": "postgres", "dsn": pg_dsn, "repo": "acme/vault@main"},
    }
    ws = Workspace.at(local, overrides)
    result = route(KEY_QUERY, [ws], limit=5)
    names = [m.name for m in result.repositories]
    assert names[0] == ws.root.name
    assert "acme/vault@main" not in names
    web = route("parse an http request header", [ws], limit=5)
    assert web.repositories[0].name == "acme/web@main"


class _Warnings(EngineListener):
    def __init__(self) -> None:
        self.seen: list[str] = []

    def warning(self, message: str) -> None:
        self.seen.append(message)


def test_route_with_the_shared_index_down_routes_locally(make_repo: Any) -> None:
    root = make_repo(VAULT, name="vault")
    ws = Workspace.at(root, {**NO_VECTORS, "index": {"backend": "postgres", "dsn": DOWN_DSN}})
    listener = _Warnings()
    result = route(KEY_QUERY, [ws], listener, limit=5)
    assert [m.name for m in result.repositories] == ["vault"]
    assert len(listener.seen) == 1 and listener.seen[0].startswith("shared index unavailable")
    assert "\n" not in listener.seen[0]


def test_shared_evidence_counts_as_the_local_index_does(
    pg_dsn: str, shared_repos: dict[str, Path]
) -> None:
    forms = term_forms(route_terms("rotate the master encryption key of the vault, retry charges"))
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        store = SharedRouteStore(conn, Reader())
        shared_counts = store.term_chunks(forms)
        stamps = {s.key: s for s in store.stamps()}
        for key, root in shared_repos.items():
            local = open_reader(root / ".codesift" / "index.db")
            try:
                assert dict(IndexEvidence(local).term_chunks(forms)) == shared_counts.get(key, {})
                assert stamps[key].chunks == chunk_total(local)
            finally:
                local.close()


def test_the_postings_probe_finds_what_the_full_text_probe_finds(
    pg_dsn: str, shared_repos: dict[str, Path]
) -> None:
    # Scored from term_stats postings (one statement for every repository) or by a
    # full-text statement per repository and layer: the same chunks are candidates
    # and hold the same terms; only the ranking function differs (BM25, ts_rank).
    forms = term_forms(route_terms("rotate the master encryption keys, retry failed charges"))
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        store = SharedRouteStore(conn, Reader())
        postings = store.postings(forms)
        assert postings is not None
        for key in shared_repos:
            for common in (frozenset(), frozenset({"master", "retry"})):
                by_postings = postings.probe(key, common, 1000)
                by_statements = store.probe_by_statements(key, forms, common, 1000)
                assert sorted(map(sorted, by_postings)) == sorted(map(sorted, by_statements))
                assert store.probe(key, forms, common, 1000) == by_postings
        assert any(postings.probe(key, frozenset(), 1000) for key in shared_repos)
        # What a principal may not read has no postings either.
        ana = SharedRouteStore(conn, Reader("ana")).postings(forms)
        assert ana is not None and ana.probe("acme/vault@main", frozenset(), 1000) == []
