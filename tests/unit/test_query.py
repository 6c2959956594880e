"""Query analysis, FTS5 quoting and request validation."""

from __future__ import annotations

import re
from collections.abc import Iterator

import apsw
import pytest

from codesift.errors import QueryError
from codesift.retrieval.query import (
    STOPWORDS,
    analyze_query,
    code_line_query,
    fragment_name,
    fts_or_query,
    fts_quote,
    named_in_question,
    path_query,
    singulars,
    trigrams,
    verb_bases,
    with_variants,
)
from codesift.retrieval.request import (
    BROAD_LAYERS,
    MAX_QUERY_CHARS,
    SearchRequest,
)

# --- analyze_query: symbol-like detection ------------------------------------------------


@pytest.mark.parametrize(
    ("query", "symbol", "tail"),
    [
        ("ParseConfig", "ParseConfig", "ParseConfig"),
        ("pkg.mod.Class.method", "pkg.mod.Class.method", "method"),
        ("Type::method", "Type::method", "method"),
        ("Pool.imap_unordered", "Pool.imap_unordered", "imap_unordered"),
        ("foo()", "foo", "foo"),
        ("parse_http_header", "parse_http_header", "parse_http_header"),
        ("  Cache::evict  ", "Cache::evict", "evict"),
        ("Foo#bar", "Foo#bar", "bar"),
        ("obj->method", "obj->method", "method"),
    ],
)
def test_symbol_like_queries(query: str, symbol: str, tail: str) -> None:
    analysis = analyze_query(query)
    assert analysis.symbol_like is True
    assert analysis.symbol == symbol
    assert analysis.symbol_tail == tail
    assert analysis.text == query.strip()


@pytest.mark.parametrize(
    "query",
    [
        "how does billing retry a failed charge",
        "func (s *Server) Handle",
        "parse config",
        "retry_failed_charge gateway",
        "foo(bar)",
        "Type::",
        "a.b.",
        "3d_model",
    ],
)
def test_not_symbol_like(query: str) -> None:
    analysis = analyze_query(query)
    assert analysis.symbol_like is False
    assert analysis.symbol == ""
    assert analysis.symbol_tail == ""


# --- analyze_query: terms and identifiers ------------------------------------------------


def test_prose_terms_are_lower_cased_without_stopwords() -> None:
    analysis = analyze_query("How does Billing RETRY a failed charge")
    assert analysis.terms == ("billing", "retry", "failed", "charge")
    assert all(term not in STOPWORDS for term in analysis.terms)


def test_identifiers_are_kept_whole_and_split_into_parts() -> None:
    analysis = analyze_query("where is parseHTTPHeader called")
    assert analysis.terms == ("parsehttpheader", "parse", "http", "header", "called")
    assert analysis.identifiers == ("parseHTTPHeader",)


def test_snake_case_identifier_parts() -> None:
    analysis = analyze_query("retry_failed_charge")
    assert analysis.terms == ("retry_failed_charge", "retry", "failed", "charge")
    assert analysis.identifiers == ("retry_failed_charge",)


def test_identifier_parts_drop_stopwords_and_single_letters() -> None:
    analysis = analyze_query("get_a_value")
    assert analysis.terms == ("get_a_value", "value")


def test_a_symbol_query_keeps_stopword_components() -> None:
    # `method` and `get` are stopwords in prose but they are names here.
    analysis = analyze_query("Pool.get")
    assert analysis.terms == ("pool", "get")
    assert analysis.identifiers == ("Pool", "get")


def test_qualified_symbol_identifiers_are_its_components() -> None:
    assert analyze_query("pkg.mod.Class.method").identifiers == ("pkg", "mod", "Class", "method")
    assert analyze_query("Type::method").identifiers == ("Type", "method")


def test_signature_query_identifiers_and_terms() -> None:
    analysis = analyze_query("func (s *Server) Handle")
    assert analysis.identifiers == ("Server", "Handle")
    assert analysis.terms == ("func", "s", "server", "handle")


def test_terms_are_deduplicated_in_order() -> None:
    analysis = analyze_query("cache Cache CACHE evict cache")
    assert analysis.terms == ("cache", "evict")


def test_a_query_of_stopwords_only_searches_them() -> None:
    assert analyze_query("how does it work").terms == ("how", "does", "it", "work")


