"""Access control of `codesift symbols`, `callers`, `callees`, `graph` and
`status` over the shared index: a principal gets nothing of a repository it is
not granted (no row, no name, no count, no neighbour through an edge from a
repository it may read), whatever it types, and a `--repo` naming such a
repository answers exactly as one that does not exist."""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from codesift.cli import main
from codesift.store.postgres import add_member, add_principal, grant

APP = {
    "http/server.py": (
        "def parse_http_header(line: str) -> tuple[str, str]:\n"
        "    name, _, value = line.partition(':')\n"
        "    return name.strip().lower(), value.strip()\n\n\n"
        "def handle_request(lines: list[str]) -> dict[str, str]:\n"
        "    return dict(parse_http_header(line) for line in lines)\n"
    ),
    ".codesift.toml": "[embedding]\nenabled = false\n",
}

SECRET = {
    "vault/keys.py": (
        "def rotate_master_key(vault) -> None:\n"
        '    """Rotate the master encryption key of the vault."""\n'
        "    vault.key = derive_master_key(vault.seed)\n\n\n"
        "def derive_master_key(seed: bytes) -> bytes:\n"
        "    return seed[::-1]\n\n\n"
        "def handle_request(vault) -> None:\n"
        "    rotate_master_key(vault)\n"
    ),
    ".codesift.toml": "[embedding]\nenabled = false\n",
}

# What would show that something of acme/secret@main was read.
SECRET_MARKS = ("acme/secret", "vault", "keys.py", "rotate_master_key", "seed")

CRAFTED = ["bob", "nobody", "x' OR '1'='1", "%", "_", "devs%", "ana' --"]


