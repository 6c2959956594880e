"""Query files of the scripting and functional languages: ruby, php, elixir,
haskell, lua, bash. Each fixture in tests/fixtures/languages/<language>/ is parsed
and its nodes, qualified names, spans, doc comments and edges are checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from codesift.config import IndexSettings
from codesift.parsing.extractor import extract
from codesift.parsing.grammars import query_for, query_source
from codesift.parsing.languages import detect_language, refine_language, spec_for
from codesift.parsing.model import ParsedFile, ParsedNode
from codesift.preparation import FileJob, PreparedFile, prepare_file

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "languages"

FIXTURE_FILES = {
    "ruby": "ruby/billing.rb",
    "php": "php/OrderService.php",
    "elixir": "elixir/accounts.ex",
    "haskell": "haskell/Inventory.hs",
    "lua": "lua/cache.lua",
    "bash": "bash/deploy.sh",
}
LANGUAGES = sorted(FIXTURE_FILES)

# The extractor makes every definition with a receiver a method: Lua
# `function M.f()` (receiver M) is reported like `function M:f()`.
LUA_TABLE_FUNCTION = "method"


def php_ns(name: str) -> str:
    """PHP names qualified by the file's namespace when the spec uses it as a package."""
    spec = spec_for("php")
    assert spec is not None
    return f"App\\Orders\\{name}" if spec.qualifier == "package" else name


# Gaps of the extractor (not of the query files), pinned so a fix shows up.
EXTRACTOR_GAP = "extractor gap, see the report of the scripting query files"


def parse(language: str, text: str, rel_path: str = "") -> ParsedFile:
    spec = spec_for(language)
    assert spec is not None
    return extract(text, rel_path or f"snippet.{language}", spec)


def parse_fixture(language: str) -> ParsedFile:
    rel = FIXTURE_FILES[language]
    return parse(language, (FIXTURES / rel).read_text(encoding="utf-8"), rel)


def definitions(parsed: ParsedFile) -> set[tuple[str, str]]:
    return {(n.kind, n.qualified_name) for n in parsed.nodes[1:]}


def node(parsed: ParsedFile, qualified_name: str) -> ParsedNode:
    found = [n for n in parsed.nodes if n.qualified_name == qualified_name]
    assert found, f"no node {qualified_name!r}"
    return found[0]


def edges(parsed: ParsedFile, kind: str) -> set[tuple[str, str]]:
    return {
        (parsed.nodes[e.src].qualified_name, e.dst_name) for e in parsed.edges if e.kind == kind
    }


def assert_local_call(parsed: ParsedFile, caller: str, callee: str) -> None:
    src = node(parsed, caller)
    dst = node(parsed, callee)
    calls = [
        e for e in parsed.edges if e.kind == "calls" and e.src == src.index and e.dst == dst.index
    ]
    assert calls, f"no calls edge {caller} -> {callee}"
    assert calls[0].dst_name == dst.name


def import_hints(parsed: ParsedFile) -> set[str]:
    return {e.dst_hint for e in parsed.edges if e.kind == "imports"}


# --- every language ---------------------------------------------------------------


@pytest.mark.parametrize("language", LANGUAGES)
def test_query_compiles(language: str) -> None:
    assert query_for(language).pattern_count > 0


@pytest.mark.parametrize("language", LANGUAGES)
def test_queries_use_only_predicates_tree_sitter_evaluates(language: str) -> None:
    # py-tree-sitter 0.26 silently ignores `#not-any-of?` (every node matches);
    # exclusions must be written as anchored `#not-match?` regexes.
    assert "(#not-any-of?" not in query_source(language)


@pytest.mark.parametrize("language", LANGUAGES)
def test_fixture_parses_without_errors(language: str) -> None:
    parsed = parse_fixture(language)
    assert parsed.errors == 0
    assert parsed.language == language
    assert parsed.nodes[0].kind == "module"
    assert len(parsed.nodes) > 5


@pytest.mark.parametrize("language", LANGUAGES)
def test_edges_point_inside_the_file(language: str) -> None:
    parsed = parse_fixture(language)
    count = len(parsed.nodes)
    for edge in parsed.edges:
        assert 0 <= edge.src < count
        assert edge.dst is None or 0 <= edge.dst < count
        assert edge.dst_name