def test_a_query_without_words_has_no_terms() -> None:
    for query in ("*", "(", "+ - ^", '""'):
        analysis = analyze_query(query)
        assert analysis.terms == ()
        assert analysis.identifiers == ()
        # The streams must skip MATCH for such a query: an empty FTS5 query is an error.
        assert fts_or_query(analysis.terms) == ""


def test_a_capitalised_stopword_starting_a_question_is_not_an_identifier() -> None:
    analysis = analyze_query("Where does the server handle requests")
    assert analysis.identifiers == ()
    assert "where" not in analysis.terms


def test_trigrams() -> None:
    assert trigrams("Evict") == ["evi", "ict", "vic"]
    assert trigrams("ab") == []


# --- FTS5 quoting ------------------------------------------------------------------------


def test_fts_quote_wraps_and_doubles_quotes() -> None:
    assert fts_quote("plain") == '"plain"'
    assert fts_quote('say "hi"') == '"say ""hi"""'
    assert fts_quote('"') == '""""'
    assert fts_quote("") == '""'


def test_fts_or_query_joins_quoted_terms_and_skips_empty_ones() -> None:
    assert fts_or_query(["a", "", 'b"c']) == '"a" OR "b""c"'
    assert fts_or_query(("only",)) == '"only"'
    assert fts_or_query([]) == ""


@pytest.fixture
def fts() -> Iterator[apsw.Connection]:
    """A tiny contentless FTS5 table like code_fts, in memory."""
    conn = apsw.Connection(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE t USING fts5(body, content='', contentless_delete=1,"
        " tokenize=\"unicode61 remove_diacritics 2 tokenchars '_'\")"
    )
    rows = [
        (1, "NEAR a b AND OR NOT unbalanced"),
        (2, "col term x plus minus"),
        (3, "retry_failed_charge retry failed charge"),
    ]
    conn.executemany("INSERT INTO t(rowid, body) VALUES (?, ?)", rows)
    yield conn
    conn.close()


def match(conn: apsw.Connection, query: str) -> set[int]:
    return {row[0] for row in conn.execute("SELECT rowid FROM t WHERE t MATCH ?", (query,))}


OPERATOR_QUERIES = [
    "NEAR(a b)",
    "a AND OR NOT b",
    '"unbalanced',
    "col:term",
    "*",
    "^x",
    "a + b",
    "-x",
    "(",
    'NEAR("a" b, 2) OR (col:term AND -x) ^ "',
    'retry_failed_charge" OR "*',
]


def test_raw_operator_queries_are_fts5_syntax_errors(fts: apsw.Connection) -> None:
    # The control: unquoted, these strings are FTS5 syntax (or errors), not words.
    for query in ('"unbalanced', "(", "-x", "a AND OR NOT b", "col:term"):
        with pytest.raises(apsw.SQLError):
            match(fts, query)


@pytest.mark.parametrize("query", OPERATOR_QUERIES)
def test_analyzed_operator_queries_run_against_fts5(fts: apsw.Connection, query: str) -> None:
    terms = analyze_query(query).terms
    assert bool(terms) == bool(re.search(r"\w", query))
    if terms:
        assert match(fts, fts_or_query(terms)) <= {1, 2, 3}  # runs, and finds only real rows


@pytest.mark.parametrize("query", OPERATOR_QUERIES)
def test_quoted_raw_words_run_against_fts5(fts: apsw.Connection, query: str) -> None:
    # Even words that still carry operator characters are searched literally.
    assert match(fts, fts_or_query(query.split())) <= {1, 2, 3}
    assert match(fts, fts_quote(query)) <= {1, 2, 3}


def test_quoted_operators_match_as_plain_words(fts: apsw.Connection) -> None:
    assert match(fts, fts_or_query(analyze_query("NEAR(a b)").terms)) == {1}
    assert match(fts, fts_or_query(analyze_query("a AND OR NOT b").terms)) == {1}
    assert match(fts, fts_or_query(analyze_query('"unbalanced').terms)) == {1}
    # "col:term" is the phrase `col term`, not a column filter.
    assert match(fts, fts_quote("col:term")) == {2}
    assert match(fts, fts_or_query(analyze_query("retry_failed_charge").terms)) == {3}


# --- SearchRequest.validated -------------------------------------------------------------


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_empty_query_is_rejected(query: str) -> None:
    with pytest.raises(QueryError, match="empty"):
        SearchRequest(query).validated()


def test_query_length_limit() -> None:
    assert MAX_QUERY_CHARS == 2000
    assert SearchRequest("x" * MAX_QUERY_CHARS).validated().query == "x" * MAX_QUERY_CHARS
    assert SearchRequest(f"  {'x' * MAX_QUERY_CHARS}  ").validated().query == "x" * 2000
    with pytest.raises(QueryError, match="2001"):
        SearchRequest("x" * (MAX_QUERY_CHARS + 1)).validated()


@pytest.mark.parametrize("top_k", [0, -1, 201, 10_000])
def test_top_k_out_of_bounds_is_rejected(top_k: int) -> None:
    with pytest.raises(QueryError, match="top_k"):
        SearchRequest("q", top_k=top_k).validated()


@pytest.mark.parametrize("top_k", [1, 10, 200])
def test_top_k_in_bounds_is_kept(top_k: int) -> None:
    assert SearchRequest("q", top_k=top_k).validated().top_k == top_k


def test_unknown_layer_is_rejected_by_name() -> None:
    with pytest.raises(QueryError, match="bogus"):
        SearchRequest("q", layers=("code", "bogus")).validated()


def test_layers_default_and_deduplicate() -> None:
    assert SearchRequest("q").validated().layers == BROAD_LAYERS == ("code", "summary", "doc")
    assert SearchRequest("q", layers=()).validated().layers == BROAD_LAYERS
    assert SearchRequest("q", layers=("ast", "ast", "code")).validated().layers == ("ast", "code")


@pytest.mark.parametrize(
    ("asked", "kept"), [(0, 80), (79, 80), (80, 80), (600, 600), (4000, 4000), (4001, 4000)]
)
def test_snippet_chars_are_clamped(asked: int, kept: int) -> None:
    assert SearchRequest("q", snippet_chars=asked).validated().snippet_chars == kept


def test_max_tokens_minimum() -> None:
    with pytest.raises(QueryError, match="max_tokens"):
        SearchRequest("q", max_tokens=49).validated()
    assert SearchRequest("q", max_tokens=50).validated().max_tokens == 50
    assert SearchRequest("q").validated().max_tokens is None


def test_validated_normalises_query_and_languages_and_keeps_the_rest() -> None:
    request = SearchRequest(
        "  Cache::evict ",
        top_k=5,
        languages=("Go", "PYTHON"),
        paths=("src/**",),
        include_graph=True,
    ).validated()
    assert request.query == "Cache::evict"
    assert request.languages == ("go", "python")
    assert request.paths == ("src/**",)
    assert request.include_graph is True
    assert request.top_k == 5


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("warnings", ("warning",)),
        ("handlers", ("handler",)),
        ("entries", ("entry",)),
        ("caches", ("cache", "cach")),
        ("matches", ("matche", "match")),
        ("process", ()),
        ("status", ()),
        ("analysis", ()),
        ("bus", ()),
        ("warning", ()),
    ],
)
def test_singulars_of_a_plural_word(word: str, expected: tuple[str, ...]) -> None:
    assert singulars(word) == expected


