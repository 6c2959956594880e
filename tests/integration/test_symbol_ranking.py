"""Symbol ranking end to end: names that differ only in case, test files by language."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import apsw
import pytest

from codesift.indexer import IndexSummary
from codesift.retrieval import Searcher, SearchRequest
from codesift.retrieval.messages import PART
from codesift.retrieval.query import analyze_query
from codesift.retrieval.ranking import DEFINITION_BONUS
from codesift.retrieval.streams import FILLED, StreamFilters, symbol_stream
from codesift.store.sqlite.search import SqliteSearchStore

pytestmark = pytest.mark.usefixtures("git_isolation")

MakeRepo = Callable[..., Path]
IndexWorkspace = Callable[..., tuple[apsw.Connection, IndexSummary]]

# Three lower-case look-alikes (chunk ids come first) and the exported function.
WORKSPACE = {
    "internal/a/a.go": "package a\n\nfunc parseInt(s string) int {\n\treturn len(s)\n}\n",
    "internal/b/b.go": "package b\n\nfunc parseInt(s string) int {\n\treturn len(s) + 1\n}\n",
    "internal/c/c.go": "package c\n\nfunc parseInt(s string) int {\n\treturn len(s) + 2\n}\n",
    # Many `Write` methods; the signature names the receiver's type.
    "bufio/bufio.go": (
        "package bufio\n\ntype Writer struct{ n int }\n\n"
        "// Write writes p into the buffer: bytes buffered, flushed, written.\n"
        "func (b *Writer) Write(p []byte) (nn int, err error) {\n\treturn len(p), nil\n}\n"
    ),
    "bytes/buffer.go": (
        "package bytes\n\ntype Buffer struct{ buf []byte }\n\n"
        "func (b *Buffer) Write(p []byte) (n int, err error) {\n"
        "\tb.buf = append(b.buf, p...)\n\treturn len(p), nil\n}\n"
    ),
    "io/multi.go": (
        "package io\n\ntype multiWriter struct{ w []Writer }\n\n"
        "// Write writes p to every writer: p []byte written to each, n bytes.\n"
        "func (t *multiWriter) Write(p []byte) (n int, err error) {\n\treturn len(p), nil\n}\n"
    ),
    "strconv/atoi.go": (
        "package strconv\n\n"
        "// ParseInt interprets a string s in the given base.\n"
        "func ParseInt(s string, base int, bitSize int) (int64, error) {\n"
        "\treturn 0, nil\n}\n"
    ),
}


@pytest.fixture
def conn(make_repo: MakeRepo, index_workspace: IndexWorkspace) -> apsw.Connection:
    connection, _ = index_workspace(make_repo(WORKSPACE))
    return connection


def _names(conn: apsw.Connection, chunk_ids: list[int]) -> list[str]:
    out = []
    for cid in chunk_ids:
        row = conn.execute(
            "SELECT n.qualified_name FROM chunks c JOIN nodes n ON n.id = c.node_id WHERE c.id = ?",
            (cid,),
        ).fetchone()
        out.append(str(row[0]) if row else "")
    return out


def test_the_name_as_typed_leads_its_look_alikes_in_another_case(conn: apsw.Connection) -> None:
    ranked = symbol_stream(
        SqliteSearchStore(conn), analyze_query("ParseInt"), StreamFilters(("code",)), cap=10
    )
    names = _names(conn, [cid for cid, _ in ranked])
    assert names[0] == "strconv.ParseInt"
    assert sorted(names[1:4]) == ["a.parseInt", "b.parseInt", "c.parseInt"]
    assert ranked[0][1] > ranked[1][1] >= 1.0  # the others stay exact name matches
    # and the other way round: the lower-case name first
    lower = symbol_stream(
        SqliteSearchStore(conn), analyze_query("parseInt"), StreamFilters(("code",)), cap=10
    )
    assert _names(conn, [cid for cid, _ in lower])[0] != "strconv.ParseInt"


def test_a_symbol_search_puts_the_exact_case_definition_first(conn: apsw.Connection) -> None:
    with Searcher(conn) as searcher:
        response = searcher.search(SearchRequest(query="ParseInt", top_k=5))
    assert response.results[0].qualified_name == "strconv.ParseInt"
    assert response.results[0].path == "strconv/atoi.go"


# Ruby and PHP write qualified names with their own separators; a one-line alias of
# a name ranks below the definition with a body.
QUALIFIED = {
    "lib/shop/client.rb": (
        "module Shop\n"
        "  class Client\n"
        "    def push(item)\n"
        "      normalize(item)\n"
        "      validate(item)\n"
        "      store(item)\n"
        "      notify(item)\n"
        "      item\n"
        "    end\n"
        "  end\n"
        "  class Queue\n"
        "    def push(item) = item\n"
        "  end\n"
        "end\n"
    ),
    "src/Routing/RouteCollector.php": (
        "<?php\n"
        "namespace Shop\\Routing;\n\n"
        "class RouteCollector\n{\n"
        "    public function map(array $methods, string $pattern): void\n    {\n"
        "        $this->routes[] = [$methods, $pattern];\n    }\n}\n"
    ),
    # indexed first, and it names RouteCollector and map more often
    "src/Proxy/RouteCollectorProxy.php": (
        "<?php\n"
        "namespace Shop\\Proxy;\n\n"
        "class RouteCollectorProxy\n{\n"
        "    public function map(array $methods, string $pattern): void\n    {\n"
        "        // RouteCollector map: RouteCollector::map\n"
        "        $this->routeCollector->map($methods, $pattern);\n    }\n}\n"
    ),
    "src/request.ts": (
        "export class ShopRequest {\n"
        "  path = ''\n"
        "  header(name: string): string {\n"
        "    return name\n"
        "  }\n"
        "  query(name: string): string {\n"
        "    return name\n"
        "  }\n"
        "}\n"
    ),
    "src/client/types.ts": "export type ShopRequest = { path: string }\n",
}


@pytest.fixture
def qualified_conn(make_repo: MakeRepo, index_workspace: IndexWorkspace) -> apsw.Connection:
    connection, _ = index_workspace(make_repo(QUALIFIED, name="qualified"))
    return connection


@pytest.mark.parametrize(
    ("query", "path", "line"),
    [
        ("Shop::Client#push", "lib/shop/client.rb", 3),
        ("RouteCollector::map", "src/Routing/RouteCollector.php", 6),
        ("ShopRequest", "src/request.ts", 1),
    ],
)
def test_a_qualified_or_repeated_name_finds_its_definition_first(
    qualified_conn: apsw.Connection, query: str, path: str, line: int
) -> None:
    with Searcher(qualified_conn) as searcher:
        first = searcher.search(SearchRequest(query=query, top_k=5)).results[0]
    assert first.path == path
    assert first.start_line <= line <= first.end_line


def test_a_go_signature_finds_its_method_first(conn: apsw.Connection) -> None:
    with Searcher(conn) as searcher:
        response = searcher.search(
            SearchRequest(query="func (b *Buffer) Write(p []byte) (n int, err error)", top_k=5)
        )
    assert response.results[0].qualified_name == "bytes.Buffer.Write"


def test_initials_find_a_name_among_many_starting_with_the_same_letter(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    """`trfh` finds TimedRotatingFileHandler however many other names start with
    `t` (the standard library has thousands): the docs' example of word initials."""
    from codesift.engine.symbols import find_symbols

    many = "".join(f"def tally_{i}(entries):\n    return {i}\n\n\n" for i in range(1500))
    root = make_repo(
        {
            "tallies.py": many,
            "handlers.py": (
                'class TimedRotatingFileHandler:\n    """Rotate a log file at timed intervals."""\n'
            ),
        }
    )
    conn, _ = index_workspace(root)
    found = find_symbols(conn, "trfh", 10)
    names = [s.node.name for s in found.all]
    assert names and names[0] == "TimedRotatingFileHandler", names


