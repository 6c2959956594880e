"""Search end to end: a real git workspace in five languages, indexed with the
Indexer into real SQLite, queried through Searcher."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import apsw
import pytest

from codesift.errors import QueryError
from codesift.indexer import IndexSummary
from codesift.retrieval import Searcher, SearchRequest, SearchResponse, SearchResult
from codesift.retrieval.page import RESULT_OVERHEAD_TOKENS
from codesift.retrieval.query import analyze_query
from codesift.retrieval.snippets import estimate_tokens
from codesift.retrieval.streams import (
    StreamFilters,
    exact_stream,
    lexical_doc_stream,
    lexical_stream,
    path_stream,
    symbol_stream,
)
from codesift.store.sqlite.search import SqliteSearchStore

pytestmark = pytest.mark.usefixtures("git_isolation")

MakeRepo = Callable[..., Path]
IndexWorkspace = Callable[..., tuple[apsw.Connection, IndexSummary]]

CHARGES_PY = '''\
"""Charging customers and retrying declined payments."""

from __future__ import annotations

import time
from dataclasses import dataclass

from billing.gateway import PaymentGateway


@dataclass
class Charge:
    customer_id: str
    amount_cents: int
    attempts: int = 0


def create_charge(gateway: PaymentGateway, customer_id: str, amount_cents: int) -> Charge:
    """Create a charge and submit it to the payment gateway once."""
    charge = Charge(customer_id, amount_cents)
    gateway.submit(charge.customer_id, charge.amount_cents)
    return charge


def retry_failed_charge(gateway: PaymentGateway, charge: Charge, max_attempts: int = 3) -> bool:
    """Retry a failed charge with exponential backoff until the gateway accepts it."""
    delay = 1.0
    while charge.attempts < max_attempts:
        charge.attempts += 1
        if gateway.submit(charge.customer_id, charge.amount_cents):
            return True
        time.sleep(delay)
        delay *= 2
    return False
'''

GATEWAY_PY = '''\
class PaymentGateway:
    """A thin client for the card processor."""

    def __init__(self, api_key: str) -> None:
        self.api_key = api_key

    def submit(self, customer_id: str, amount_cents: int) -> bool:
        return amount_cents > 0
'''

TEST_CHARGES_PY = """\
from billing.charges import Charge, retry_failed_charge
from billing.gateway import PaymentGateway


def test_retry_failed_charge_gives_up():
    gateway = PaymentGateway("key")
    charge = Charge("cus_1", 0)
    assert retry_failed_charge(gateway, charge, max_attempts=1) is False


def test_retry_failed_charge_succeeds():
    assert retry_failed_charge(PaymentGateway("key"), Charge("cus_2", 100))
"""

SERVER_GO = """\
package server

import (
\t"fmt"
\t"net/http"
)

// Server routes HTTP requests to registered handlers.
type Server struct {
\troutes map[string]http.HandlerFunc
}

// NewServer returns a Server with no routes.
func NewServer() *Server {
\treturn &Server{routes: map[string]http.HandlerFunc{}}
}

// Handle dispatches a request to the handler registered for its path.
func (s *Server) Handle(w http.ResponseWriter, r *http.Request) {
\th, ok := s.routes[r.URL.Path]
\tif !ok {
\t\thttp.NotFound(w, r)
\t\treturn
\t}
\th(w, r)
}

// Register adds a handler for a path.
func (s *Server) Register(path string, h http.HandlerFunc) {
\ts.routes[path] = h
\tfmt.Println("registered", path)
}
"""

SERVER_TEST_GO = """\
package server

import (
\t"net/http/httptest"
\t"testing"
)

func TestUnknownPathIsNotFound(t *testing.T) {
\ts := NewServer()
\trec := httptest.NewRecorder()
\treq := httptest.NewRequest("GET", "/missing", nil)
\ts.Handle(rec, req)
\tif rec.Code != 404 {
\t\tt.Fatalf("got %d", rec.Code)
\t}
}
"""

CONFIG_TS = """\
export interface AppConfig {
  port: number;
  host: string;
}

/** Parses configuration files into an AppConfig. */
export class ConfigParser {
  constructor(private readonly defaults: AppConfig) {}