def test_with_variants_appends_the_missing_singulars_and_bases_once() -> None:
    assert with_variants(("warnings", "warning", "lines", "unused")) == (
        "warnings",
        "warning",
        "lines",
        "unused",
        "line",
        "warn",
        "warne",
        "unus",  # readings that are no word match nothing
        "unuse",
    )
    assert with_variants(("parse", "config")) == ("parse", "config")
    # the base of a plural's singular: `settings` -> `setting` -> `sett`, `set`
    assert with_variants(("streaming", "settings")) == (
        "streaming",
        "settings",
        "setting",
        "stream",
        "streame",
        "sett",
        "sette",
        "set",
    )


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("streaming", ("stream", "streame")),
        ("loading", ("load", "loade")),
        ("created", ("creat", "create")),
        ("creation", ("creat", "create")),
        ("connection", ("connect", "connecte")),
        ("running", ("runn", "runne", "run")),
        ("region", ()),
        ("version", ()),
        ("string", ()),
        ("thing", ()),
        ("load", ()),
    ],
)
def test_verb_bases_of_a_word(word: str, expected: tuple[str, ...]) -> None:
    assert verb_bases(word) == expected


@pytest.mark.parametrize(
    ("query", "symbol", "tail"),
    [
        ("func (b *Buffer) Write(p []byte) (n int, err error)", "Buffer.Write", "Write"),
        ("func (srv *Server) Serve(l net.Listener)", "Server.Serve", "Serve"),
        ("func (s *Stack[T]) Push(v T)", "Stack.Push", "Push"),
        ("func ParseInt(s string, base int, bitSize int)", "ParseInt", "ParseInt"),
        ("def load(path)", "load", "load"),
        ("pub fn parse<T>(input: &str)", "parse", "parse"),
        ("function compose(middleware)", "compose", "compose"),
    ],
)
def test_a_signature_asks_for_its_definition(query: str, symbol: str, tail: str) -> None:
    analysis = analyze_query(query)
    assert analysis.symbol_like
    assert (analysis.symbol, analysis.symbol_tail) == (symbol, tail)