# A type named like its file, against a file that defines several methods of the
# same name in another case and mentions it more often (indexed first), and a type of
# the same name and case in a file named otherwise; a command script named in kebab case.
NAMED_FILES = {
    "src/clock.rs": (
        "pub struct SystemClock;\npub struct TickClock;\npub struct OffsetClock;\n\n"
        "impl SystemClock {\n    /// The current Instant of the system clock.\n"
        "    pub fn instant(&self) -> u64 {\n        0\n    }\n}\n\n"
        "impl TickClock {\n    /// The Instant of the last tick.\n"
        "    pub fn instant(&self) -> u64 {\n        1\n    }\n}\n\n"
        "impl OffsetClock {\n    /// The Instant of the base clock plus the offset.\n"
        "    pub fn instant(&self) -> u64 {\n        2\n    }\n}\n"
    ),
    "src/formats.rs": (
        "/// An Instant read from a log line.\npub struct Instant {\n    pub raw: String,\n}\n"
    ),
    "src/instant.rs": (
        "/// A point on the time line.\npub struct Instant {\n    pub seconds: i64,\n"
        "    pub nanos: u32,\n}\n"
    ),
    "libexec/tool-help": "#!/usr/bin/env bash\n# Usage: tool help\necho 'tool help'\n",
    "libexec/tool-which": (
        "#!/usr/bin/env bash\n# Summary: Display the full path to an executable\n"
        "# Usage: tool which <command>\n"
        'command -v "$1"\n'
    ),
    "libexec/tool-whence": "#!/usr/bin/env bash\n# tool which and tool whence\necho tool\n",
}