  /** Parse a JSON config document, filling in defaults. */
  parseConfig(text: string): AppConfig {
    const raw = JSON.parse(text) as Partial<AppConfig>;
    return { ...this.defaults, ...raw };
  }
}
"""

MAIN_TS = """\
import { ConfigParser } from "./config";

const parser = new ConfigParser({ port: 8080, host: "localhost" });
const config = parser.parseConfig('{"port": 9090}');
console.log(config.port);

export function startApp(text: string): number {
  return parser.parseConfig(text).port;
}
"""

LIB_RS = """\
use std::collections::HashMap;

/// A bounded cache that evicts the oldest entry when full.
pub struct Cache {
    entries: HashMap<String, u64>,
    order: Vec<String>,
    capacity: usize,
}

impl Cache {
    pub fn new(capacity: usize) -> Self {
        Cache { entries: HashMap::new(), order: Vec::new(), capacity }
    }

    pub fn insert(&mut self, key: String, value: u64) {
        if self.entries.len() >= self.capacity {
            self.evict();
        }
        self.order.push(key.clone());
        self.entries.insert(key, value);
    }

    /// Remove the oldest entry.
    fn evict(&mut self) {
        if let Some(oldest) = self.order.first().cloned() {
            self.order.remove(0);
            self.entries.remove(&oldest);
        }
    }
}
"""

CACHE_TEST_RS = """\
use cache::Cache;

#[test]
fn insert_past_capacity_evicts() {
    let mut cache = Cache::new(1);
    cache.insert("a".to_string(), 1);
    cache.insert("b".to_string(), 2);
}
"""

README_MD = """\
# Shop services

A small collection of services for the shop.

## Deployment

Deploy the services with the blue-green rollout script. Each rollout drains
traffic from the old pool before switching the load balancer.

## Billing

