"""Routing a question to the workspace folder it is about, from real indexes of real
git repositories."""

from __future__ import annotations

from pathlib import Path

import pytest

from codesift.engine import Engine, Workspace
from codesift.engine.route import cached_profile, repository_profile, route_sources
from codesift.retrieval.routing import SourceProfile
from conftest import MakeRepo, run_git

BILLING = {
    "README.md": "# Billing\nCharges cards and retries failed payments.\n",
    "billing/retry.py": "def schedule_retry(charge):\n    return charge\n",
    "billing/charge.py": "class Charge:\n    def capture(self):\n        return 1\n",
    "tests/test_charge.py": "def test_invoice_pdf():\n    assert True\n",
}
SEARCH = {
    "README.md": "# Search\nA full-text index with a query parser.\n",
    "search/query.py": "def parse_query(text):\n    return text.split()\n",
    "search/index.py": "class InvertedIndex:\n    pass\n",
}


def indexed(root: Path) -> Workspace:
    ws = Workspace.at(root)
    with Engine(ws, quiet=True) as engine:
        engine.reindex(vectors=False)
    return ws


def profile_of(ws: Workspace) -> SourceProfile:
    with Engine(ws, update=False) as engine:
        return repository_profile(ws, engine.connection())


def test_a_profile_names_the_remote_branch_readme_and_outline(
    make_repo: MakeRepo, git_isolation: None
) -> None:
    root = make_repo(BILLING, name="billing-service")
    run_git(root, "remote", "add", "origin", "git@example.com:acme/billing-service.git")
    run_git(root, "branch", "-M", "main")
    profile = profile_of(indexed(root))
    fields = dict(profile.fields)
    assert profile.name == "billing-service"
    assert "acme/billing-service" in fields["name"]
    assert fields["branch"] == "main"
    assert "retries failed payments" in fields["readme"]
    assert "billing/retry.py" in fields["outline"]
    assert "schedule_retry" in fields["outline"]
    assert "test_invoice_pdf" not in fields["outline"]  # test files are left out


def test_a_question_is_routed_to_the_repository_it_is_about(
    make_repo: MakeRepo, git_isolation: None
) -> None:
    billing = indexed(make_repo(BILLING, name="billing"))
    search = indexed(make_repo(SEARCH, name="search"))
    profiles = [profile_of(billing), profile_of(search)]

    result = route_sources("how does a failed charge get retried", profiles)
    assert [m.name for m in result.repositories] == ["billing"]
    assert result.repositories[0].confidence == 1.0
    assert "charge" in result.repositories[0].rationale

    result = route_sources("parse the query text", profiles)
    assert result.repositories[0].name == "search"
    assert route_sources("kubernetes helm chart", profiles).repositories == ()


def test_a_cached_profile_is_rebuilt_when_the_index_changes(
    make_repo: MakeRepo, git_isolation: None
) -> None:
    root = make_repo(SEARCH, name="search")
    ws = indexed(root)
    with Engine(ws, update=False) as engine:
        first = cached_profile(ws, engine.connection())
        assert cached_profile(ws, engine.connection()) is first
    (root / "search" / "stemmer.py").write_text("def porter_stem(word):\n    return word\n")
    with Engine(ws, quiet=True) as engine:
        engine.reindex(vectors=False)
        again = cached_profile(ws, engine.connection())
    assert "porter_stem" in dict(again.fields)["outline"]


def test_a_folder_outside_git_has_no_remote_or_branch(tmp_path: Path, git_isolation: None) -> None:
    root = tmp_path / "plain"
    root.mkdir()
    (root / "tool.py").write_text("def run():\n    return 0\n")
    fields = dict(profile_of(indexed(root)).fields)
    assert fields["branch"] == ""
    assert fields["name"].strip() == "plain"