@pytest.mark.parametrize(
    "query", ["function that parses the config", "define a function (callback) for events"]
)
def test_prose_that_starts_like_a_signature_stays_prose(query: str) -> None:
    assert not analyze_query(query).symbol_like


@pytest.mark.parametrize(
    ("query", "symbol", "tail"),
    [
        ("public function send(string $content, array $records): void", "send", "send"),
        ("uint32_t Extend(uint32_t crc, const char* data, size_t n)", "Extend", "Extend"),
        ("override fun create(context: ResolutionContext): T", "create", "create"),
        ("pub(crate) fn type_id(&self) -> AnyValueId", "type_id", "type_id"),
        ("@Override public boolean equals(Object obj)", "equals", "equals"),
        (
            "[Fact] public void RenderedMessageIsIncluded()",
            "RenderedMessageIsIncluded",
            "RenderedMessageIsIncluded",
        ),
        ("Buffer::write(const char* s)", "Buffer.write", "write"),
        # a macro around the return type: the declared name follows it
        ("PyAPI_FUNC(int) PyLong_AsLong(PyObject *)", "PyLong_AsLong", "PyLong_AsLong"),
        (
            "YAML_DECLARE(int) yaml_parser_initialize(yaml_parser_t *parser);",
            "yaml_parser_initialize",
            "yaml_parser_initialize",
        ),
        ("defp normalize_peer(opts)", "normalize_peer", "normalize_peer"),
        (
            "custom_entries_view.select_prev_item = function(self, option)",
            "custom_entries_view.select_prev_item",
            "select_prev_item",
        ),
        ("const animate = (marbles: string) =>", "animate", "animate"),
        ("std::vector<int> Foo::bar(int x) const", "Foo.bar", "bar"),
        ("[Benchmark(Baseline = true)] public void Bare()", "Bare", "Bare"),
    ],
)
def test_a_declaration_as_copied_asks_for_its_definition(
    query: str, symbol: str, tail: str
) -> None:
    analysis = analyze_query(query)
    assert analysis.symbol_like and analysis.declaration
    assert (analysis.symbol, analysis.symbol_tail) == (symbol, tail)
    assert fragment_name(query) is not None


@pytest.mark.parametrize(
    "query",
    [
        "how middleware and route handlers are chained with a next() continuation",
        "child templates calling super() to render the parent's content",
        "where is parse() called",
        "if (ready) return",
        # a line that calls the name does not declare it
        "params = to_native_string(params)",
        "ctx.response.remove('Transfer-Encoding')",
        "return $exception->getDescription();",
        'error("Pass either a string", 2)',
        "String uriString = requestURI();",
        'printf("%d", n);',
    ],
)
def test_a_question_that_names_a_call_is_no_declaration(query: str) -> None:
    analysis = analyze_query(query)
    assert not analysis.declaration
    assert not analysis.symbol_like


def test_a_bare_name_is_a_symbol_but_no_declaration() -> None:
    analysis = analyze_query("ParseConfig")
    assert analysis.symbol_like and not analysis.declaration


@pytest.mark.parametrize(
    "query",
    [
        "params = to_native_string(params)",
        "return ordinal() < DAY_OF_WEEK.ordinal();",
        "ctx.response.remove('Transfer-Encoding')",
        "if (!(op&REMNEAR)) {",
        "$this->createHeader(['Protocol', 1], static::PROTOCOL_URI),",
        "m, err := MethodOverrideConfig{Getter: x}.ToMiddleware()",
    ],
)
def test_a_pasted_line_of_code_is_a_code_line(query: str) -> None:
    analysis = analyze_query(query)
    assert analysis.verbatim == query and code_line_query(query)
    assert not analysis.symbol_like


@pytest.mark.parametrize(
    "query",
    [
        "how middleware and route handlers are chained with a next() continuation",
        "expand $1 or $name capture group references inside a replacement string",
        "retry a failed charge",
        "Iterator::fold",  # a symbol
        "public function send(string $content): void",  # a declaration
    ],
)
def test_questions_symbols_and_declarations_are_no_code_lines(query: str) -> None:
    assert not analyze_query(query).verbatim


