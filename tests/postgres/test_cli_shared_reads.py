"""`codesift symbols`, `callers`, `callees`, `graph` and `status` over the shared
PostgreSQL index (`--db`, or `index.backend = "postgres"` in the settings), and
`codesift index` writing into it from the settings: the same output shapes as
over the local index, the repository key in paths when several repositories
are in view, a walk deeper than one edge equal to the local one, and the
settings' errors in one line."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from codesift.cli import main

pytestmark = pytest.mark.usefixtures("git_isolation")

APP = {
    "http/server.py": (
        "def split_header(line: str) -> list[str]:\n"
        "    return line.split(':', 1)\n\n\n"
        "def parse_http_header(line: str) -> tuple[str, str]:\n"
        '    """Split one HTTP header line into its name and value."""\n'
        "    name, value = split_header(line)\n"
        "    return name.strip().lower(), value.strip()\n\n\n"
        "def handle_request(lines: list[str]) -> dict[str, str]:\n"
        "    return dict(parse_http_header(line) for line in lines)\n\n\n"
        "def serve_forever(port: int) -> None:\n"
        "    print(port, handle_request(['Host: example']))\n"
    ),
    "billing/retry.py": (
        "class RetryPolicy:\n"
        '    """How a failed charge is retried: exponential backoff."""\n\n'
        "    def next_delay(self, attempt: int) -> float:\n"
        "        return 2.0 ** attempt\n"
    ),
}

SECRET = {
    "vault/keys.py": (
        "def rotate_master_key(vault) -> None:\n"
        '    """Rotate the master encryption key of the vault."""\n'
        "    vault.key = derive_master_key(vault.seed)\n\n\n"
        "def derive_master_key(seed: bytes) -> bytes:\n"
        "    return seed[::-1]\n"
    ),
}

NO_VECTORS = "[embedding]\nenabled = false\n"


@pytest.fixture(autouse=True)
def in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODESIFT_NO_SERVER", "1")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def index_shared(capsys: pytest.CaptureFixture[str], dsn: str, root: Path, key: str) -> None:
    """`codesift index` of `root` into the shared index at `dsn` as `key`."""
    code, _, err = run(capsys, "index", str(root), "--quiet", "--db", dsn, "--repo", key)
    assert code == 0, err


def commit(root: Path, message: str) -> None:
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-q", "-m", message], cwd=root, check=True)


@pytest.fixture
def app(make_repo: Any) -> Path:
    root: Path = make_repo({**APP, ".codesift.toml": NO_VECTORS}, name="app")
    return root


@pytest.fixture
def indexed(pg_dsn: str, app: Path, make_repo: Any, capsys: pytest.CaptureFixture[str]) -> Path:
    """app as acme/app@main and a second repository as acme/secret@main."""
    secret: Path = make_repo({**SECRET, ".codesift.toml": NO_VECTORS}, name="secret")
    for root, key in ((app, "acme/app@main"), (secret, "acme/secret@main")):
        index_shared(capsys, pg_dsn, root, key)
    return app


def test_symbols_over_one_and_over_several_repositories(
    pg_dsn: str, indexed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    local = run_json(capsys, "symbols", "parse_http_header", "--root", str(indexed))
    one = run_json(
        capsys, "symbols", "parse_http_header", "--db", pg_dsn, "--repo", "acme/app@main"
    )
    # The same shape and the same definition; ids are the shared index's own.
    assert set(one) == set(local) == {"exact", "fuzzy"}
    assert [set(s) for s in one["exact"]] == [set(s) for s in local["exact"]]
    strip = ("id", "parent_id")
    assert [{k: v for k, v in s.items() if k not in strip} for s in one["exact"]] == [
        {k: v for k, v in s.items() if k not in strip} for s in local["exact"]
    ]
    assert one["exact"][0]["history"]["subject"] == "initial"
    # Both repositories in view: paths start with the repository key.
    both = run_json(capsys, "symbols", "derive_master_key", "--db", pg_dsn)
    assert [s["path"] for s in both["exact"]] == ["acme/secret@main/vault/keys.py"]
    similar = run_json(capsys, "symbols", "derive_mastr_key", "--db", pg_dsn)
    assert similar["exact"] == []
    assert similar["fuzzy"][0]["name"] == "derive_master_key"
    code, out, _ = run(capsys, "symbols", "RetryPolicy", "--db", pg_dsn)
    assert code == 0
    assert "acme/app@main/billing/retry.py:1-5" in out and "class" in out
    code, out, _ = run(capsys, "symbols", "zzqqxx", "--db", pg_dsn)
    assert code == 0 and "no definitions match 'zzqqxx'" in out
    # Names are compared, never matched as patterns.
    for pattern in ("%", "_", "%key%", "derive_master_ke_"):
        assert run_json(capsys, "symbols", pattern, "--db", pg_dsn)["exact"] == []


def _edges_by_name(data: dict[str, Any]) -> list[tuple[str, str, str, int]]:
    names = {n["id"]: n["qualified_name"] for n in data["nodes"]}
    return sorted(
        (
            names[e["source"]],
            e["kind"],
            names[e["target"]] if e["target"] is not None else e["target_name"],
            e["line"],
        )
        for e in data["edges"]
    )


@pytest.mark.parametrize(
    ("name", "options"),
    [
        ("split_header", ["--direction", "callers", "--depth", "3"]),
        ("serve_forever", ["--direction", "callees", "--depth", "4"]),
        ("parse_http_header", ["--depth", "2"]),
        ("RetryPolicy", ["--kind", "contains", "--kind", "calls", "--depth", "2"]),
        ("serve_forever", ["--direction", "callees", "--depth", "4", "--max-nodes", "2"]),
    ],
)
def test_graph_walks_as_deep_as_the_local_walk(
    pg_dsn: str,
    indexed: Path,
    capsys: pytest.CaptureFixture[str],
    name: str,
    options: list[str],
) -> None:
    local = run_json(capsys, "graph", name, *options, "--root", str(indexed))
    shared = run_json(capsys, "graph", name, *options, "--db", pg_dsn, "--repo", "acme/app@main")
    assert set(shared) == set(local)
    assert _edges_by_name(shared) == _edges_by_name(local)
    assert [(n["path"], n["qualified_name"]) for n in shared["nodes"]] == [
        (n["path"], n["qualified_name"]) for n in local["nodes"]
    ]
    assert shared["truncated"] == local["truncated"]
    assert len(shared["roots"]) == len(local["roots"]) == 1


def test_a_deep_walk_reaches_three_edges_away(
    pg_dsn: str, indexed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = run_json(
        capsys, "graph", "split_header", "--direction", "callers", "--depth", "3", "--db", pg_dsn
    )
    names = [n["qualified_name"] for n in data["nodes"]]
    assert names[0] == "server.split_header"
    assert "server.serve_forever" in names  # split <- parse <- handle <- serve
    assert all(n["path"].startswith("acme/app@main/") for n in data["nodes"])
    shallow = run_json(
        capsys, "graph", "split_header", "--direction", "callers", "--depth", "2", "--db", pg_dsn
    )
    assert "server.serve_forever" not in [n["qualified_name"] for n in shallow["nodes"]]
    code, out, _ = run(capsys, "graph", "split_header", "--direction", "callers", "--db", pg_dsn)
    assert code == 0 and "server.parse_http_header calls server.split_header" in out


def test_callers_and_callees(
    pg_dsn: str, indexed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    local = run_json(capsys, "callers", "parse_http_header", "--root", str(indexed))
    shared = run_json(
        capsys, "callers", "parse_http_header", "--db", pg_dsn, "--repo", "acme/app@main"
    )
    keys = {"name", "nodes", "truncated", "omitted", "max_nodes", "calls_pending"}
    assert set(shared) == set(local) == keys
    assert (shared["truncated"], shared["omitted"]) == (local["truncated"], local["omitted"])
    assert shared["calls_pending"] == local["calls_pending"] == 0
    assert [
        [(c["edge"], c["node"]["qualified_name"]) for c in n["callers"]] for n in shared["nodes"]
    ] == [[(c["edge"], c["node"]["qualified_name"]) for c in n["callers"]] for n in local["nodes"]]
    assert [c["node"]["name"] for c in shared["nodes"][0]["callers"]] == ["handle_request"]
    callees = run_json(capsys, "callees", "rotate_master_key", "--db", pg_dsn)
    assert [c["node"]["path"] for c in callees["nodes"][0]["callees"] if c["node"]] == [
        "acme/secret@main/vault/keys.py"
    ]
    code, out, _ = run(capsys, "callers", "derive_master_key", "--db", pg_dsn)
    assert code == 0
    assert "← acme/secret@main/vault/keys.py:1-3" in out and "rotate_master_key" in out
    code, out, _ = run(capsys, "callers", "zzqqxx", "--db", pg_dsn)
    assert code == 0 and "no definition named 'zzqqxx'" in out


def test_status_reports_each_repository(
    pg_dsn: str, indexed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = run_json(capsys, "status", "--db", pg_dsn)
    repos = {r["repo"]: r for r in data["repositories"]}
    assert list(repos) == ["acme/app@main", "acme/secret@main"]
    app = repos["acme/app@main"]
    assert app["files"] == 2  # two Python files: the settings file is never shared
    assert app["languages"]["python"] == 2
    assert app["nodes"] >= 6 and app["chunks"] > 0 and app["edges"] >= 4
    assert app["vectors"] == 0 and app["models"] is None
    assert app["indexed_at"] is not None and app["commit"] and app["subject"] == "initial"
    assert app["root"] == str(indexed.resolve())
    # A new commit: the next run reports it.
    (indexed / "http" / "server.py").write_text(
        APP["http/server.py"] + "\n\ndef extra() -> None:\n    pass\n"
    )
    commit(indexed, "add extra")
    code, _, err = run(
        capsys, "index", str(indexed), "--quiet", "--db", pg_dsn, "--repo", "acme/app@main"
    )
    assert code == 0, err
    again = run_json(capsys, "status", "--db", pg_dsn, "--repo", "acme/app@main")
    [only] = again["repositories"]
    assert only["subject"] == "add extra" and only["nodes"] == app["nodes"] + 1
    code, out, _ = run(capsys, "status", "--db", pg_dsn)
    assert code == 0
    assert "repository  acme/app@main" in out and "repository  acme/secret@main" in out
    assert "commit      " in out and "add extra" in out


# --- the settings ------------------------------------------------------------------------


def test_index_backend_postgres_in_the_workspace_settings(
    pg_dsn: str, app: Path, make_repo: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    (app / ".codesift.toml").write_text(
        f'{NO_VECTORS}[index]\nbackend = "postgres"\ndsn = "{pg_dsn}"\nrepo = "acme/app@main"\n'
    )
    lines = run(capsys, "index", str(app), "--json")[1].splitlines()
    assert json.loads(lines[-1])["repo"] == "acme/app@main"
    assert json.loads(lines[-1])["files_added"] == 2  # the settings file is never shared
    # A second repository written with --db: the workspace's commands now see it.
    other: Path = make_repo({**SECRET, ".codesift.toml": NO_VECTORS}, name="secret")
    assert run(capsys, "index", str(other), "--quiet", "--db", pg_dsn, "--repo", "s")[0] == 0
    found = run_json(capsys, "symbols", "derive_master_key", "--root", str(app))
    assert [s["path"] for s in found["exact"]] == ["s/vault/keys.py"]
    walk = run_json(capsys, "graph", "derive_master_key", "--root", str(app))
    assert {n["path"] for n in walk["nodes"]} == {"s/vault/keys.py"}
    callers = run_json(capsys, "callers", "derive_master_key", "--root", str(app))
    assert callers["nodes"][0]["callers"][0]["node"]["name"] == "rotate_master_key"
    status = run_json(capsys, "status", "--root", str(app))
    assert [r["repo"] for r in status["repositories"]] == ["acme/app@main", "s"]
    search = run_json(capsys, "search", "master encryption key", "--root", str(app))
    assert search["results"][0]["path"] == "s/vault/keys.py"
    # --repo and --principal apply to the settings' shared index too.
    assert (
        run_json(capsys, "status", "--root", str(app), "--repo", "s")["repositories"][0]["repo"]
        == "s"
    )
    assert run_json(capsys, "status", "--root", str(app), "--principal", "nobody") == {
        "repositories": []
    }


def test_a_config_file_names_the_shared_index_and_db_wins(
    pg_dsn: str, app: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "team.toml"
    config.write_text(f'[index]\nbackend = "postgres"\ndsn = "{pg_dsn}"\nrepo = "team/app"\n')
    code, _, err = run(capsys, "index", str(app), "--quiet", "--config", str(config))
    assert code == 0, err
    status = run_json(capsys, "status", "--root", str(app), "--config", str(config))
    assert [r["repo"] for r in status["repositories"]] == ["team/app"]
    found = run_json(capsys, "symbols", "RetryPolicy", "--root", str(app), "--config", str(config))
    assert [s["path"] for s in found["exact"]] == ["billing/retry.py"]
    # Without the file: the local index.
    assert "database" in run_json(capsys, "status", "--root", str(app))
    # --db on the command line wins over the settings' DSN (here unreachable).
    config.write_text('[index]\nbackend = "postgres"\ndsn = "postgresql://u@127.0.0.1:1/x"\n')
    args = ("--root", str(app), "--config", str(config))
    code, _, err = run(capsys, "status", *args)
    assert code == 2 and "cannot connect to the shared index" in err
    assert (
        run_json(capsys, "status", *args, "--db", pg_dsn)["repositories"][0]["repo"] == "team/app"
    )
    code, _, err = run(
        capsys,
        "index",
        str(app),
        "--quiet",
        "--config",
        str(config),
        "--db",
        pg_dsn,
        "--repo",
        "team/app",
    )
    assert code == 0, err


@pytest.mark.parametrize(
    "argv",
    [
        ["symbols", "RetryPolicy"],
        ["callers", "parse_http_header"],
        ["callees", "serve_forever"],
        ["graph", "serve_forever", "--depth", "2"],
        ["status"],
        ["search", "http header"],
        ["index"],
    ],
)
def test_backend_postgres_without_a_dsn_is_one_line(
    app: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    (app / ".codesift.toml").write_text(f'{NO_VECTORS}[index]\nbackend = "postgres"\n')
    where = [str(app)] if argv == ["index"] else ["--root", str(app)]
    code, out, err = run(capsys, *argv, *where)
    assert code == 2, err
    assert err.strip().splitlines() == [err.strip()] and "Traceback" not in err
    assert 'index.backend is "postgres" but index.dsn is empty' in err
    assert out == ""
    # Nothing was indexed before the error (index checks its settings first).
    assert not (app / ".codesift" / "index.db").exists()


def test_repo_or_principal_without_a_shared_index_is_a_usage_error(
    app: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (
        ["symbols", "RetryPolicy", "--root", str(app), "--repo", "x"],
        ["status", "--root", str(app), "--principal", "ana"],
        ["index", str(app), "--repo", "x"],
        ["graph", "RetryPolicy", "--root", str(app), "--db", ""],
    ):
        code, _, err = run(capsys, *argv)
        assert code == 2, argv
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
        assert "--db" in err
    assert not (app / ".codesift" / "index.db").exists()
    assert os.path.isdir(app)


def test_a_server_keeping_the_local_index_leaves_shared_reads_to_the_cli(app: Path) -> None:
    """A server answers the CLI from the local index it keeps: with the settings
    naming the shared index, it declines and the CLI reads the shared one."""
    from codesift.cli.run import run_command
    from codesift.cli.served import answer_socket_request
    from codesift.engine.workspace import Workspace

    (app / ".codesift.toml").write_text(
        f'{NO_VECTORS}[index]\nbackend = "postgres"\ndsn = "postgresql://u@127.0.0.1:1/x"\n'
    )
    ws = Workspace.at(app)
    folder = SimpleNamespace(db_path=ws.db_path, settings=ws.settings)
    request = {
        "argv": ["symbols", "RetryPolicy", "--no-update"],
        "root": str(ws.root),
        "db_path": str(ws.db_path),
        "cwd": str(ws.root),
    }
    answer = answer_socket_request(
        request, cast(Any, folder), cast(Any, None), run_command=run_command
    )
    assert answer == {"fallback": "the workspace reads the shared index (index.backend = postgres)"}


def test_time_windows_over_the_shared_index(
    pg_dsn: str, indexed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = ("--db", pg_dsn, "--repo", "acme/app@main")
    found = run_json(capsys, "symbols", "RetryPolicy", *db, "--since", "2000-01-01")
    assert [s["name"] for s in found["exact"]] == ["RetryPolicy"]
    assert run_json(capsys, "symbols", "RetryPolicy", *db, "--until", "2000-01-01")["exact"] == []
    walk = run_json(capsys, "graph", "serve_forever", "--direction", "callees", "--depth", "3", *db)
    assert len(walk["nodes"]) == 4
    old = ["graph", "serve_forever", "--direction", "callees", "--depth", "3", *db]
    assert run_json(capsys, *old, "--as-of", "2000-01-01")["nodes"] == []
    # A revision is resolved in the folder the one repository in view was indexed from.
    at_head = run_json(capsys, "symbols", "RetryPolicy", *db, "--as-of", "HEAD")
    assert [s["name"] for s in at_head["exact"]] == ["RetryPolicy"]
    # With several repositories in view there is no one folder to resolve it in.
    code, _, err = run(capsys, "symbols", "RetryPolicy", "--db", pg_dsn, "--as-of", "HEAD")
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "git revisions need a workspace" in err


@pytest.mark.parametrize(
    "name",
    ["parse_http_headr", "split_heder", "server.parse_http_headr", "RetryPolicy.next_dela"],
)
def test_similar_names_are_the_local_ones(pg_dsn: str, indexed: Path, name: str) -> None:
    """One symbol lookup (engine/symbols.find_symbols) over either store's port: the
    similar names and their scores (a typed qualifier's bonus included) are the
    local index's. The local lookup goes on with signatures matching the name's
    words (score 0), which the shared index does not search for names."""
    from codesift.engine import Engine, Workspace
    from codesift.engine.postgres import open_shared_search

    def scored(found: Any) -> list[tuple[str, str, float]]:
        return [(s.node.qualified_name, s.node.path, s.score) for s in found.fuzzy if s.score]

    with Engine(Workspace.at(indexed), quiet=True) as engine:
        local = engine.symbols(name, 10)
    with open_shared_search(pg_dsn, repos=["acme/app@main"]) as shared:
        remote = shared.symbols(name, 10)
    assert scored(local), f"no similar names for {name!r}"
    assert scored(remote) == scored(local)


def test_the_test_filter_over_the_shared_index_is_the_local_one(
    pg_dsn: str, make_repo: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """`search --db --tests exclude` is conducted as a local search is: the test
    files dropped from a wider page, which still fills up."""
    files = {
        **APP,
        "tests/test_http.py": (
            "from http.server import parse_http_header\n\n\n"
            "def test_parse_http_header_splits_the_header_line():\n"
            "    assert parse_http_header('Host: a') == ('host', 'a')\n"
        ),
        ".codesift.toml": NO_VECTORS,
    }
    root: Path = make_repo(files, name="tested")
    key = "acme/tested@main"
    index_shared(capsys, pg_dsn, root, key)
    query = ["search", "parse the http header line", "-k", "3", "--no-embed"]

    def paths(*where: str) -> list[str]:
        return [r["path"] for r in run_json(capsys, *query, *where)["results"]]

    shared = ("--db", pg_dsn, "--repo", key)
    assert "tests/test_http.py" in paths(*shared)
    kept = paths(*shared, "--tests", "exclude")
    assert "tests/test_http.py" not in kept and len(kept) == 3
    assert kept == paths("--root", str(root), "--tests", "exclude")


def test_messages_frames_and_tests_auto_over_the_shared_index_are_the_local_ones(
    pg_dsn: str, make_repo: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    """A message pasted without quotes leads where a string literal raises it (the
    store's phrase query, `<->` in PostgreSQL); `--tests auto` keeps the test file
    for a test's name and not for a question; a stack frame finds its line."""
    files = {
        "billing/gateway.py": (
            "def submit(charge):\n"
            "    if charge.card is None:\n"
            '        raise ValueError("charge declined: card missing")\n'
            "    return charge\n"
        ),
        "billing/retry.py": (
            "def retry(charge):\n"
            '    """Retry a charge declined when the card is missing: card missing,\n'
            '    charge declined, declined charge, missing card."""\n'
            "    return charge.retry()\n"
        ),
        "tests/test_gateway.py": (
            "def test_submit_without_card():\n"
            "    with raises(ValueError, match='charge declined: card missing'):\n"
            "        submit(Charge(card=None))\n"
        ),
        ".codesift.toml": NO_VECTORS,
    }
    root: Path = make_repo(files, name="messages")
    key = "acme/messages@main"
    index_shared(capsys, pg_dsn, root, key)
    shared = ("--db", pg_dsn, "--repo", key)
    local = ("--root", str(root))

    def hits(query: str, *where: str) -> list[tuple[str, int]]:
        found = run_json(capsys, "search", query, "-k", "3", "--no-embed", *where)
        return [(r["path"], r["start_line"]) for r in found["results"]]

    pasted = hits("charge declined: card missing", *shared)
    assert pasted[0] == ("billing/gateway.py", 1)
    assert pasted == hits("charge declined: card missing", *local)
    named = hits("test_submit_without_card", *shared, "--tests", "auto")
    assert named[0][0] == "tests/test_gateway.py"
    asked = hits("retry a declined charge", *shared, "--tests", "auto")
    assert "tests/test_gateway.py" not in [path for path, _ in asked]
    assert asked == hits("retry a declined charge", *local, "--tests", "auto")
    frame = 'File "/srv/app/billing/gateway.py", line 3, in submit'
    located = hits(frame, *shared)
    assert located[0] == ("billing/gateway.py", 1)  # the chunk holding line 3
    assert located == hits(frame, *local)
