"""The `codesift` command, run for real in a subprocess on temporary git repositories."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import codesift
from codesift.embedding.model import model_dir_path
from codesift.embedding.query_model import QUERY_MODEL_FILE

pytestmark = pytest.mark.usefixtures("git_isolation")

MakeRepo = Callable[..., Path]
SERVER_DIR = Path(codesift.__file__).resolve().parent.parent

CHARGES_PY = '''\
"""Charging customers and retrying declined payments."""

from billing.gateway import PaymentGateway


class Charge:
    def __init__(self, customer_id: str, amount_cents: int) -> None:
        self.customer_id = customer_id
        self.amount_cents = amount_cents
        self.attempts = 0


def create_charge(gateway: PaymentGateway, customer_id: str, amount_cents: int) -> Charge:
    """Create a charge and submit it once."""
    charge = Charge(customer_id, amount_cents)
    gateway.submit(charge.customer_id, charge.amount_cents)
    return charge


def retry_failed_charge(gateway: PaymentGateway, charge: Charge, max_attempts: int = 3) -> bool:
    """Retry a failed charge until the gateway accepts it."""
    while charge.attempts < max_attempts:
        charge.attempts += 1
        if gateway.submit(charge.customer_id, charge.amount_cents):
            return True
    return False
'''

GATEWAY_PY = """\
class PaymentGateway:
    def submit(self, customer_id: str, amount_cents: int) -> bool:
        return amount_cents > 0
"""

TEST_CHARGES_PY = """\
from billing.charges import Charge, retry_failed_charge
from billing.gateway import PaymentGateway


def test_retry_gives_up():
    assert not retry_failed_charge(PaymentGateway(), Charge("cus_1", 0), max_attempts=1)


def test_retry_succeeds():
    assert retry_failed_charge(PaymentGateway(), Charge("cus_2", 100))
"""

SERVER_GO = """\
package server

import "net/http"

type Server struct {
\troutes map[string]http.HandlerFunc
}

func (s *Server) Handle(w http.ResponseWriter, r *http.Request) {
\tif h, ok := s.routes[r.URL.Path]; ok {
\t\th(w, r)
\t\treturn
\t}
\thttp.NotFound(w, r)
}

func ServeOnce(s *Server, w http.ResponseWriter, r *http.Request) {
\ts.Handle(w, r)
}
"""

CONFIG_TS = """\
export class ConfigParser {
  parseConfig(text: string): Record<string, unknown> {
    return JSON.parse(text);
  }
}
"""

LIB_RS = """\
use std::collections::HashMap;

pub struct Cache {
    entries: HashMap<String, u64>,
    order: Vec<String>,
}

impl Cache {
    pub fn insert(&mut self, key: String, value: u64) {
        if self.entries.len() > 100 {
            self.evict();
        }
        self.order.push(key.clone());
        self.entries.insert(key, value);
    }

    fn evict(&mut self) {
        let oldest = self.order.remove(0);
        self.entries.remove(&oldest);
    }
}
"""

README_MD = """\
# Shop

## Billing