def test_a_collection_profile_routes_by_labels_headings_and_text(tmp_path: Path) -> None:
    from codesift.engine.route import collection_profile

    prd = tmp_path / "prd"
    prd.mkdir()
    (prd / "refunds.md").write_text(
        "# Refunds\n\n## Partial refunds\n\nAgents refund part of an order.\n"
    )
    runbooks = tmp_path / "runbooks"
    runbooks.mkdir()
    (runbooks / "pager.md").write_text("# On call\n\nRestart the queue workers.\n")
    profiles = []
    for name, folder, labels in (("prd", prd, ["billing"]), ("runbooks", runbooks, ["ops"])):
        ws = indexed(folder)
        with Engine(ws, update=False) as engine:
            profiles.append(collection_profile(name, f"{name} docs", labels, engine.connection()))
    fields = dict(profiles[0].fields)
    assert "refunds > partial refunds" in fields["headings"]
    assert "agents refund part of an order" in fields["text"]

    result = route_sources("partial refund for billing", [], profiles)
    assert [m.name for m in result.collections] == ["prd", "runbooks"]
    assert result.collections[0].confidence == 1.0
    assert "labels: billing" in result.collections[0].rationale
    assert result.collections[1].rationale.startswith("weak")
    assert result.repositories == ()


def test_route_asks_every_folder_and_the_collections_they_list(
    make_repo: MakeRepo, git_isolation: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from codesift.engine.route_folders import route

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "runbook.md").write_text("# Failed payments\n\nWhen a charge fails, page billing.\n")
    listing = f'[[collections]]\nname = "runbooks"\npath = "{docs}"\n'
    billing = make_repo({**BILLING, ".codesift.toml": listing}, name="billing")
    search = make_repo({**SEARCH, ".codesift.toml": listing}, name="search")
    result = route("failed charge retries", [Workspace.at(billing), Workspace.at(search)])
    assert [m.name for m in result.repositories] == ["billing"]
    assert [m.name for m in result.collections] == ["runbooks"]  # listed twice, routed once
    # alone in its pool, every term it has is a term every collection has: idf 0
    assert result.collections[0].confidence == 0.0
    assert "failed (headings, text)" in result.collections[0].rationale


WORKER = {
    "README.md": "# Worker\n\nRuns background jobs.\n",
    "docs/notes.md": "# Notes\n\nWorkers renew their leases.\n",
    "worker/run.py": (
        "def run(job):\n"
        "    # take a lease on the job and renew it with a heartbeat until it finishes\n"
        "    return job\n"
    ),
}
WEB = {
    "README.md": "# Web\n\nServes pages.\n",
    "web/app.py": (
        "def page(request):\n    # the heartbeat page for the load balancer\n    return request\n"
    ),
}


def test_an_index_tells_how_many_chunks_use_a_term_and_which_terms_its_best_chunks_hold(
    make_repo: MakeRepo, git_isolation: None
) -> None:
    from codesift.store.database import open_reader
    from codesift.store.route_profile import chunk_total, probe_terms, term_chunks

    ws = indexed(make_repo(WORKER, name="worker"))
    conn = open_reader(ws.db_path)  # a query-only reader, as searches use
    try:
        forms = {"leases": ("leases", "lease"), "heartbeat": ("heartbeat",), "zebra": ("zebra",)}
        counts = term_chunks(conn, forms)
        # `lease` in the code chunk, `leases` (stem `leas`) in a doc section
        assert counts == {"leases": 2, "heartbeat": 1}
        assert chunk_total(conn) >= 2
        best = probe_terms(conn, forms)
        assert frozenset({"leases", "heartbeat"}) in best
        assert all(chunk <= set(forms) for chunk in best)
        # A common term makes no chunk a candidate alone, but counts in those found.
        rarer = probe_terms(conn, forms, frozenset({"heartbeat"}))
        assert frozenset({"leases", "heartbeat"}) in rarer
        assert all("leases" in chunk for chunk in rarer)
    finally:
        conn.close()


def test_words_only_the_code_uses_route_a_prose_question(
    make_repo: MakeRepo, git_isolation: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from codesift.engine.route_folders import route

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    worker = Workspace.at(make_repo(WORKER, name="worker"))
    web = Workspace.at(make_repo(WEB, name="web"))
    question = "renew the lease with a heartbeat"
    # Nothing of it is in a name, a path or the start of a README...
    for ws in (worker, web):
        assert route_sources(question, [profile_of(indexed(ws.root))]).repositories == ()
    # ...but the indexes use it: worker all of it (together), web `heartbeat` only.
    result = route(question, [web, worker])
    assert [m.name for m in result.repositories] == ["worker", "web"]
    best, other = result.repositories
    assert "lease (vocabulary)" in best.rationale
    assert best.confidence > other.confidence