@pytest.fixture(autouse=True)
def in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CODESIFT_NO_SERVER", "1")


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def _repo(root: Path, files: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    env = {
        **os.environ,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CEILING_DIRECTORIES": str(root.parent),
    }
    for args in (
        ["init", "-q"],
        ["-c", "user.name=T", "-c", "user.email=t@example.com", "add", "-A"],
        ["-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "-m", "initial"],
    ):
        subprocess.run(["git", *args], cwd=root, check=True, env=env, capture_output=True)
    return root


@pytest.fixture(scope="module")
def shared(postgres_server: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One database for the module (every test only reads it): acme/app@main,
    readable by the group devs (ana is in it), and acme/secret@main, granted to
    no one; plus an edge from the app's handle_request to the secret
    derive_master_key, as a resolution across repositories would make."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    head, sep, query = postgres_server.partition("?")
    dsn = f"{head.rsplit('/', 1)[0]}/{name}{sep}{query}"
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        base = tmp_path_factory.mktemp("access")
        for files, folder, key in (
            (APP, "app", "acme/app@main"),
            (SECRET, "secret", "acme/secret@main"),
        ):
            root = _repo(base / folder, files)
            argv = ["index", str(root), "--quiet", "--db", dsn, "--repo", key]
            assert main(argv) == 0
        with psycopg.connect(dsn, autocommit=True) as conn:
            add_member(conn, "devs", "ana")
            add_principal(conn, "bob")
            assert grant(conn, "devs", "acme/app@main")
            source = conn.execute(
                "SELECT n.id, n.repo_id, n.file_id FROM nodes n JOIN repos r ON r.id = n.repo_id"
                " WHERE r.key = 'acme/app@main' AND n.name = 'handle_request'"
            ).fetchone()
            target = conn.execute(
                "SELECT n.id FROM nodes n JOIN repos r ON r.id = n.repo_id"
                " WHERE r.key = 'acme/secret@main' AND n.name = 'derive_master_key'"
            ).fetchone()
            assert source is not None and target is not None
            conn.execute(
                "INSERT INTO edges (src_id, repo_id, file_id, kind, dst_name, dst_id, line,"
                " resolution) VALUES (%s, %s, %s, 'calls', 'derive_master_key', %s, 7, 'unique')",
                (*source, target[0]),
            )
        yield dsn
    finally:
        with psycopg.connect(postgres_server, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


COMMANDS = [
    ["symbols", "derive_master_key"],
    ["symbols", "rotate_master"],
    ["symbols", "handle_request"],
    ["callers", "derive_master_key"],
    ["callers", "rotate_master_key"],
    ["callees", "handle_request"],
    ["callees", "rotate_master_key"],
    ["graph", "handle_request", "--depth", "3"],
    ["graph", "parse_http_header", "--depth", "4", "--kind", "calls", "--kind", "contains"],
    ["graph", "derive_master_key", "--direction", "callers", "--depth", "2"],
    ["status"],
]


def test_the_role_view_reads_both_repositories_and_the_edge_between_them(
    shared: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without a principal every repository is read: the marks below are there
    to be hidden, and the crafted edge does lead into the secret repository."""
    code, out, _ = run(capsys, "callees", "handle_request", "--db", shared, "--json")
    assert code == 0
    callees = [
        c["node"]["path"] for n in json.loads(out)["nodes"] for c in n["callees"] if c["node"]
    ]
    assert "acme/secret@main/vault/keys.py" in callees
    code, out, _ = run(capsys, "status", "--db", shared, "--json")
    assert [r["repo"] for r in json.loads(out)["repositories"]] == [
        "acme/app@main",
        "acme/secret@main",
    ]


@pytest.mark.parametrize("principal", ["ana", "devs"])
@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_a_granted_principal_sees_only_its_repository(
    shared: str, capsys: pytest.CaptureFixture[str], principal: str, argv: list[str]
) -> None:
    out = ""
    for form in ([], ["--json"]):
        code, out, err = run(capsys, *argv, "--db", shared, "--principal", principal, *form)
        assert code == 0, err
        shown = out.replace(argv[1], "") if len(argv) > 1 else out  # the name asked for
        assert not any(mark in shown for mark in SECRET_MARKS), (argv, out)
    if argv[0] == "status":
        [repo] = json.loads(out)["repositories"]
        # Its .codesift.toml stays out of the shared index: one file.
        assert repo["repo"] == "acme/app@main" and repo["files"] == 1
    if argv == ["callees", "handle_request"]:
        # The app's own callee is there; the edge into the secret repository is not.
        [node] = json.loads(out)["nodes"]
        assert [c["node"]["name"] for c in node["callees"] if c["node"]] == ["parse_http_header"]
        assert all(c["edge"]["name"] != "derive_master_key" for c in node["callees"])
    if argv[:2] == ["graph", "handle_request"]:
        data = json.loads(out)
        assert {n["name"] for n in data["nodes"]} == {"handle_request", "parse_http_header"}
        assert all(e["target_name"] != "derive_master_key" for e in data["edges"])


@pytest.mark.parametrize("principal", CRAFTED)
def test_a_principal_without_a_grant_gets_nothing(
    shared: str, capsys: pytest.CaptureFixture[str], principal: str
) -> None:
    for argv in COMMANDS:
        code, out, err = run(capsys, *argv, "--db", shared, "--principal", principal, "--json")
        assert code == 0, err
        data = json.loads(out)
        if argv[0] == "symbols":
            assert data == {"exact": [], "fuzzy": []}
        elif argv[0] == "status":
            assert data == {"repositories": []}
        elif argv[0] == "graph":
            assert data["nodes"] == data["edges"] == data["roots"] == []
        else:
            assert data["nodes"] == []
    code, out, _ = run(capsys, "status", "--db", shared, "--principal", principal)
    assert code == 0 and out == "no repository of the shared index to show\n"


@pytest.mark.parametrize(
    "name",
    ["%", "_", "%master%", "derive_master_ke_", "derive%", "'; DROP TABLE nodes; --", "*", "\\"],
)
def test_crafted_names_match_nothing_they_do_not_name(
    shared: str, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    for argv in (["symbols", name], ["callers", name], ["graph", name, "--depth", "3"]):
        code, out, err = run(capsys, *argv, "--db", shared, "--principal", "ana", "--json")
        assert code == 0, err
        data = json.loads(out)
        if argv[0] == "symbols":
            assert data["exact"] == []
            assert all(s["path"].startswith("http/") for s in data["fuzzy"])
        else:
            assert data["nodes"] == []
    with psycopg.connect(shared) as conn:
        row = conn.execute("SELECT count(*) FROM nodes").fetchone()
        assert row is not None and row[0] > 0


@pytest.mark.parametrize("principal", ["ana", "bob", "x' OR '1'='1"])
@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_an_ungranted_repo_looks_like_one_that_does_not_exist(
    shared: str, capsys: pytest.CaptureFixture[str], principal: str, argv: list[str]
) -> None:
    answers = []
    for repo in ("acme/secret@main", "acme/nothing@main"):
        for form in ([], ["--json"]):
            args = [*argv, "--db", shared, "--principal", principal, "--repo", repo, *form]
            answers.append(run(capsys, *args))
    secret_text, secret_json, nothing_text, nothing_json = answers
    assert secret_text == nothing_text
    assert secret_json == nothing_json
    assert secret_text[0] == 0
    # Naming the readable repository beside it changes nothing either.
    both = [*argv, "--db", shared, "--principal", principal, "--json"]
    alone = run(capsys, *both, "--repo", "acme/app@main")
    with_secret = run(capsys, *both, "--repo", "acme/app@main", "--repo", "acme/secret@main")
    assert alone == with_secret