Failed card payments are retried by the billing module.
"""

WORKSPACE = {
    "billing/__init__.py": "",
    "billing/charges.py": CHARGES_PY,
    "billing/gateway.py": GATEWAY_PY,
    "tests/test_charges.py": TEST_CHARGES_PY,
    "server/server.go": SERVER_GO,
    "web/config.ts": CONFIG_TS,
    "cache/src/lib.rs": LIB_RS,
    "README.md": README_MD,
}

RESULT_FIELDS = {
    "path": str,
    "start_line": int,
    "end_line": int,
    "kind": str,
    "qualified_name": str,
    "layer": str,
    "score": float,
    "snippet": str,
    "truncated": bool,
    "provenance": list,
}

SUMMARY_LINE = re.compile(
    r"indexed (\d+) file\(s\) in [0-9.]+s \((\d+) unchanged, (\d+) removed, (\d+) skipped\);"
    r" index: (\d+) files, (\d+) nodes, (\d+) edges, (\d+) chunks"
)


def run_cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(SERVER_DIR), env.get("PYTHONPATH", "")) if p
    )
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "CLICOLOR_FORCE"):
        env.pop(name, None)
    return subprocess.run(
        [sys.executable, "-m", "codesift.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def ok(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    assert result.returncode == 0, f"exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    return result


def run_json(cwd: Path, *args: str) -> Any:
    """Run a --json command: stdout must be exactly one JSON document."""
    result = ok(run_cli(cwd, *args, "--json"))
    return json.loads(result.stdout)


def one_line(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture
def repo(make_repo: MakeRepo) -> Path:
    return make_repo(WORKSPACE)


@pytest.fixture
def indexed(repo: Path) -> Path:
    ok(run_cli(repo, "index", "--quiet"))
    return repo


# --- search ---------------------------------------------------------------------------------


def test_search_builds_the_index_on_first_use(repo: Path) -> None:
    assert not (repo / ".codesift").exists()
    result = ok(run_cli(repo, "search", "retry_failed_charge"))
    assert (repo / ".codesift" / "index.db").is_file()
    assert (repo / ".codesift" / ".gitignore").is_file()
    assert "billing/charges.py:20-26" in result.stdout
    assert "billing.charges.retry_failed_charge" in result.stdout
    assert "def retry_failed_charge(" in result.stdout
    # The first run reports what it indexed, on stderr.
    assert "indexed 8 file(s)" in one_line(result.stderr)
    assert "indexed" not in result.stdout
    # The index never shows up as a change in the repository.
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    assert ".codesift" not in status.stdout


def test_a_first_search_without_vectors_does_not_wait_for_them(repo: Path, tmp_path: Path) -> None:
    """`search --no-embed` on a folder without an index answers once the rows are
    written, as `index --no-embed` would leave them: no vectors. The next search that
    uses vectors computes the static ones first."""
    cache = tmp_path / "model-cache"
    (repo / ".codesift.toml").write_text(f'[embedding]\nmodel = "static"\ncache_dir = "{cache}"\n')
    result = ok(run_cli(repo, "search", "retry_failed_charge", "--no-embed"))
    assert "billing/charges.py:20-26" in result.stdout
    assert run_json(repo, "status")["vectors"]["embedded"] == 0
    ok(run_cli(repo, "search", "retry a failed charge"))
    vectors = run_json(repo, "status")["vectors"]
    assert vectors["embedded"] == vectors["embeddable"] > 0


def test_search_from_a_subfolder_uses_the_repository_root(repo: Path) -> None:
    result = ok(run_cli(repo / "billing", "search", "Cache::evict"))
    assert (repo / ".codesift" / "index.db").is_file()
    assert not (repo / "billing" / ".codesift").exists()
    assert "cache/src/lib.rs:17-20" in result.stdout


# Every stream a search with vectors runs (its report lists each one).
SEARCH_STREAMS = {"lexical", "lexical_doc", "symbol", "exact", "path", "vector", "vector_doc"}


def test_search_json_on_a_fresh_folder_is_pure_json_with_the_documented_fields(
    repo: Path,
) -> None:
    result = ok(run_cli(repo, "search", "parseConfig", "--json"))
    data = json.loads(result.stdout)  # nothing but JSON, even while indexing
    assert data["query"] == "parseConfig"
    assert isinstance(data["tokens"], int)
    assert data["truncated_by_budget"] is False
    assert {s["stream"] for s in data["streams"]} == SEARCH_STREAMS
    assert data["results"]
    for item in data["results"]:
        for name, kind in RESULT_FIELDS.items():
            assert isinstance(item[name], kind), (name, item[name])
        assert item["start_line"] <= item["snippet_start_line"] <= item["end_line"]
        assert item["provenance"]
        for hit in item["provenance"]:
            assert set(hit) == {"stream", "rank", "score"}
            assert hit["stream"] in SEARCH_STREAMS
            assert isinstance(hit["rank"], int) and hit["rank"] >= 1
            assert isinstance(hit["score"], float)
    first = data["results"][0]
    assert (first["path"], first["qualified_name"], first["kind"], first["layer"]) == (
        "web/config.ts",
        "ConfigParser.parseConfig",
        "method",
        "code",
    )
    assert (first["start_line"], first["end_line"]) == (2, 4)
    assert "parseConfig(text: string)" in first["snippet"]


def test_search_graph_json_and_human_output(indexed: Path) -> None:
    data = run_json(indexed, "search", "retry_failed_charge", "--graph", "-k", "3")
    first = data["results"][0]
    assert first["qualified_name"] == "billing.charges.retry_failed_charge"
    edges = {
        (e["relation"], e["kind"], e["direction"], e["node"]["qualified_name"])
        for e in first["graph"]
    }
    assert ("caller", "calls", "in", "test_charges.test_retry_gives_up") in edges
    assert ("parent", "contains", "in", "billing.charges") in edges
    for edge in first["graph"]:
        assert set(edge) == {"relation", "kind", "direction", "line", "node"}
        assert edge["kind"] in {"calls", "contains", "inherits", "imports"}
    shown = {e["node"]["id"] for r in data["results"] for e in r["graph"]}
    assert len(shown) <= 20
    assert "graph" in data["stages"] and data["rerank"] == "off"
    plain = run_json(indexed, "search", "retry_failed_charge", "-k", "3")
    assert all(r["graph"] == [] for r in plain["results"])

    human = ok(run_cli(indexed, "search", "retry_failed_charge", "--graph", "-k", "1")).stdout
    assert "← called by (calls, line" in human
    assert "test_charges.test_retry_gives_up" in human
    assert "↑ contained in (contains" in human


def test_search_options_top_k_lang_and_path(indexed: Path) -> None:
    query = "charge server cache config"
    everything = run_json(indexed, "search", query, "--top-k", "50")["results"]
    assert len({r["language"] for r in everything}) >= 3

    top = run_json(indexed, "search", query, "--top-k", "2")["results"]
    assert len(top) == 2
    assert [r["chunk_id"] for r in top] == [r["chunk_id"] for r in everything[:2]]

    go = run_json(indexed, "search", query, "--top-k", "50", "--lang", "go")["results"]
    assert go
    assert {r["language"] for r in go} == {"go"}

    two_languages = ("--lang", "go", "--lang", "rust")
    several = run_json(indexed, "search", query, "--top-k", "50", *two_languages)["results"]
    assert {r["language"] for r in several} == {"go", "rust"}

    billing = run_json(indexed, "search", query, "--top-k", "50", "--path", "billing/*")
    assert billing["results"]
    assert all(r["path"].startswith("billing/") for r in billing["results"])
    expected = {r["path"] for r in everything if r["path"].startswith("billing/")}
    assert {r["path"] for r in billing["results"]} == expected


def test_search_layer_and_max_tokens(indexed: Path) -> None:
    ast = run_json(indexed, "search", "charge", "--layer", "ast")["results"]
    assert ast
    assert {r["layer"] for r in ast} == {"ast"}

    budget = run_json(indexed, "search", "charge retry gateway", "--max-tokens", "60")
    assert budget["tokens"] <= 60
    assert budget["truncated_by_budget"] is True


def test_search_with_fts_operators_exits_0(indexed: Path) -> None:
    query = 'NEAR(retry charge) AND OR NOT "unbalanced col:term * ^x a + b -x ('
    result = ok(run_cli(indexed, "search", query))
    assert "Traceback" not in result.stderr
    data = run_json(indexed, "search", query)
    assert all(s["error"] is None for s in data["streams"])


def test_search_with_an_empty_query_is_a_clean_error(indexed: Path) -> None:
    result = run_cli(indexed, "search", "   ")
    assert result.returncode == 2
    assert "empty" in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_search_in_an_empty_folder(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = ok(run_cli(empty, "search", "anything"))
    assert "no results" in result.stdout
    data = run_json(empty, "search", "anything")
    assert data["results"] == []


# --- index and status -----------------------------------------------------------------------


def test_index_prints_a_one_line_summary_with_counts(repo: Path) -> None:
    first = ok(run_cli(repo, "index"))
    lines = first.stdout.strip().split("\n")
    assert len(lines) == 1
    match = SUMMARY_LINE.fullmatch(lines[0])
    assert match, lines[0]
    indexed, unchanged, removed, _, files, nodes, edges, chunks = map(int, match.groups())
    assert (indexed, unchanged, removed, files) == (8, 0, 0, 8)
    assert nodes > 0 and edges > 0 and chunks > nodes

    status = run_json(repo, "status")
    assert (status["files"], status["nodes"], status["edges"], status["chunks"]) == (
        files,
        nodes,
        edges,
        chunks,
    )

    second = ok(run_cli(repo, "index"))
    again = SUMMARY_LINE.fullmatch(second.stdout.strip())
    assert again, second.stdout
    assert tuple(map(int, again.groups()))[:2] == (0, 8)


def test_index_json_summary(repo: Path) -> None:
    data = run_json(repo, "index")
    assert data["indexed"] == 8
    assert data["files"] == 8
    assert Path(data["root"]) == repo.resolve()
    assert Path(data["database"]) == (repo / ".codesift" / "index.db").resolve()


def test_status_json_counts_by_language(repo: Path) -> None:
    before = run_json(repo, "status")
    assert before["exists"] is False
    assert not (repo / ".codesift" / "index.db").exists()  # status never creates an index

    ok(run_cli(repo, "index", "--quiet"))
    status = run_json(repo, "status")
    assert status["exists"] is True
    assert status["languages"] == {
        "python": 4,
        "go": 1,
        "typescript": 1,
        "rust": 1,
        "markdown": 1,
    }
    assert status["files"] == 8
    assert status["database_bytes"] > 0
    assert isinstance(status["last_update"], float)


def test_status_text_shows_the_first_tiers_vectors(repo: Path, tmp_path: Path) -> None:
    """Vectors of the static tier only, MiniLM configured: the text status says
    how many chunks the vector stream can already use, and whose vectors they are."""
    cache = tmp_path / "model-cache"
    config = repo / ".codesift.toml"
    config.write_text(f'[embedding]\nmodel = "static"\ncache_dir = "{cache}"\n')
    ok(run_cli(repo, "index", "--quiet"))
    total = run_json(repo, "status")["vectors"]["embedded"]
    assert total > 0
    assert "searchable" not in ok(run_cli(repo, "status")).stdout
    config.write_text(f'[embedding]\nmodel = "minilm"\ncache_dir = "{cache}"\n')
    assert run_json(repo, "status")["vectors"]["usable"] == total
    out = ok(run_cli(repo, "status")).stdout
    assert f"searchable  {total} chunks (100%) with a vector: static" in out


def test_status_says_how_queries_are_embedded(repo: Path, tmp_path: Path) -> None:
    cache = tmp_path / "model-cache"
    config = repo / ".codesift.toml"
    config.write_text(f'[embedding]\nmodel = "static"\ncache_dir = "{cache}"\n')
    ok(run_cli(repo, "index", "--quiet", "--no-embed"))
    assert run_json(repo, "status")["vectors"]["queries"] == "static"
    assert "embedded by the static model" in ok(run_cli(repo, "status")).stdout
    config.write_text(f'[embedding]\nmodel = "minilm"\ncache_dir = "{cache}"\n')
    assert run_json(repo, "status")["vectors"]["queries"] == "pending"
    assert "built on the first search" in ok(run_cli(repo, "status")).stdout
    built = model_dir_path(cache, 256) / QUERY_MODEL_FILE
    built.parent.mkdir(parents=True)
    # A file the model folder's manifest does not record (a leftover, another
    # build's): a search would build the query model anew, so it is not in use.
    built.write_bytes(b"")
    assert run_json(repo, "status")["vectors"]["queries"] == "pending"
    # A search builds it (and records it); from then on queries use it.
    ok(run_cli(repo, "search", "retry a failed charge"))
    assert built.stat().st_size > 0
    assert run_json(repo, "status")["vectors"]["queries"] == "int8"
    assert run_json(repo, "status")["vectors"]["queries_error"] is None
    # Altered on disk after it was recorded: not the model a search would load.
    built.write_bytes(b"not a model")
    assert run_json(repo, "status")["vectors"]["queries"] == "pending"
    # A build that failed an hour ago: queries use the batch model, and say why.
    built.unlink()
    failed = built.with_name(built.name + ".failed")
    failed.write_text(json.dumps({"error": "MemoryError: out of memory", "at": time.time() - 3600}))
    vectors = run_json(repo, "status")["vectors"]
    assert vectors["queries"] == "batch"
    assert "MemoryError: out of memory" in vectors["queries_error"]
    out = ok(run_cli(repo, "status")).stdout
    assert "queries     embedded by the batch model: the query model failed: MemoryError" in out
    # After a day it is built again on the next search.
    failed.write_text(json.dumps({"error": "MemoryError", "at": time.time() - 2 * 86400}))
    assert run_json(repo, "status")["vectors"]["queries"] == "pending"
    config.write_text(
        f'[embedding]\nmodel = "minilm"\ncache_dir = "{cache}"\nquantized_queries = false\n'
    )
    assert run_json(repo, "status")["vectors"]["queries"] == "batch"
    assert "queries     embedded by the batch model" in ok(run_cli(repo, "status")).stdout
    config.write_text("[embedding]\nenabled = false\n")
    assert run_json(repo, "status")["vectors"]["queries"] == "off"


# --- symbols, callers, callees --------------------------------------------------------------


def test_symbols_exact_then_fuzzy(indexed: Path) -> None:
    exact = run_json(indexed, "symbols", "evict")
    assert [n["qualified_name"] for n in exact["exact"]] == ["Cache::evict"]
    assert exact["exact"][0]["path"] == "cache/src/lib.rs"
    assert exact["exact"][0]["start_line"] == 17
    assert all(n["id"] != exact["exact"][0]["id"] for n in exact["fuzzy"])

    fuzzy = run_json(indexed, "symbols", "evic")
    assert fuzzy["exact"] == []
    assert fuzzy["fuzzy"][0]["qualified_name"] == "Cache::evict"

    qualified = run_json(indexed, "symbols", "ConfigParser.parseConfig")
    assert [n["qualified_name"] for n in qualified["exact"]] == ["ConfigParser.parseConfig"]


def test_symbols_human_output_lists_exact_before_similar(indexed: Path) -> None:
    result = ok(run_cli(indexed, "symbols", "parseConfig"))
    lines = result.stdout.strip().split("\n")
    assert "web/config.ts:2-4" in lines[0]
    assert "ConfigParser.parseConfig" in lines[0]
    assert "similar names:" in lines
    assert any("class ConfigParser" in line for line in lines[lines.index("similar names:") :])


def test_symbols_unknown_name(indexed: Path) -> None:
    data = run_json(indexed, "symbols", "zzqqxx")
    assert data == {"exact": [], "fuzzy": []}
    result = ok(run_cli(indexed, "symbols", "zzqqxx"))
    assert "no definitions match" in result.stdout


def related(data: dict[str, Any], direction: str) -> list[str | None]:
    [entry] = data["nodes"]
    return [item["node"]["qualified_name"] if item["node"] else None for item in entry[direction]]


def test_callers(indexed: Path) -> None:
    data = run_json(indexed, "callers", "retry_failed_charge")
    assert data["name"] == "retry_failed_charge"
    assert data["nodes"][0]["node"]["qualified_name"] == "billing.charges.retry_failed_charge"
    assert sorted(related(data, "callers")) == [  # type: ignore[type-var]
        "test_charges.test_retry_gives_up",
        "test_charges.test_retry_succeeds",
    ]
    for item in data["nodes"][0]["callers"]:
        assert item["edge"]["kind"] == "calls"
        assert item["edge"]["name"] == "retry_failed_charge"

    assert related(run_json(indexed, "callers", "Cache::evict"), "callers") == ["Cache::insert"]
    go = run_json(indexed, "callers", "Handle")
    assert related(go, "callers") == ["server.ServeOnce"]


def test_callees(indexed: Path) -> None:
    data = run_json(indexed, "callees", "create_charge")
    callees = related(data, "callees")
    assert "billing.charges.Charge" in callees
    assert "billing.gateway.PaymentGateway.submit" in callees
    lines = {item["edge"]["name"]: item["edge"]["line"] for item in data["nodes"][0]["callees"]}
    assert lines["submit"] == 16

    rust = related(run_json(indexed, "callees", "Cache::insert"), "callees")
    assert "Cache::evict" in rust


def test_callees_do_not_confuse_a_fields_method_with_the_callers_own(indexed: Path) -> None:
    rust = related(run_json(indexed, "callees", "Cache::insert"), "callees")
    assert "Cache::insert" not in rust


def test_callers_human_output_and_unknown_name(indexed: Path) -> None:
    result = ok(run_cli(indexed, "callers", "retry_failed_charge"))
    assert "billing/charges.py:20-26" in result.stdout
    assert "tests/test_charges.py" in result.stdout
    assert "no definition named" in ok(run_cli(indexed, "callers", "zzqqxx")).stdout
    assert run_json(indexed, "callees", "zzqqxx") == {
        "name": "zzqqxx",
        "nodes": [],
        "truncated": False,
        "omitted": 0,
        "max_nodes": 200,
        "calls_pending": 0,
    }


def test_a_cut_walk_says_so_and_counts_what_it_left_out(indexed: Path) -> None:
    # retry_failed_charge has two callers: --max-nodes 2 shows it and one of them.
    data = run_json(indexed, "callers", "retry_failed_charge", "--max-nodes", "2")
    assert (data["truncated"], data["omitted"], data["max_nodes"]) == (True, 1, 2)
    assert len(data["nodes"][0]["callers"]) == 1
    text = ok(run_cli(indexed, "callers", "retry_failed_charge", "--max-nodes", "2")).stdout
    assert "truncated: stopped at 2 definitions (--max-nodes); 1 more not shown" in text
    graph = run_json(
        indexed, "graph", "retry_failed_charge", "--direction", "callers", "--max-nodes", "2"
    )
    assert (graph["truncated"], graph["omitted"]) == (True, 1)
    assert run_json(indexed, "callers", "retry_failed_charge")["truncated"] is False


# --- a damaged index ------------------------------------------------------------------------


def test_corrupt_index_is_refused_then_rebuilt(indexed: Path) -> None:
    db = indexed / ".codesift" / "index.db"
    for side in (db.with_name("index.db-wal"), db.with_name("index.db-shm")):
        side.unlink(missing_ok=True)
    garbage = b"this is not a database\x00" * 64
    db.write_bytes(garbage)

    for args in (("search", "retry_failed_charge"), ("search", "charge", "--json"), ("index",)):
        result = run_cli(indexed, *args)
        assert result.returncode == 2, args
        assert "--rebuild" in one_line(result.stderr)
        assert "Traceback" not in result.stderr
        assert result.stdout == ""
        assert db.read_bytes() == garbage

    rebuilt = ok(run_cli(indexed, "index", "--rebuild"))
    assert SUMMARY_LINE.fullmatch(rebuilt.stdout.strip())
    assert "moved the old index aside" in one_line(rebuilt.stderr)
    [kept] = list(db.parent.glob("index.db.bad-*"))
    assert kept.read_bytes() == garbage
    assert db.read_bytes() != garbage

    data = run_json(indexed, "search", "retry_failed_charge")
    assert data["results"][0]["qualified_name"] == "billing.charges.retry_failed_charge"


# --- workspace resolution ----------------------------------------------------------------------


def test_index_in_a_subfolder_updates_the_workspace_index(indexed: Path) -> None:
    (indexed / "billing" / "refunds.py").write_text("def refund_charge(charge):\n    return 0\n")
    data = run_json(indexed / "billing", "index", "--json", "--no-embed")
    assert data["root"] == str(indexed.resolve())
    assert data["indexed"] == 1  # the new file, into the repository's index
    assert not (indexed / "billing" / ".codesift").exists()  # no second, shadowing index
    found = run_json(indexed / "billing", "symbols", "refund_charge", "--json", "--no-update")
    assert [n["path"] for n in found["exact"]] == ["billing/refunds.py"]


def test_index_in_a_subfolder_of_a_repository_indexes_the_work_tree(repo: Path) -> None:
    """One rule for every command: without PATH or --root, `index` works on the
    nearest indexed folder, else the git work tree, else the current folder, as
    `search` does (it indexed the subfolder alone)."""
    data = run_json(repo / "billing", "index", "--json", "--no-embed")
    assert data["root"] == str(repo.resolve())
    assert (repo / ".codesift" / "index.db").is_file()
    assert not (repo / "billing" / ".codesift").exists()
    found = ok(run_cli(repo / "billing", "search", "Cache::evict", "--no-update"))
    assert "cache/src/lib.rs:17-20" in found.stdout  # the same index as search's


def test_index_path_or_root_names_the_folder_to_index(indexed: Path) -> None:
    data = run_json(indexed, "index", "--root", str(indexed / "cache"), "--json", "--no-embed")
    assert data["root"] == str((indexed / "cache").resolve())
    assert (indexed / "cache" / ".codesift" / "index.db").is_file()


def test_root_resolution_honours_index_db_path(repo: Path) -> None:
    (repo / ".codesift.toml").write_text('[index]\ndb_path = "var/search.db"\n')
    ok(run_cli(repo, "index", "--quiet", "--no-embed"))
    assert (repo / "var" / "search.db").is_file()
    # From a subfolder (here outside git's view: the walk finds the index, not git).
    status = run_json(repo / "cache" / "src", "status", "--json")
    assert status["root"] == str(repo.resolve())
    assert status["database"] == str((repo / "var" / "search.db").resolve())
    result = ok(run_cli(repo / "cache", "search", "Cache::evict", "--no-update"))
    assert "cache/src/lib.rs:17-20" in result.stdout
    assert not (repo / "cache" / ".codesift").exists()


def test_status_and_symbols_without_an_index_do_not_create_one(repo: Path) -> None:
    status = run_json(repo, "status", "--json")
    assert status["exists"] is False
    result = run_cli(repo, "symbols", "evict", "--no-update")
    assert result.returncode == 2
    assert "no index at" in result.stderr and "codesift index" in result.stderr
    assert not (repo / ".codesift" / "index.db").exists()


def test_graph_command_walks_edges_of_the_kinds_asked_for(indexed: Path) -> None:
    data = run_json(indexed, "graph", "submit", "--direction", "callers", "--depth", "2", "--json")
    first = data["nodes"][0]["qualified_name"]
    assert first == "billing.gateway.PaymentGateway.submit"
    names = {n["qualified_name"] for n in data["nodes"]}
    assert "billing.charges.create_charge" in names  # calls submit
    assert all(e["kind"] == "calls" for e in data["edges"])
    contains = run_json(indexed, "graph", "PaymentGateway.submit", "--kind", "contains", "--json")
    assert {e["kind"] for e in contains["edges"]} == {"contains"}
    human = ok(run_cli(indexed, "graph", "submit", "--no-update"))
    assert "calls" in human.stdout
    bad = run_cli(indexed, "graph", "submit", "--depth", "0", "--no-update")
    assert bad.returncode == 2 and "depth must be between 1 and 10" in bad.stderr


# --- settings -------------------------------------------------------------------------------


def test_a_bad_settings_file_is_one_line_and_exit_2(repo: Path) -> None:
    config = repo / ".codesift.toml"
    config.write_text("[search\ntop_k = 3\n")  # not TOML
    result = run_cli(repo, "search", "evict", "--no-update")
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert ".codesift.toml" in result.stderr
    # invalid values: every one named by its dotted key, on the same one line
    config.write_text("[search]\ntop_k = 0\nbogus = 1\n[index]\nexclude = 'gen'\n")
    result = run_cli(repo, "search", "evict", "--no-update")
    assert result.returncode == 2, result.stderr
    line = one_line(result.stderr)
    assert len(result.stderr.strip().splitlines()) == 1
    assert "search.top_k must be between 1 and 200, got 0" in line
    assert "unknown setting search.bogus" in line
    assert "index.exclude must be a list of strings" in line
    assert not (repo / ".codesift").exists()


# --- common options in either place -----------------------------------------------------


@pytest.mark.parametrize("command", [("search", "retry"), ("symbols", "submit")])
def test_verbose_after_the_command_is_accepted(indexed: Path, command: tuple[str, ...]) -> None:
    before = run_cli(indexed, "-vv", *command)
    after = run_cli(indexed, *command, "-vv")
    for result in (before, after):
        ok(result)
        assert "DEBUG" in result.stderr, result.stderr
    assert after.stdout.splitlines()[:-1] == before.stdout.splitlines()[:-1]  # not the time
    info = ok(run_cli(indexed, *command, "--verbose"))
    assert "DEBUG" not in info.stderr
    # Counted in both places together: -v before and -v after is -vv.
    both = ok(run_cli(indexed, "-v", *command, "-v"))
    assert "DEBUG" in both.stderr, both.stderr


def test_the_summary_names_each_folder_left_out_and_the_setting(make_repo: MakeRepo) -> None:
    """A tracked `deps/` left out by its name is named in the summary, with the
    setting that brings it back, not folded into "N skipped"."""
    root = make_repo(
        {
            "app.py": "def main():\n    return 1\n",
            "deps/lib/a.py": "def a():\n    return 1\n",
            "deps/lib/b.py": "def b():\n    return 2\n",
            "build/gen.py": "X = 1\n",
            "pyproject.toml": "[project]\nname = 'x'\n",
        }
    )
    result = ok(run_cli(root, "index", "--no-embed"))
    text = one_line(result.stdout + result.stderr)
    assert "left out by folder name: build (index.output_dirs), deps (index.excluded_dirs)" in (
        text
    ), text
    first = ok(
        run_cli(make_repo({"deps/x.py": "X = 1\n", "a.py": "A = 1\n"}, name="r2"), "search", "X")
    )
    assert "deps (index.excluded_dirs)" in one_line(first.stderr), first.stderr