Failed card payments are retried with exponential backoff by the billing module.
"""

SETTINGS_PY = '''\
"""Retry settings."""
import os


def backoff_delay(attempt):
    return 2 ** attempt


# Switches read from the environment at import time.
if os.environ.get("DEBUG"):
    print("debug mode")
    print("verbose logging")
    print("extra checks")
'''

WORKSPACE = {
    "billing/__init__.py": "",
    "billing/charges.py": CHARGES_PY,
    "billing/gateway.py": GATEWAY_PY,
    "billing/settings.py": SETTINGS_PY,
    "tests/test_charges.py": TEST_CHARGES_PY,
    "server/server.go": SERVER_GO,
    "server/server_test.go": SERVER_TEST_GO,
    "web/src/config.ts": CONFIG_TS,
    "web/src/main.ts": MAIN_TS,
    "cache/src/lib.rs": LIB_RS,
    "cache/tests/cache_test.rs": CACHE_TEST_RS,
    "README.md": README_MD,
}

STREAMS = {
    "lexical": lexical_stream,
    "lexical_doc": lexical_doc_stream,
    "symbol": symbol_stream,
    "exact": exact_stream,
    "path": path_stream,
}


@pytest.fixture
def workspace(make_repo: MakeRepo, index_workspace: IndexWorkspace) -> tuple[Path, apsw.Connection]:
    root = make_repo(WORKSPACE)
    conn, summary = index_workspace(root)
    assert summary.indexed == len(WORKSPACE)
    assert summary.skipped == []
    return root, conn


@pytest.fixture
def searcher(workspace: tuple[Path, apsw.Connection]) -> Searcher:
    return Searcher(workspace[1])


def search(searcher: Searcher, query: str, **options: object) -> SearchResponse:
    response = searcher.search(SearchRequest(query, **options))  # type: ignore[arg-type]
    for report in response.streams:
        assert report.error is None, f"stream {report.stream} failed: {report.error}"
    return response


def names(response: SearchResponse) -> list[str]:
    return [r.qualified_name for r in response.results]


def position(response: SearchResponse, qualified_name: str, path: str) -> int:
    """1-based position of the code result for a definition (0 when absent)."""
    for i, result in enumerate(response.results, start=1):
        if result.qualified_name == qualified_name and result.path == path:
            return i
    return 0


def source_line(root: Path, result: SearchResult, line: int) -> str:
    return (root / result.path).read_text(encoding="utf-8").split("\n")[line - 1]


# --- symbol queries: the definition first --------------------------------------------------


@pytest.mark.parametrize(
    ("query", "qualified_name", "path", "callers"),
    [
        (
            "parseConfig",
            "ConfigParser.parseConfig",
            "web/src/config.ts",
            {"web/src/main.ts"},
        ),
        (
            "ParseConfig",
            "ConfigParser.parseConfig",
            "web/src/config.ts",
            {"web/src/main.ts"},
        ),
        (
            "Cache::evict",
            "Cache::evict",
            "cache/src/lib.rs",
            {"cache/tests/cache_test.rs"},
        ),
        (
            "retry_failed_charge",
            "billing.charges.retry_failed_charge",
            "billing/charges.py",
            {"tests/test_charges.py"},
        ),
        (
            "Server.Handle",
            "server.Server.Handle",
            "server/server.go",
            {"server/server_test.go"},
        ),
    ],
)
def test_symbol_query_ranks_the_defining_chunk_first(
    searcher: Searcher, query: str, qualified_name: str, path: str, callers: set[str]
) -> None:
    response = search(searcher, query)
    first = response.results[0]
    assert (first.path, first.qualified_name, first.layer) == (path, qualified_name, "code")
    assert first.kind == "method" or first.kind == "function"
    assert {"lexical", "symbol"} <= {hit.stream for hit in first.provenance}
    # The files that only call it are found too, but below the definition.
    caller_scores = [r.score for r in response.results if r.path in callers]
    assert caller_scores, f"no caller of {query} was found"
    assert all(score < first.score for score in caller_scores)


def test_symbol_query_for_a_type_finds_the_type(searcher: Searcher) -> None:
    response = search(searcher, "PaymentGateway")
    first = response.results[0]
    assert (first.path, first.kind, first.qualified_name) == (
        "billing/gateway.py",
        "class",
        "billing.gateway.PaymentGateway",
    )


def test_signature_query_finds_the_go_method(searcher: Searcher) -> None:
    response = search(searcher, "func (s *Server) Handle")
    top3 = [(r.path, r.qualified_name) for r in response.results[:3]]
    assert ("server/server.go", "server.Server.Handle") in top3


def test_signature_query_on_the_ast_layer(searcher: Searcher) -> None:
    response = search(
        searcher, "func (s *Server) Handle(w http.ResponseWriter", layers=("ast",), top_k=3
    )
    assert response.results[0].qualified_name == "server.Server.Handle"
    assert response.results[0].snippet == (
        "func (s *Server) Handle(w http.ResponseWriter, r *http.Request)"
    )


# --- prose queries ---------------------------------------------------------------------------


def test_prose_query_finds_the_billing_function(searcher: Searcher) -> None:
    response = search(searcher, "how does billing retry a failed charge")
    rank = position(response, "billing.charges.retry_failed_charge", "billing/charges.py")
    assert 1 <= rank <= 5


def test_prose_query_finds_the_billing_function_in_the_top_3(searcher: Searcher) -> None:
    response = search(searcher, "how does billing retry a failed charge")
    rank = position(response, "billing.charges.retry_failed_charge", "billing/charges.py")
    assert 1 <= rank <= 3


def test_prose_query_finds_the_readme_section(searcher: Searcher) -> None:
    response = search(searcher, "how do we deploy with a blue-green rollout")
    first = response.results[0]
    assert (first.path, first.layer, first.kind) == ("README.md", "doc", "section")
    assert first.qualified_name == "Shop services > Deployment"
    assert (first.start_line, first.end_line) == (5, 8)
    assert "blue-green rollout" in first.snippet
    assert [h.stream for h in first.provenance] == ["lexical_doc"]


def test_doc_layer_only_returns_doc_sections(searcher: Searcher) -> None:
    response = search(searcher, "billing retry backoff", layers=("doc",))
    assert response.results
    assert {r.layer for r in response.results} == {"doc"}
    assert response.results[0].qualified_name == "Shop services > Billing"


# --- filters ----------------------------------------------------------------------------------


def test_language_filter(searcher: Searcher) -> None:
    query = "server cache config charge handle"
    unfiltered = search(searcher, query, top_k=50)
    assert len({r.language for r in unfiltered.results}) > 2  # the filter has work to do
    response = search(searcher, query, top_k=50, languages=("go",))
    assert response.results
    assert {r.language for r in response.results} == {"go"}
    assert {r.path for r in response.results} <= {"server/server.go", "server/server_test.go"}


def test_language_filter_is_case_insensitive(searcher: Searcher) -> None:
    response = search(searcher, "cache", languages=("Rust",))
    assert response.results
    assert {r.language for r in response.results} == {"rust"}


@pytest.mark.parametrize(
    ("glob", "pattern"),
    [
        ("billing/*", r"billing/[^/]+$"),
        ("*.rs", r".*\.rs$"),
        ("web/**/*.ts", r"web/.*\.ts$"),
        ("tests/test_*.py", r"tests/test_[^/]+\.py$"),
        ("server/*_test.go", r"server/[^/]+_test\.go$"),
    ],
)
def test_path_glob_filter(searcher: Searcher, glob: str, pattern: str) -> None:
    query = "charge cache config server handle evict retry"
    unfiltered = search(searcher, query, top_k=50)
    expected = {r.path for r in unfiltered.results if re.fullmatch(pattern, r.path)}
    assert expected, "the glob must match some result"
    assert len(expected) < len({r.path for r in unfiltered.results})
    response = search(searcher, query, top_k=50, paths=(glob,))
    paths = {r.path for r in response.results}
    assert paths
    assert all(re.fullmatch(pattern, p) for p in paths), paths
    assert paths == expected


def test_filters_combine(searcher: Searcher) -> None:
    response = search(searcher, "Handle", languages=("go",), paths=("*_test.go",))
    assert [r.path for r in response.results] == ["server/server_test.go"]


def test_ast_layer_returns_only_ast_chunks(searcher: Searcher) -> None:
    response = search(searcher, "charge", layers=("ast",))
    assert len(response.results) >= 2
    assert {r.layer for r in response.results} == {"ast"}
    for result in response.results:
        # An ast chunk is the signature alone: one line.
        assert "\n" not in result.snippet
        assert result.node_id is not None


def test_lexical_merges_code_and_signatures_by_score_when_both_are_asked_for(
    workspace: tuple[Path, apsw.Connection],
) -> None:
    _, conn = workspace
    analysis = analyze_query("retry failed charge")
    layer = dict(conn.execute("SELECT id, layer FROM chunks").fetchall())
    code = lexical_stream(SqliteSearchStore(conn), analysis, StreamFilters(("code",)), 300)
    ast = lexical_stream(SqliteSearchStore(conn), analysis, StreamFilters(("ast",)), 300)
    both = lexical_stream(SqliteSearchStore(conn), analysis, StreamFilters(("code", "ast")), 300)
    assert code and ast
    assert {layer[cid] for cid, _ in code} == {"code"}
    assert {layer[cid] for cid, _ in ast} == {"ast"}
    assert sorted(both) == sorted(code + ast)
    assert [score for _, score in both] == sorted((s for _, s in both), reverse=True)
    # A filter (here on languages) takes the joined path and gives the same ranking.
    filtered = lexical_stream(
        SqliteSearchStore(conn), analysis, StreamFilters(("code",), ("python",)), 300
    )
    python_ids = {
        row[0]
        for row in conn.execute(
            "SELECT c.id FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.language = 'python'"
        )
    }
    assert filtered == [hit for hit in code if hit[0] in python_ids]


def test_broad_search_never_returns_ast_chunks(searcher: Searcher) -> None:
    for query in ("charge", "func (s *Server) Handle", "parseConfig", "evict"):
        assert "ast" not in {r.layer for r in search(searcher, query).results}


def test_top_k_limits_the_results(searcher: Searcher) -> None:
    assert len(search(searcher, "charge", top_k=2).results) == 2
    assert len(search(searcher, "charge", top_k=50).results) > 2


# --- provenance -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query", ["retry_failed_charge", "func (s *Server) Handle", "billing retry", "Cache::evict"]
)
def test_provenance_names_each_stream_with_its_rank_and_score(
    workspace: tuple[Path, apsw.Connection], searcher: Searcher, query: str
) -> None:
    _, conn = workspace
    response = search(searcher, query)
    assert response.results
    request = SearchRequest(query).validated()
    analysis = analyze_query(request.query)
    filters = StreamFilters(request.layers)
    ranked = {
        name: run(SqliteSearchStore(conn), analysis, filters, 300) for name, run in STREAMS.items()
    }
    node_of = {int(r[0]): r[1] for r in conn.execute("SELECT id, node_id FROM chunks")}
    for result in response.results:
        assert result.provenance
        streams = [hit.stream for hit in result.provenance]
        assert len(streams) == len(set(streams))
        for hit in result.provenance:
            assert hit.stream in STREAMS
            assert hit.rank >= 1
            assert isinstance(hit.score, float)
            # The stream really ranked this result (or another layer of its node) there.
            chunk_id, raw = ranked[hit.stream][hit.rank - 1]
            assert raw == hit.score
            if result.node_id is None:
                assert chunk_id == result.chunk_id
            else:
                assert node_of[chunk_id] == result.node_id


def test_stream_reports(searcher: Searcher) -> None:
    response = search(searcher, "retry_failed_charge")
    reports = {r.stream: r for r in response.streams}
    assert set(reports) == set(STREAMS)
    assert reports["symbol"].candidates >= 1
    assert reports["lexical"].candidates >= 1
    assert all(r.ms >= 0 for r in response.streams)


# --- snippets ---------------------------------------------------------------------------------


SNIPPET_QUERIES = [
    "retry_failed_charge",
    "how does billing retry a failed charge",
    "parseConfig",
    "Cache::evict",
    "func (s *Server) Handle",
    "NotFound",
    "payment gateway",
    "blue-green rollout",
]


@pytest.mark.parametrize("query", SNIPPET_QUERIES)
def test_snippets_show_the_first_matched_term_within_the_chunk(
    searcher: Searcher, query: str
) -> None:
    terms = analyze_query(query).terms
    term_re = re.compile("|".join(re.escape(t) for t in terms), re.IGNORECASE)
    response = search(searcher, query, snippet_chars=200)
    assert response.results
    for result in response.results:
        assert result.start_line <= result.snippet_start_line <= result.end_line
        assert len(result.snippet) <= 200
        assert term_re.search(result.snippet), (result.path, result.snippet)


@pytest.mark.parametrize("query", SNIPPET_QUERIES)
def test_snippet_start_line_is_the_source_line_of_the_snippets_first_line(
    workspace: tuple[Path, apsw.Connection], searcher: Searcher, query: str
) -> None:
    root, _ = workspace
    response = search(searcher, query, snippet_chars=200)
    for result in response.results:
        first = result.snippet.split("\n")[0]
        if result.layer != "code" or first.endswith(" …"):
            continue  # a heading path or a stub line is not a source line
        if result.kind == "module":
            continue  # later module runs: checked in their own test below
        assert first == source_line(root, result, result.snippet_start_line)


def test_long_chunk_snippet_is_truncated_and_starts_near_the_match(
    workspace: tuple[Path, apsw.Connection], searcher: Searcher
) -> None:
    root, _ = workspace
    response = search(searcher, "sleep", snippet_chars=130, paths=("billing/*",))
    result = next(r for r in response.results if r.qualified_name.endswith("retry_failed_charge"))
    assert (result.start_line, result.end_line) == (25, 34)
    assert result.truncated is True
    assert len(result.snippet) <= 130
    # `time.sleep(delay)` (line 32) is the first line with a term; two lines of context above.
    assert result.snippet_start_line == 30
    assert result.snippet.split("\n") == [source_line(root, result, line) for line in range(30, 33)]


def test_small_snippet_still_shows_the_matching_line(searcher: Searcher) -> None:
    response = search(searcher, "time.sleep delay", snippet_chars=120, paths=("billing/*",))
    result = next(r for r in response.results if r.qualified_name.endswith("retry_failed_charge"))
    assert "delay" in result.snippet


def test_whole_chunk_snippet_is_not_truncated(searcher: Searcher) -> None:
    response = search(searcher, "Cache::evict")
    first = response.results[0]
    assert first.truncated is False
    # The chunk starts at the doc comment above the method (line 23).
    assert first.snippet == "\n".join(LIB_RS.split("\n")[22:29])
    assert first.snippet.startswith("    /// Remove the oldest entry.")
    assert (first.snippet_start_line, first.start_line, first.end_line) == (23, 23, 29)


def test_snippet_line_numbers_in_a_later_module_run(
    workspace: tuple[Path, apsw.Connection], searcher: Searcher
) -> None:
    root, _ = workspace
    response = search(searcher, "verbose logging", snippet_chars=80, paths=("billing/*",))
    result = response.results[0]
    assert (result.path, result.kind) == ("billing/settings.py", "module")
    assert result.snippet.split("\n")[0] == 'if os.environ.get("DEBUG"):'
    assert source_line(root, result, 10) == 'if os.environ.get("DEBUG"):'
    assert result.snippet_start_line == 10


@pytest.mark.parametrize(
    ("query", "body_line"),
    [("Server.Handle", "http.NotFound(w, r)"), ("Cache::evict", "self.order.remove(0);")],
)
def test_a_method_body_is_returned_once(searcher: Searcher, query: str, body_line: str) -> None:
    response = search(searcher, query)
    holders = [r for r in response.results if body_line in r.snippet]
    assert [r.kind for r in holders] == ["method"]


# --- token budget -----------------------------------------------------------------------------


@pytest.mark.parametrize("budget", [50, 120, 200, 400])
def test_max_tokens_bounds_the_response(searcher: Searcher, budget: int) -> None:
    unbounded = search(searcher, "charge retry gateway", top_k=20)
    response = search(searcher, "charge retry gateway", top_k=20, max_tokens=budget)
    estimated = sum(RESULT_OVERHEAD_TOKENS + estimate_tokens(r.snippet) for r in response.results)
    assert response.tokens == estimated
    assert response.tokens <= budget
    dropped = len(response.results) < len(unbounded.results)
    assert response.truncated_by_budget is dropped
    assert dropped  # these budgets are all too small for every result
    # The results kept are the best ones, in the same order.
    kept = [(r.path, r.qualified_name) for r in response.results]
    assert kept == [(r.path, r.qualified_name) for r in unbounded.results[: len(kept)]]


def test_a_generous_budget_drops_nothing(searcher: Searcher) -> None:
    unbounded = search(searcher, "charge retry gateway", top_k=20)
    response = search(searcher, "charge retry gateway", top_k=20, max_tokens=100_000)
    assert response.truncated_by_budget is False
    assert len(response.results) == len(unbounded.results)
    assert [r.snippet for r in response.results] == [r.snippet for r in unbounded.results]
    assert response.tokens == unbounded.tokens


# --- hostile queries --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        'NEAR(retry charge) AND OR NOT "unbalanced col:term * ^x a + b -x (',
        '"',
        "*",
        "(",
        "body:evict",
        "retry_failed_charge*",
        '"Cache::evict"',
        "x" * 2000,
    ],
)
def test_fts_operators_and_quotes_are_searched_literally(searcher: Searcher, query: str) -> None:
    response = search(searcher, query)
    assert response.query == query.strip()
    assert isinstance(response.results, list)


def test_operator_laden_query_still_finds_its_words(searcher: Searcher) -> None:
    response = search(searcher, 'body:evict AND "Cache')
    assert "Cache::evict" in names(response)


def test_invalid_request_raises_query_error(searcher: Searcher) -> None:
    with pytest.raises(QueryError):
        searcher.search(SearchRequest("   "))


# --- freshness --------------------------------------------------------------------------------


def test_reindexing_an_edited_file_finds_the_new_function_and_not_the_old(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    root = make_repo(WORKSPACE)
    conn, _ = index_workspace(root)
    searcher = Searcher(conn)
    before = search(searcher, "retry_failed_charge")
    assert before.results[0].qualified_name == "billing.charges.retry_failed_charge"

    edited = CHARGES_PY.replace("def retry_failed_charge(", "def refund_charge(").replace(
        '"""Retry a failed charge', '"""Refund a settled charge'
    )
    (root / "billing/charges.py").write_text(edited, encoding="utf-8")
    _, summary = index_workspace(root)
    assert summary.indexed == 1

    after = search(searcher, "refund_charge")
    first = after.results[0]
    assert (first.path, first.qualified_name) == (
        "billing/charges.py",
        "billing.charges.refund_charge",
    )
    assert "def refund_charge(" in first.snippet

    gone = search(searcher, "retry_failed_charge", top_k=50)
    assert "billing.charges.retry_failed_charge" not in names(gone)
    assert all("def retry_failed_charge(" not in r.snippet for r in gone.results)
    # The tests still call it by that name: they are still found.
    assert "tests/test_charges.py" in {r.path for r in gone.results}


def test_a_deleted_file_disappears_from_results(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    root = make_repo(WORKSPACE)
    conn, _ = index_workspace(root)
    searcher = Searcher(conn)
    assert "Cache::evict" in names(search(searcher, "evict"))
    (root / "cache/src/lib.rs").unlink()
    _, summary = index_workspace(root)
    assert summary.deleted == 1
    response = search(searcher, "evict", top_k=50)
    assert "cache/src/lib.rs" not in {r.path for r in response.results}


def test_a_parent_snippet_maps_lines_past_a_child_with_a_long_doc_comment(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    """The child's comment head is a part of its own (after its body); the parent's
    stub for the child still stands for every line from the comment's first."""
    doc = "\n".join(f"    /// Step {i} of folding, explained at length." for i in range(40))
    body = "\n".join(f"        let s{i} = {i};" for i in range(60))
    text = (
        "pub trait Walker {\n"
        f"{doc}\n"
        "    fn fold(&self, init: u32) -> u32 {\n"
        f"{body}\n"
        "        init\n"
        "    }\n"
        "    type ZebraItem;\n" + "".join(f"    type Other{i};\n" for i in range(20)) + "}\n"
    )
    root = make_repo({"src/walker.rs": text})
    conn, _ = index_workspace(root)
    # A window past the child's stub: its first line maps to its source line only if
    # the stub is known to stand for all the child's lines, comment head included.
    response = Searcher(conn).search(SearchRequest("Other15", layers=("code",), snippet_chars=80))
    walker = next(r for r in response.results if r.qualified_name == "Walker")
    first = walker.snippet.split("\n")[0]
    assert first.strip().startswith("type Other1"), walker.snippet
    assert source_line(root, walker, walker.snippet_start_line) == first
    fold = Searcher(conn).search(SearchRequest("Walker::fold")).results[0]
    assert fold.qualified_name == "Walker::fold"
    assert fold.start_line <= 42 <= fold.end_line  # the result holds `fn fold`