SYNTAX_ERRORS = {
    "ruby": (
        "class Good\n  def ok\n    1\n  end\nend\n\n"
        "def broken(\n  x = = 2\nend\n\ndef after_error\n  2\nend\n",
        {("class", "Good"), ("method", "Good::ok"), ("method", "after_error")},
    ),
    "php": (
        "<?php\nfunction good() { return 1; }\nfunction broken( { return ; }\n"
        "class After { public function fine() {} }\n",
        {("function", "good"), ("class", "After"), ("method", "After::fine")},
    ),
    "elixir": (
        "defmodule Good do\n  def ok(x), do: x\n\n  def broken(x) do\n    x +\n  end\n\n"
        "  def after_error(y), do: y\nend\n",
        {("module", "Good"), ("function", "Good.ok")},
    ),
    "haskell": (
        "module M where\n\ngood :: Int\ngood = 1\n\nbroken x = case x of\n  )\n\n"
        "after :: Int -> Int\nafter x = x\n",
        {("function", "M.good"), ("function", "M.after")},
    ),
    "lua": (
        "local function good()\n  return 1\nend\n\nfunction broken(\n  return\nend\n\n"
        "function after()\nend\n",
        {("function", "good"), ("function", "after")},
    ),
    "bash": (
        "good() {\n  echo ok\n}\n\nbroken() {\n  if then\n}\n\nafter() {\n  echo fine\n}\n",
        {("function", "good"), ("function", "after")},
    ),
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_syntax_error_keeps_the_definitions_that_parse(language: str) -> None:
    text, expected = SYNTAX_ERRORS[language]
    parsed = parse(language, text)
    assert parsed.errors > 0
    assert expected <= definitions(parsed)


# --- ruby -------------------------------------------------------------------------


def test_ruby_definitions() -> None:
    parsed = parse_fixture("ruby")
    assert definitions(parsed) == {
        ("module", "Billing"),
        ("constant", "Billing::CURRENCY"),
        ("class", "Billing::PaymentError"),
        ("module", "Billing::Taxable"),
        ("method", "Billing::Taxable::tax_rate"),
        ("class", "Billing::Invoice"),
        ("method", "Billing::Invoice::initialize"),
        ("method", "Billing::Invoice::subtotal"),
        ("method", "Billing::Invoice::total"),
        ("method", "Billing::Invoice::settle!"),
        ("method", "Billing::Invoice::from_json"),
        ("method", "Billing::Invoice::log_settlement"),
        ("method", "main"),
    }


def test_ruby_spans_docs_and_signatures() -> None:
    parsed = parse_fixture("ruby")
    invoice = node(parsed, "Billing::Invoice")
    assert (invoice.start_line, invoice.end_line) == (19, 57)
    assert invoice.docstring == "An invoice groups line items for one customer."
    assert invoice.parent == node(parsed, "Billing").index
    subtotal = node(parsed, "Billing::Invoice::subtotal")
    assert (subtotal.start_line, subtotal.end_line) == (31, 33)
    assert subtotal.docstring == "Sum of all line items, before tax."
    assert node(parsed, "Billing::Invoice::from_json").signature == "def self.from_json(text)"


def test_ruby_calls() -> None:
    parsed = parse_fixture("ruby")
    # `log_settlement` without arguments, `Billing::Invoice.from_json(...)`, `obj.m(...)`.
    assert_local_call(parsed, "Billing::Invoice::settle!", "Billing::Invoice::log_settlement")
    assert_local_call(parsed, "main", "Billing::Invoice::from_json")
    assert_local_call(parsed, "main", "Billing::Invoice::settle!")
    calls = edges(parsed, "calls")
    assert ("Billing::Invoice::settle!", "charge") in calls
    assert ("main", "Gateway") in calls  # Gateway.new calls the class
    assert ("Billing::Invoice::from_json", "parse") in calls
    # Declarations are not calls.
    names = {name for _, name in calls}
    assert not names & {
        "require",
        "require_relative",
        "include",
        "extend",
        "attr_reader",
        "private",
        "new",
    }


def test_ruby_inheritance_and_mixins() -> None:
    parsed = parse_fixture("ruby")
    inherits = edges(parsed, "inherits")
    assert inherits == {
        ("Billing::PaymentError", "StandardError"),
        ("Billing::Invoice", "Base"),
        ("Billing::Invoice", "Taxable"),
        ("Billing::Invoice", "Forwardable"),
    }
    taxable = node(parsed, "Billing::Taxable")
    mixin = [e for e in parsed.edges if e.kind == "inherits" and e.dst_name == "Taxable"]
    assert mixin[0].dst == taxable.index


def test_ruby_imports() -> None:
    parsed = parse_fixture("ruby")
    assert {"json", "support/money"} <= import_hints(parsed)


def test_ruby_scoped_class_name_is_qualified_by_its_scope() -> None:
    parsed = parse("ruby", "class Shop::Cart < Base\n  def add\n  end\nend\n")
    assert ("class", "Shop::Cart") in definitions(parsed)
    assert node(parsed, "Shop::Cart").name == "Cart"
    assert edges(parsed, "inherits") == {("Shop::Cart", "Base")}


def test_ruby_methods_of_a_scoped_class_keep_the_scope() -> None:
    parsed = parse("ruby", "class Shop::Cart < Base\n  def add\n  end\nend\n")
    assert ("method", "Shop::Cart::add") in definitions(parsed)


def test_ruby_doc_of_the_first_statement_of_a_body() -> None:
    # Ruby puts the comment above the first class of a module outside body_statement.
    parsed = parse("ruby", "module Shop\n  # The cart.\n  class Cart\n  end\nend\n")
    assert node(parsed, "Shop::Cart").docstring == "The cart."


# --- php --------------------------------------------------------------------------


def test_php_definitions() -> None:
    parsed = parse_fixture("php")
    assert definitions(parsed) == {
        ("constant", php_ns("MAX_ITEMS")),
        ("interface", php_ns("Discountable")),
        ("method", php_ns("Discountable::discount")),
        ("trait", php_ns("Timestamps")),
        ("method", php_ns("Timestamps::touch")),
        ("enum", php_ns("Status")),
        ("constant", php_ns("Status::Open")),
        ("constant", php_ns("Status::Paid")),
        ("class", php_ns("OrderService")),
        ("constructor", php_ns("OrderService::__construct")),
        ("method", php_ns("OrderService::place")),
        ("method", php_ns("OrderService::discount")),
        ("method", php_ns("OrderService::count")),
        ("method", php_ns("OrderService::validate")),
        ("method", php_ns("OrderService::total")),
        ("function", php_ns("make_service")),
    }


def test_php_spans_and_docs() -> None:
    parsed = parse_fixture("php")
    service = node(parsed, php_ns("OrderService"))
    assert (service.start_line, service.end_line) == (38, 78)
    assert service.docstring == "Places and cancels orders for the storefront."
    place = node(parsed, php_ns("OrderService::place"))
    assert (place.start_line, place.end_line) == (48, 55)
    assert place.signature == "public function place(array $items): Order"


def test_php_calls() -> None:
    parsed = parse_fixture("php")
    assert_local_call(
        parsed, php_ns("OrderService::place"), php_ns("OrderService::validate")
    )  # $this->m()
    assert_local_call(
        parsed, php_ns("OrderService::place"), php_ns("OrderService::total")
    )  # self::m()
    assert_local_call(
        parsed, php_ns("make_service"), php_ns("OrderService")
    )  # new OrderService(...)
    calls = edges(parsed, "calls")
    assert (php_ns("OrderService::place"), "save") in calls
    assert (php_ns("OrderService::place"), "Order") in calls
    assert (php_ns("OrderService::validate"), "InvalidArgumentException") in calls
    assert (php_ns("OrderService::total"), "array_map") in calls
    imported = [e for e in parsed.edges if e.kind == "calls" and e.dst_name == "format_money"]
    assert imported[0].dst_hint == "App\\Support\\format_money"


def test_php_inheritance() -> None:
    parsed = parse_fixture("php")
    assert edges(parsed, "inherits") == {
        (php_ns("OrderService"), "BaseService"),
        (php_ns("OrderService"), "Discountable"),
        (php_ns("OrderService"), "Countable"),
        (php_ns("OrderService"), "Timestamps"),
    }
    resolved = {e.dst_name: e.dst for e in parsed.edges if e.kind == "inherits"}
    assert resolved["Discountable"] == node(parsed, php_ns("Discountable")).index
    assert resolved["Timestamps"] == node(parsed, php_ns("Timestamps")).index


def test_php_imports() -> None:
    parsed = parse_fixture("php")
    hints = import_hints(parsed)
    assert {
        "App\\Contracts\\Repository",
        "Psr\\Log\\LoggerInterface",
        "App\\Support\\format_money",
        "/bootstrap.php",
    } <= hints
    grouped = {e.dst_name for e in parsed.edges if e.kind == "imports"}
    assert {"OrderPlaced", "OrderCancelled", "Repository"} <= grouped


# --- elixir -----------------------------------------------------------------------


def test_elixir_definitions() -> None:
    parsed = parse_fixture("elixir")
    assert definitions(parsed) == {
        ("module", "MyApp.Accounts"),
        ("function", "MyApp.Accounts.get_user!"),
        ("function", "MyApp.Accounts.list_users"),
        ("function", "MyApp.Accounts.authenticate"),
        ("function", "MyApp.Accounts.verify_password"),
        ("function", "MyApp.Accounts.start_session"),
        ("macro", "MyApp.Accounts.with_user"),
        ("module", "MyApp.Accounts.Policy"),
        ("function", "MyApp.Accounts.Policy.can?"),
        ("function", "MyApp.Accounts.Policy.allowed_actions"),
        ("interface", "MyApp.Displayable"),
        ("method", "MyApp.Displayable.display"),
        # `defimpl MyApp.Displayable, for: MyApp.Accounts.User` is Elixir's module
        # MyApp.Displayable.MyApp.Accounts.User.
        ("module", "MyApp.Displayable.MyApp.Accounts.User"),
    } | {("function", n.qualified_name) for n in parsed.nodes if n.start_line == 67}


def test_elixir_defimpl_functions_are_qualified_by_the_impl_module() -> None:
    # The children of a receiver-qualified definition drop its receiver.
    parsed = parse_fixture("elixir")
    display = [n for n in parsed.nodes if n.start_line == 67]
    assert display[0].qualified_name == "MyApp.Displayable.MyApp.Accounts.User.display"


def test_elixir_every_clause_is_a_node() -> None:
    parsed = parse_fixture("elixir")
    clauses = [n for n in parsed.nodes if n.qualified_name == "MyApp.Accounts.Policy.can?"]
    assert [(n.start_line, n.end_line) for n in clauses] == [(55, 55), (56, 56)]


def test_elixir_spans_and_docs() -> None:
    parsed = parse_fixture("elixir")
    authenticate = node(parsed, "MyApp.Accounts.authenticate")
    assert (authenticate.start_line, authenticate.end_line) == (25, 32)
    assert authenticate.signature == "def authenticate(email, password) when is_binary(email)"
    module = node(parsed, "MyApp.Accounts")
    assert (module.start_line, module.end_line) == (1, 60)
    # A `#` comment right above a definition is its doc.
    verify = node(parsed, "MyApp.Accounts.verify_password")
    assert verify.docstring == "Checks the password against the stored hash in constant time."
    # `@doc """..."""` is the doc of the definition below it: like a doc comment, its
    # lines open the definition's code chunk. `@moduledoc` is not read.
    get_user = node(parsed, "MyApp.Accounts.get_user!")
    assert get_user.docstring == "Gets a single user."
    assert (get_user.doc_start_line, get_user.start_line, get_user.end_line) == (15, 18, 18)
    assert module.docstring == ""


def test_elixir_calls() -> None:
    parsed = parse_fixture("elixir")
    assert_local_call(parsed, "MyApp.Accounts.authenticate", "MyApp.Accounts.verify_password")
    assert_local_call(parsed, "MyApp.Accounts.authenticate", "MyApp.Accounts.start_session")
    assert_local_call(parsed, "MyApp.Accounts.with_user", "MyApp.Accounts.get_user!")
    calls = edges(parsed, "calls")
    assert ("MyApp.Accounts.get_user!", "get!") in calls  # Repo.get!(...)
    assert ("MyApp.Accounts.start_session", "insert!") in calls  # |> Repo.insert!()
    assert ("MyApp.Accounts.authenticate", "is_binary") in calls  # guard
    names = {name for _, name in calls}
    # Definition heads, definition forms, attributes and field access are not calls.
    assert not names & {
        "def",
        "defp",
        "defmodule",
        "alias",
        "import",
        "require",
        "use",
        "doc",
        "moduledoc",
        "max_attempts",
        "with",
        "quote",
        "name",
        "email",
    }
    self_calls = [e for e in parsed.edges if e.kind == "calls" and e.src == e.dst]
    assert self_calls == []


def test_elixir_inheritance() -> None:
    parsed = parse_fixture("elixir")
    assert edges(parsed, "inherits") == {
        ("MyApp.Accounts.Policy", "Authorizer"),  # @behaviour
        ("MyApp.Displayable.MyApp.Accounts.User", "Displayable"),  # defimpl
    }


def test_elixir_imports() -> None:
    parsed = parse_fixture("elixir")
    assert {
        "MyApp.Repo",
        "MyApp.Accounts.User",
        "MyApp.Accounts.Session",
        "Ecto.Query",
        "MyApp.Accounts.Token",
        "Logger",
        "MyApp.Context",
    } <= import_hints(parsed)
    generate = [e for e in parsed.edges if e.kind == "calls" and e.dst_name == "generate"]
    assert generate  # AuthToken.generate(...) through `alias ..., as: AuthToken`


# --- haskell ----------------------------------------------------------------------


def test_haskell_definitions() -> None:
    parsed = parse_fixture("haskell")
    assert definitions(parsed) == {
        ("type", "Data.Inventory.Item"),
        ("type", "Data.Inventory.Sku"),
        ("type", "Data.Inventory.Stock"),
        ("interface", "Data.Inventory.Valued"),
        ("method", "Data.Inventory.Valued.value"),
        # `instance Valued Item` qualifies its methods by the instance type.
        ("method", "Data.Inventory.Item.value"),
        ("function", "Data.Inventory.restock"),
        ("function", "Data.Inventory.restock.merge"),
        ("function", "Data.Inventory.totalValue"),
        ("function", "Data.Inventory.totalValue.add"),
        ("function", "Data.Inventory.lineValue"),
        ("function", "Data.Inventory.cheapest"),
        ("function", "Data.Inventory.report"),
    }


def test_haskell_instance_methods_belong_to_the_instance_type() -> None:
    parsed = parse_fixture("haskell")
    value = node(parsed, "Data.Inventory.Item.value")
    assert value.parent == node(parsed, "Data.Inventory.Item").index
    assert (value.start_line, value.end_line) == (32, 32)


def test_haskell_first_equation_only() -> None:
    parsed = parse_fixture("haskell")
    cheapest = [n for n in parsed.nodes if n.name == "cheapest"]
    # One node from the type signature to the last equation.
    assert [(n.start_line, n.end_line) for n in cheapest] == [(49, 51)]
    total = node(parsed, "Data.Inventory.totalValue")
    assert (total.start_line, total.end_line) == (41, 44)  # with its `where` block
    assert total.signature == "totalValue stock = foldl' add 0 (Map.elems stock)"


def test_elixir_doc_and_spec_attributes() -> None:
    # Dev set 2's Elixir spans start at `@doc`; `@spec`/`@impl` are part of the node,
    # `@doc` (however long) is its doc, as a doc comment would be.
    parsed = parse(
        "elixir",
        "defmodule A do\n"
        '  @moduledoc "x"\n'
        "\n"
        '  @doc """\n'
        "  Builds a job.\n"
        "  More text.\n"
        '  """\n'
        '  @doc since: "0.1.0"\n'
        "  @spec new(map()) :: t()\n"
        "  def new(x), do: x\n"
        "\n"
        "  @doc false\n"
        "  @impl true\n"
        "  def init(_), do: :ok\n"
        "\n"
        "  def plain, do: 2\n"
        "end\n",
    )
    found = {
        (n.qualified_name, n.doc_start_line, n.start_line, n.end_line, n.docstring)
        for n in parsed.nodes[2:]
    }
    assert found == {
        ("A.new", 4, 9, 10, "Builds a job.\nMore text."),
        ("A.init", 12, 13, 14, ""),
        ("A.plain", 0, 16, 16, ""),
    }


def test_haskell_pattern_synonyms_and_signature_spans() -> None:
    # shellcheck's AST module defines a hundred pattern synonyms; a function's node
    # starts at its type signature, as dev set 2's checkScript span does.
    parsed = parse(
        "haskell",
        "module ShellCheck.AST where\n"
        "\n"
        "pattern T_Bang id = OuterToken id Inner_T_Bang\n"
        "pattern Zero :: Int\n"
        "pattern Zero = 0\n"
        "pattern Pair a b <- (a, b)\n"
        "pattern T_Assignment id mode var indices value = OuterToken id (Inner mode var)\n"
        "-- | Run the checks.\n"
        "checkScript :: Int -> Int\n"
        "checkScript 0 = 0\n"
        "checkScript n = n\n",
    )
    found = {(n.kind, n.qualified_name, n.start_line, n.end_line) for n in parsed.nodes[1:]}
    assert found == {
        ("constructor", "ShellCheck.AST.T_Bang", 3, 3),
        ("constructor", "ShellCheck.AST.Zero", 5, 5),
        ("constructor", "ShellCheck.AST.Pair", 6, 6),
        ("constructor", "ShellCheck.AST.T_Assignment", 7, 7),
        ("function", "ShellCheck.AST.checkScript", 9, 11),
    }
    check = node(parsed, "ShellCheck.AST.checkScript")
    assert (check.docstring, check.doc_start_line) == ("Run the checks.", 8)


def test_haskell_docs() -> None:
    parsed = parse_fixture("haskell")
    assert node(parsed, "Data.Inventory.Sku").docstring == (
        "Stock keeping unit, unique per warehouse."
    )


def test_haskell_haddock_docs() -> None:
    # `-- |` comments are `haddock` nodes, and a type signature sits between the
    # haddock and the first equation.
    parsed = parse_fixture("haskell")
    assert node(parsed, "Data.Inventory.Valued").docstring == "Things that have a monetary value."
    assert node(parsed, "Data.Inventory.restock").docstring == (
        "Add a quantity of an item to the stock."
    )


@pytest.mark.parametrize(
    ("imports_end", "doc"),
    [
        ("\n-- Checks run on the syntax tree\n", "Checks run on the syntax tree"),
        ("\n\n", ""),
        (" -- for maps\n\n", ""),  # the import line's own comment
    ],
)
def test_haskell_comment_after_the_imports_is_the_first_definitions_doc(
    imports_end: str, doc: str
) -> None:
    # tree-sitter-haskell keeps that comment inside the imports.
    text = (
        f"module A where\n\nimport qualified Data.Map as Map{imports_end}"
        "treeChecks :: [Int]\ntreeChecks = [1]\n\nother :: Int\nother = 2\n"
    )
    parsed = parse("haskell", text)
    assert node(parsed, "A.treeChecks").docstring == doc
    assert node(parsed, "A.other").docstring == ""


def test_haskell_calls() -> None:
    parsed = parse_fixture("haskell")
    assert_local_call(parsed, "Data.Inventory.report", "Data.Inventory.cheapest")
    assert_local_call(parsed, "Data.Inventory.totalValue.add", "Data.Inventory.lineValue")
    calls = edges(parsed, "calls")
    assert ("Data.Inventory.restock", "insertWith") in calls  # Map.insertWith
    assert ("Data.Inventory.report", "forM_") in calls  # forM_ ... $ ...
    hinted = {e.dst_name: e.dst_hint for e in parsed.edges if e.kind == "calls"}
    assert hinted["foldl'"] == "Data.List.foldl'"


def test_haskell_inheritance() -> None:
    parsed = parse_fixture("haskell")
    assert edges(parsed, "inherits") == {
        ("Data.Inventory.Item", "Show"),
        ("Data.Inventory.Item", "Eq"),
        ("Data.Inventory.Sku", "Show"),
        ("Data.Inventory.Sku", "Eq"),
        ("Data.Inventory.Sku", "Ord"),
    }
    parsed = parse("haskell", "module M where\nclass Eq a => Keyed a where\n  key :: a -> Int\n")
    assert edges(parsed, "inherits") == {("M.Keyed", "Eq")}


def test_haskell_imports() -> None:
    parsed = parse_fixture("haskell")
    assert {
        "Data.Map.Strict",
        "Data.List",
        "Data.List.sortOn",
        "Data.List.foldl'",
        "Control.Monad.forM_",
    } <= import_hints(parsed)
    hiding = parse("haskell", "module M where\nimport Prelude hiding (lookup)\n")
    assert import_hints(hiding) == {"Prelude"}


# --- lua --------------------------------------------------------------------------


def test_lua_definitions() -> None:
    parsed = parse_fixture("lua")
    assert definitions(parsed) == {
        (LUA_TABLE_FUNCTION, "M.new"),
        ("function", "is_expired"),
        ("method", "M.get"),
        ("method", "M.set"),
        ("method", "M.evict"),
        ("function", "dump"),
        ("function", "save"),
    }


def test_lua_spans_and_docs() -> None:
    parsed = parse_fixture("lua")
    new = node(parsed, "M.new")
    assert (new.start_line, new.end_line) == (13, 20)
    assert new.docstring.startswith("Create a cache holding at most `size` entries.")
    dump = node(parsed, "dump")
    assert (dump.start_line, dump.end_line) == (51, 53)
    assert dump.signature == "local dump = function(cache)"


def test_lua_calls() -> None:
    parsed = parse_fixture("lua")
    assert_local_call(parsed, "M.get", "is_expired")
    assert_local_call(parsed, "M.get", "M.evict")  # self:evict(key)
    assert_local_call(parsed, "save", "dump")
    calls = edges(parsed, "calls")
    assert ("M.set", "insert") in calls  # table.insert
    assert ("M.evict", "debug") in calls  # log:debug
    assert not {name for _, name in calls} & {"require"}


def test_lua_imports() -> None:
    parsed = parse_fixture("lua")
    assert import_hints(parsed) == {"cjson", "util.clock", "util.log"}


def test_lua_table_fields_and_assignments() -> None:
    text = (
        "local M = {\n  run = function() end,\n}\n"
        "M.stop = function() end\nglobal = function() end\n"
    )
    assert definitions(parse("lua", text)) == {
        ("function", "run"),
        (LUA_TABLE_FUNCTION, "M.stop"),
        ("function", "global"),
    }


# --- bash -------------------------------------------------------------------------


def test_bash_definitions() -> None:
    parsed = parse_fixture("bash")
    assert definitions(parsed) == {
        ("constant", "RELEASES_DIR"),
        ("function", "log"),
        ("function", "die"),
        ("function", "check_deps"),
        ("function", "build_archive"),
        ("function", "upload"),
        ("function", "main"),
    }


def test_bash_spans_and_docs() -> None:
    parsed = parse_fixture("bash")
    log = node(parsed, "log")
    assert (log.start_line, log.end_line) == (11, 13)
    assert log.docstring == "Print a timestamped message to stderr."
    check = node(parsed, "check_deps")
    assert (check.start_line, check.end_line) == (20, 25)
    assert check.signature == "function check_deps"


def test_bash_calls() -> None:
    parsed = parse_fixture("bash")
    assert_local_call(parsed, "main", "build_archive")
    assert_local_call(parsed, "main", "check_deps")  # a command without arguments
    assert_local_call(parsed, "check_deps", "die")  # after `||`
    assert_local_call(parsed, "die", "log")
    calls = edges(parsed, "calls")
    assert ("upload", "rsync") in calls
    assert ("build_archive", "gzip") in calls  # in a pipeline
    assert (parsed.nodes[0].qualified_name, "main") in calls  # the top-level `main "$@"`
    names = {name for _, name in calls}
    assert not names & {"echo", "set", "local", "exit", "source", ".", "command", "readonly"}


def test_bash_imports() -> None:
    parsed = parse_fixture("bash")
    hints = import_hints(parsed)
    assert "./lib/common.sh" in hints
    assert any(h.endswith("/lib/colors.sh") for h in hints)


# --- scripts without an extension ------------------------------------------------------


@pytest.mark.parametrize(
    ("first_line", "language"),
    [
        ("#!/usr/bin/env bash", "bash"),
        ("#!/bin/sh -e", "bash"),
        ("#!/usr/bin/env zsh", "bash"),
        ("#!/usr/bin/env -S python3 -u", "python"),
        ("#!/usr/bin/python3.11", "python"),
        ("#!/usr/bin/env ruby", "ruby"),
        ("#!/usr/bin/env node", "javascript"),
        ("#!/usr/bin/env perl", "text"),  # no grammar: stays text
        ("# not a shebang", "text"),
    ],
)
def test_shebang_names_the_language(first_line: str, language: str) -> None:
    path = "libexec/pyenv-init"
    assert detect_language(path) == "text"
    assert refine_language(path, "text", first_line + "\necho hi\n") == language
    # A path that names its language keeps it.
    assert refine_language("setup.py", "python", "#!/bin/sh\n") == "python"


def test_extensionless_bash_script_is_indexed_as_bash(tmp_path: Path) -> None:
    # pyenv's commands (libexec/pyenv-*) are extensionless Bash scripts: indexed as
    # text they had no nodes, and a span on one of their functions was never hit.
    script = tmp_path / "pyenv-rehash"
    script.write_text(
        "#!/usr/bin/env bash\n"
        "set -e\n"
        "\n"
        "acquire_lock() {\n"
        "  local ret=0\n"
        "  return $ret\n"
        "}\n"
        "\n"
        "acquire_lock\n",
        encoding="utf-8",
    )
    job = FileJob(
        abs_path=str(script),
        path="libexec/pyenv-rehash",
        language=detect_language("libexec/pyenv-rehash"),
        size=script.stat().st_size,
        mtime_ns=script.stat().st_mtime_ns,
        module_path=None,
        settings=IndexSettings(),
    )
    prepared = prepare_file(job)
    assert isinstance(prepared, PreparedFile)
    assert prepared.meta.language == "bash"
    functions = [(n[0], n[2], n[4], n[5]) for n in prepared.rows.nodes[1:]]
    assert functions == [("function", "acquire_lock", 4, 7)]


def test_bash_functions_after_constructs_the_grammar_misreads() -> None:
    # tree-sitter-bash fails on these three (pyenv's python-build has all of them) and
    # its error recovery then swallows every function below.
    text = (
        "#!/usr/bin/env bash\n"
        "parse_options() {\n"
        '  while option="${arg:$index:1}"; do\n'
        "    index=$((index + 1))\n"
        "  done\n"
        "}\n"
        "\n"
        "is_mac() {\n"
        '  [ $# -eq 0 ] || [ "$(osx_version)" "$@" ]\n'
        "}\n"
        "\n"
        "register_shims() {\n"
        "  for file do\n"
        '    register_shim "${file##*/}"\n'
        "  done\n"
        "}\n"
        "\n"
        "install_package_using() {\n"
        '  local package_type="$1"\n'
        '  make_package "$package_type"\n'
        "}\n"
    )
    parsed = parse("bash", text, "plugins/python-build/bin/python-build")
    spans = [(n.name, n.start_line, n.end_line) for n in parsed.nodes[1:]]
    assert spans == [
        ("parse_options", 2, 6),
        ("is_mac", 8, 10),
        ("register_shims", 12, 16),
        ("install_package_using", 18, 21),
    ]
    assert parsed.errors == 0
    # Names, signatures and calls come from the text as written.
    assert node(parsed, "is_mac").signature == "is_mac()"
    calls = edges(parsed, "calls")
    assert ("is_mac", "osx_version") in calls
    assert ("register_shims", "register_shim") in calls
    assert ("install_package_using", "make_package") in calls