def test_a_type_is_found_first_in_the_file_named_after_it(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    conn, _ = index_workspace(make_repo(NAMED_FILES, name="named"))
    with Searcher(conn) as searcher:
        first = searcher.search(SearchRequest(query="Instant", top_k=5)).results[0]
        assert (first.path, first.qualified_name) == ("src/instant.rs", "Instant")
        script = searcher.search(SearchRequest(query="tool-which", top_k=5)).results[0]
        assert script.path == "libexec/tool-which"


def test_symbol_lookup_lists_the_definition_in_the_file_named_after_it_first(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    """workspace/symbol, hover and `codesift symbols` order exact matches the same
    way: the name's case, then the file named after it (before the path's order)."""
    from codesift.engine.symbols import find_symbols

    conn, _ = index_workspace(make_repo(NAMED_FILES, name="named-lookup"))
    exact = [(s.node.path, s.node.name) for s in find_symbols(conn, "Instant", 10).exact]
    assert exact[:2] == [("src/instant.rs", "Instant"), ("src/formats.rs", "Instant")]
    assert {name for _, name in exact[2:]} == {"instant"}


# Several handlers define `send`; a declaration copied from one of them names it. A
# transport's method says `send`, `string`, `data` and `void` more often than any of
# them (a question in words would find it first).
TRANSPORT = (
    "<?php\nnamespace Log;\n\nclass Transport\n{\n"
    "    // send string data: void send, send the data string, data sent, send void\n"
    "    public function deliver(string $data): void\n    {\n"
    "        $this->send($data); $this->send($data); $this->send((string) $data);\n"
    "    }\n}\n"
)
HANDLERS = [
    ("Mail", "string $content, array $records", "$content"),
    ("Socket", "string $data", "$data"),
    ("Slack", "array $payload, int $timeout", "$payload"),
    ("Mandrill", "string $content, array $records, bool $html", "$records"),
]
DECLARATIONS = {
    "src/Transport.php": TRANSPORT,
    **{
        f"src/Handler/{name}Handler.php": (
            "<?php\nnamespace Log\\Handler;\n\n"
            f"class {name}Handler\n{{\n"
            f"    protected function send({params}): void\n    {{\n"
            f"        $this->transport->deliver({body});\n    }}\n}}\n"
        )
        for name, params, body in HANDLERS
    },
}


@pytest.mark.parametrize(
    ("query", "path"),
    [
        ("protected function send(string $data): void", "src/Handler/SocketHandler.php"),
        ("function send(array $payload, int $timeout)", "src/Handler/SlackHandler.php"),
        (
            "protected function send(string $content, array $records, bool $html): void",
            "src/Handler/MandrillHandler.php",
        ),
    ],
)
def test_a_declaration_finds_the_definition_whose_signature_it_repeats(
    make_repo: MakeRepo, index_workspace: IndexWorkspace, query: str, path: str
) -> None:
    conn, _ = index_workspace(make_repo(DECLARATIONS, name="declarations"))
    with Searcher(conn) as searcher:
        first = searcher.search(SearchRequest(query=query, top_k=5)).results[0]
    assert (first.path, first.kind) == (path, "method")


# A line of a test pasted as a query: the code has a near copy of it, and a question
# in words would demote the test.
PASTED = {
    "billing/charges.py": (
        "def retry_charge(charge, attempts):\n"
        '    """Retry a declined charge: charge attempts, retry the charge."""\n'
        "    for attempt in range(attempts):\n"
        "        charge = retry_charge_once(charge, attempt)\n"
        "    return charge\n\n\n"
        "def retry_charge_once(charge, attempt):\n"
        "    return charge\n\n\n"
        "def settle(declined_card, attempts):\n"
        "    result = retry_charge(declined_card, attempts)\n"
        "    return result\n"
    ),
    "tests/test_charges.py": (
        "from billing.charges import retry_charge\n\n\n"
        "def test_retry_gives_up():\n"
        "    result = retry_charge(declined_card, attempts=3)\n"
        "    assert result is declined_card\n"
    ),
}


def test_a_pasted_line_of_code_finds_where_it_is_even_in_a_test(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    conn, _ = index_workspace(make_repo(PASTED, name="pasted"))
    with Searcher(conn) as searcher:
        first = searcher.search(
            SearchRequest(query="result = retry_charge(declined_card, attempts=3)", top_k=5)
        ).results[0]
    assert first.path == "tests/test_charges.py"
    assert first.start_line <= 5 <= first.end_line


def test_a_pasted_line_leads_where_it_is_written_character_for_character(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    """Two functions hold the same words in the same order; only one holds the line
    as pasted (the other calls with its arguments unpacked differently)."""
    files = {
        "alloc.c": (
            "static void nomem_handler(void) {\n"
            "  pthread_once(mem_once, tsd_init);\n}\n\n"
            "static void exhausted(void) {\n"
            "  pthread_once(&mem_once, tsd_init);\n"
            '  fprintf(stderr, "memory exhausted: giving up after %d tries\\n", tries);\n'
            "  flush_pending_writes(log_file, pending_buffer, pending_length);\n"
            "  abort();\n}\n"
        )
    }
    conn, _ = index_workspace(make_repo(files, name="verbatim"))
    with Searcher(conn) as searcher:
        response = searcher.search(SearchRequest(query="pthread_once(&mem_once, tsd_init);"))
    first = response.results[0]
    assert (first.path, first.qualified_name) == ("alloc.c", "exhausted")
    exact = next(s for s in response.streams if s.stream == "exact")
    assert exact.candidates >= 2


# A module about declined charges that says the words of the message its neighbour
# raises more often than the neighbour does.
DECLINED_CHARGE = {
    "billing/retry.py": (
        '"""Retries: a charge that is declined is retried; retried charges are\n'
        'declined again when the card is declined."""\n\n\n'
        "def retry(charge):\n"
        '    """Retry a declined charge: card missing? charge declined, card missing,\n'
        '    missing card, declined charge, card missing again: charge declined."""\n'
        "    return charge.retry()\n"
    ),
    "billing/gateway.py": (
        "def submit(charge):\n"
        "    if charge.card is None:\n"
        '        raise ValueError("charge declined: card missing")\n'
        "    return charge\n"
    ),
}


def test_a_quoted_message_is_found_where_it_is_written(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    """An error message in quotes: the line that raises it, though a module about
    charges and retries says its words more often."""
    conn, _ = index_workspace(make_repo(DECLINED_CHARGE, name="quoted"))
    with Searcher(conn) as searcher:
        first = searcher.search(SearchRequest(query='"charge declined: card missing"')).results[0]
        assert (first.path, first.qualified_name) == ("billing/gateway.py", "gateway.submit")


def test_a_message_pasted_without_quotes_is_found_where_it_is_raised(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    """The same message pasted as a terminal shows it: the line that raises it, though
    a module about charges says its words more often, a test asserts it and a
    docstring repeats it (neither is where the program says it)."""
    files = {
        **DECLINED_CHARGE,
        "billing/docs.py": (
            "def explain(charge):\n"
            '    """charge declined: card missing"""\n'
            "    return charge.reason\n"
        ),
        "tests/test_gateway.py": (
            "def test_submit_without_card():\n"
            "    with raises(ValueError, match='charge declined: card missing'):\n"
            "        submit(Charge(card=None))\n"
        ),
    }
    conn, _ = index_workspace(make_repo(files, name="pasted"))
    with Searcher(conn) as searcher:
        response = searcher.search(SearchRequest(query="charge declined: card missing"))
        first = response.results[0]
        assert (first.path, first.qualified_name) == ("billing/gateway.py", "gateway.submit")
        # ... by a definition's lift (DEFINITION_BONUS), above anything fusion alone
        # ranks: on a large index the words alone put the message far down
        assert first.score >= DEFINITION_BONUS > response.results[1].score
        exact = next(s for s in response.streams if s.stream == "exact")
        assert exact.candidates == 2  # the raise and the test's literal, not the docstring
        # a question in the same words is no message: no lookup as written
        asked = searcher.search(SearchRequest(query="how is a charge declined"))
        assert next(s for s in asked.streams if s.stream == "exact").candidates == 0


def test_a_filled_in_message_is_found_at_the_template_that_made_it(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    """`cannot open settings.toml: 42 bytes left`, as the program printed it: the
    line whose template says it, though other code says its words more often."""
    files = {
        "store/files.py": (
            "def open_settings(path, left):\n"
            "    if left:\n"
            '        raise OSError("cannot open %s: %d bytes left" % (path, left))\n'
            "    return path\n"
        ),
        "store/notes.py": (
            "def left_bytes(path):\n"
            '    """Bytes left: open the file, count the bytes left, open it again\n'
            '    when bytes are left; cannot open? bytes left anyway."""\n'
            "    return open(path).read()\n"
        ),
    }
    conn, _ = index_workspace(make_repo(files, name="filled"))
    with Searcher(conn) as searcher:
        response = searcher.search(SearchRequest(query="cannot open settings.toml: 42 bytes left"))
        first = response.results[0]
        assert (first.path, first.qualified_name) == ("store/files.py", "files.open_settings")
        assert first.score >= DEFINITION_BONUS * FILLED > response.results[1].score


def test_a_stack_frame_finds_the_line_it_points_to(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    """A frame as a deployed program prints it: another root, the function's name,
    the line; the chunk holding that line comes first, in the file whose path ends
    the frame's (not the other file of that name)."""
    body = "".join(f"    step_{i} = {i}\n" for i in range(20))
    files = {
        "billing/retry.py": (
            "def charge_card(card):\n    return card\n\n\n"
            f"def retry_charge(invoice):\n{body}    return invoice\n"
        ),
        "vendor/retry.py": "def retry_charge(x):\n    return x\n",
    }
    conn, _ = index_workspace(make_repo(files, name="frames"))
    frame = 'File "/srv/app/billing/retry.py", line 15, in retry_charge'
    with Searcher(conn) as searcher:
        first = searcher.search(SearchRequest(query=frame)).results[0]
    assert (first.path, first.qualified_name) == ("billing/retry.py", "retry.retry_charge")
    assert first.start_line <= 15 <= first.end_line


def test_a_pasted_traceback_finds_its_innermost_frame_in_the_workspace_first(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    """A Python traceback lists the innermost frame last; the library frame between
    is no file of the workspace. The innermost frame's function leads, its caller's
    follows."""
    body = "".join(f"    step_{i} = {i}\n" for i in range(20))
    files = {
        "app/main.py": f"def run():\n{body}    return charge(1)\n",
        "billing/retry.py": f"def charge(card):\n{body}    return card\n",
    }
    conn, _ = index_workspace(make_repo(files, name="traceback"))
    trace = (
        "Traceback (most recent call last):\n"
        '  File "/srv/app/app/main.py", line 22, in run\n'
        '  File "/usr/lib/python3.11/json/decoder.py", line 337, in decode\n'
        '  File "/srv/app/billing/retry.py", line 15, in charge\n'
        "ValueError: card declined\n"
    )
    with Searcher(conn) as searcher:
        results = searcher.search(SearchRequest(query=trace)).results
    assert [(r.path, r.qualified_name) for r in results[:2]] == [
        ("billing/retry.py", "retry.charge"),
        ("app/main.py", "main.run"),
    ]


def test_a_log_line_is_found_where_the_message_is_raised(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    """The message as a log shows it, after a timestamp, a level and a logger."""
    conn, _ = index_workspace(make_repo(DECLINED_CHARGE, name="logged"))
    line = "2026-12-06 15:04:05,123 ERROR billing.gateway: charge declined: card missing"
    with Searcher(conn) as searcher:
        response = searcher.search(SearchRequest(query=line))
    first = response.results[0]
    assert (first.path, first.qualified_name) == ("billing/gateway.py", "gateway.submit")
    assert first.score >= DEFINITION_BONUS * FILLED * PART  # lifted as a definition is
    assert all(r.score < DEFINITION_BONUS * FILLED * PART for r in response.results[1:])


def test_a_question_about_one_name_finds_its_definition_before_its_callers(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    files = {
        "http/wire.py": (
            "def parse_http_header(line):\n"
            "    name, _, value = line.partition(':')\n"
            "    return name, value\n"
        ),
        # callers that say the name more often, in shorter chunks
        "http/client.py": (
            "def read_headers(lines):\n"
            "    return [parse_http_header(l) for l in lines if parse_http_header(l)]\n"
        ),
        "http/server.py": (
            "def handle(line):\n    parse_http_header(line)\n    return parse_http_header(line)\n"
        ),
    }
    conn, _ = index_workspace(make_repo(files, name="asked"))
    with Searcher(conn) as searcher:
        for question in ("what does parse_http_header do", "where is parse_http_header defined"):
            first = searcher.search(SearchRequest(query=question)).results[0]
            assert (first.path, first.qualified_name) == (
                "http/wire.py",
                "wire.parse_http_header",
            ), question


def test_a_file_name_or_path_finds_that_file(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    """The file's words are not in it; other files say them often."""
    files = {
        "billing/gateway.py": "def submit(charge):\n    return charge.send()\n",
        "billing/notes.py": (
            "# The gateway: gateway.py talks to the gateway; py gateway gateway.\n"
            "GATEWAY = 'gateway'\n"
        ),
        "legacy/billing/gateway.py": "def submit_old(charge):\n    return None\n",
    }
    conn, _ = index_workspace(make_repo(files, name="paths"))
    with Searcher(conn) as searcher:
        by_name = searcher.search(SearchRequest(query="gateway.py")).results
        assert {by_name[0].path, by_name[1].path} == {
            "billing/gateway.py",
            "legacy/billing/gateway.py",
        }
        assert by_name[0].path == "billing/gateway.py"  # the shorter path first
        by_path = searcher.search(SearchRequest(query="legacy/billing/gateway.py")).results
        assert by_path[0].path == "legacy/billing/gateway.py"
        stream = next(
            s for s in searcher.search(SearchRequest(query="x.py")).streams if s.stream == "path"
        )
        assert stream.candidates == 0