@pytest.mark.parametrize(
    ("query", "verbatim"),
    [
        ('"connection reset by peer"', "connection reset by peer"),
        ("'header argument is required'", "header argument is required"),
        ("`make install`", "make install"),
        ('"ParseConfig"', "ParseConfig"),
    ],
)
def test_a_quoted_query_asks_for_the_quoted_text_as_written(query: str, verbatim: str) -> None:
    assert analyze_query(query).verbatim == verbatim


@pytest.mark.parametrize("query", ['"ab"', '"unbalanced', 'say "hi" to the cache', '"  "'])
def test_no_quotes_around_the_whole_query_is_no_quoted_query(query: str) -> None:
    assert not analyze_query(query).verbatim


@pytest.mark.parametrize(
    ("query", "symbol", "tail"),
    [
        ("what does parse_http_header do", "parse_http_header", "parse_http_header"),
        ("where is `RetryPolicy` defined?", "RetryPolicy", "RetryPolicy"),
        ("explain Pool.imap", "Pool.imap", "imap"),
        ("what does retry_charge() return", "retry_charge", "retry_charge"),
        ("what does Invoice do", "Invoice", "Invoice"),
        ("how does getFrontMatterParser work", "getFrontMatterParser", "getFrontMatterParser"),
    ],
)
def test_a_question_about_one_name_asks_for_its_definition(
    query: str, symbol: str, tail: str
) -> None:
    analysis = analyze_query(query)
    assert named_in_question(query)
    assert analysis.symbol_like and not analysis.declaration
    assert (analysis.symbol, analysis.symbol_tail) == (symbol, tail)
    # its words stay a question's: no stopword is searched
    assert "what" not in analysis.terms and "does" not in analysis.terms


@pytest.mark.parametrize(
    "query",
    [
        "how does billing retry a failed charge",  # no name
        "Removes the item",  # a capitalised first word
        "Invoice total",  # no question
        "what does parse_http_header return for an empty line",  # more than the name
        "where are parse_http_header and retry_charge called",  # two names
        "Return a of this RequestsCookieJar",  # a sentence, not a question
    ],
)
def test_other_questions_name_no_single_symbol(query: str) -> None:
    assert not named_in_question(query)
    assert not analyze_query(query).symbol_like


@pytest.mark.parametrize(
    ("query", "path"),
    [
        ("smtplib.py", "smtplib.py"),
        ("retrieval/ordering.py", "retrieval/ordering.py"),
        ("./src/main.rs", "src/main.rs"),
        ("Cargo.toml", "Cargo.toml"),
        ("README.md", "README.md"),
        ("index.d.ts", "index.d.ts"),
        ("lib/rack", "lib/rack"),
    ],
)
def test_a_file_name_or_path_is_a_path_query(query: str, path: str) -> None:
    analysis = analyze_query(query)
    assert path_query(query) == path and analysis.path == path
    assert not analysis.symbol_like and analysis.literal


@pytest.mark.parametrize(
    "query", ["Pool.imap", "os.path", "self.value", "v1.2.3", "src/", "http://x.com/a.py", "a b.py"]
)
def test_names_versions_and_urls_are_no_paths(query: str) -> None:
    assert path_query(query) == ""


@pytest.mark.parametrize(
    "query",
    [
        "charge declined: card missing",
        "connection reset by peer",
        "should not go backwards",  # a test's description opens as a question does
        "does not cache value when ttl is 0",
        "the next run time is always in the future",
    ],
)
def test_prose_of_three_words_or_more_may_be_a_pasted_message(query: str) -> None:
    analysis = analyze_query(query)
    assert analysis.phrase == query
    assert not analysis.literal  # still read as the question it may be


@pytest.mark.parametrize(
    "query",
    [
        "retry charge",  # two words
        "how does billing retry a failed charge",  # a question
        "where are settings read",
        "is the cache thread safe?",
        "parse_http_header",  # a symbol
        "what does parse_http_header do",
        '"charge declined: card missing"',  # quoted: found as written anyway
        "params = to_native_string(params)",  # a line of code: likewise
        "billing/gateway.py",  # a path
    ],
)
def test_questions_symbols_and_literal_queries_are_no_pasted_message(query: str) -> None:
    assert analyze_query(query).phrase == ""