GENERATED_PARSER_C = """\
/* A Bison parser, made by GNU Bison 3.8.2.  */

/* Report a syntax error at the offending column of the source. */
static void yyerror_column(int column) {
    report_syntax_error(column);
}

/* Syntax error recovery: report the syntax error, then skip to the next column. */
static void yyrecover(int column) {
    report_syntax_error(column);
}
"""

ERRORS_C = """\
/* Errors of the compiler. */

/* Report a syntax error with a caret under its column. */
void report_syntax_error(int column) {
    print_caret(column);
}
"""


def test_a_prose_query_ranks_a_generated_file_below_hand_written_code(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    from codesift.config import SearchSettings

    root = make_repo({"src/parser.c": GENERATED_PARSER_C, "src/errors.c": ERRORS_C})
    conn, _ = index_workspace(root)
    flags = dict(conn.execute("SELECT path, generated FROM files"))
    assert flags == {"src/parser.c": 1, "src/errors.c": 0}
    query = "report a syntax error at its column"

    shipped = search(Searcher(conn), query)
    assert shipped.results[0].path == "src/errors.c"
    # The generated file matches more words: only the prior puts it below.
    unranked = Searcher(conn, SearchSettings(prior_tests=False)).search(SearchRequest(query))
    assert unranked.results[0].path == "src/parser.c"
