"""Query files for systems languages: go, rust, c, cpp, zig, swift.

Each language has a fixture in tests/fixtures/languages/<language>/ and is
checked for its definitions (kind and qualified name), spans, doc comments,
locally resolved calls, inheritance, imports and recovery from syntax errors.
The last section covers language-independent extractor behaviour (scopes,
namespaces, import paths) that these languages rely on.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from codesift.parsing.extractor import extract
from codesift.parsing.grammars import query_for
from codesift.parsing.languages import refine_language, spec_for
from codesift.parsing.model import ParsedEdge, ParsedFile, ParsedNode

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "languages"

FIXTURE_FILES = {
    "go": "go/cache.go",
    "rust": "rust/shapes.rs",
    "c": "c/ringbuf.c",
    "cpp": "cpp/scene.cpp",
    "zig": "zig/stack.zig",
    "swift": "swift/Inventory.swift",
}
LANGUAGES = tuple(FIXTURE_FILES)


def parse_source(language: str, text: str, rel_path: str | None = None) -> ParsedFile:
    spec = spec_for(language)
    assert spec is not None
    return extract(text, rel_path or f"snippet.{language}", spec)


def parse_fixture(language: str) -> ParsedFile:
    rel = FIXTURE_FILES[language]
    return parse_source(language, (FIXTURES / rel).read_text(encoding="utf-8"), rel)


def definitions(parsed: ParsedFile) -> set[tuple[str, str]]:
    return {(n.kind, n.qualified_name) for n in parsed.nodes[1:]}


def nodes_named(parsed: ParsedFile, qualified_name: str) -> list[ParsedNode]:
    return [n for n in parsed.nodes if n.qualified_name == qualified_name]


def the_node(parsed: ParsedFile, qualified_name: str) -> ParsedNode:
    found = nodes_named(parsed, qualified_name)
    assert len(found) == 1, f"{qualified_name}: {found}"
    return found[0]


def edges_of(parsed: ParsedFile, kind: str) -> list[ParsedEdge]:
    return [e for e in parsed.edges if e.kind == kind]


def edge_triples(parsed: ParsedFile, kind: str) -> set[tuple[str, str, str | None]]:
    """(source qualified name, target name as written, resolved target or None)."""
    return {
        (
            parsed.nodes[e.src].qualified_name,
            e.dst_name,
            parsed.nodes[e.dst].qualified_name if e.dst is not None else None,
        )
        for e in edges_of(parsed, kind)
    }


def import_hints(parsed: ParsedFile) -> set[str]:
    return {e.dst_hint for e in edges_of(parsed, "imports")}


# --- every language -----------------------------------------------------------


@pytest.mark.parametrize("language", LANGUAGES)
def test_query_compiles(language: str) -> None:
    assert query_for(language).pattern_count > 0


@pytest.mark.parametrize("language", LANGUAGES)
def test_fixture_parses_without_errors(language: str) -> None:
    parsed = parse_fixture(language)
    assert parsed.errors == 0
    assert parsed.language == language
    assert parsed.nodes[0].kind == "module"


EXPECTED_DEFINITIONS: dict[str, set[tuple[str, str]]] = {
    "go": {
        ("interface", "cache.Clock"),
        ("method", "cache.Clock.Now"),
        ("struct", "cache.Entry"),
        ("struct", "cache.Store"),
        ("type", "cache.Key"),
        ("type", "cache.Hook"),
        ("function", "cache.NewStore"),
        ("method", "cache.Store.Get"),
        ("method", "cache.Store.Put"),
        ("method", "cache.Store.evictOne"),
        ("method", "cache.Store.String"),
        ("function", "cache.expired"),
    },
    "rust": {
        ("trait", "Shape"),
        ("method", "Shape::area"),
        ("method", "Shape::describe"),
        ("struct", "Circle"),
        ("enum", "Kind"),
        ("type", "Registry"),
        ("constant", "UNIT"),
        ("macro", "square"),
        ("method", "Circle::new"),
        ("method", "Circle::unit"),
        ("method", "Circle::area"),
        ("method", "Circle::fmt"),
        ("function", "clamp"),
        ("function", "total_area"),
        ("function", "register"),
    },
    "c": {
        ("macro", "RB_WRAP"),
        ("struct", "rb_slot"),
        ("struct", "ringbuf_t"),
        ("union", "rb_word"),
        ("enum", "rb_status"),
        ("type", "rb_free_fn"),
        ("function", "clamp_capacity"),
        ("function", "rb_new"),
        ("function", "rb_push"),
        ("function", "rb_free"),
    },
    "cpp": {
        ("macro", "SCENE_CHECK"),
        ("namespace", "scene"),
        ("class", "scene::Drawable"),
        ("method", "scene::Drawable::Drawable"),
        ("method", "scene::Drawable::~Drawable"),
        ("method", "scene::Drawable::draw"),
        ("method", "scene::Drawable::name"),
        ("struct", "scene::Color"),
        ("enum", "scene::Layer"),
        ("type", "scene::DrawList"),
        ("class", "scene::Sprite"),
        ("method", "scene::Sprite::Sprite"),
        ("method", "scene::Sprite::draw"),
        ("method", "scene::Sprite::tint"),
        ("function", "layer_index"),
        ("function", "draw_all"),
    },
    "zig": {
        ("type", "Error"),
        ("enum", "Mode"),
        ("union", "Slot"),
        ("struct", "Stack"),
        ("method", "Stack.init"),
        ("method", "Stack.push"),
        ("method", "Stack.pop"),
        ("method", "Stack.deinit"),
        ("function", "sum"),
        ("function", "main"),
    },
    "swift": {
        ("interface", "Stockable"),
        ("method", "Stockable.unitPrice"),
        ("enum", "Category"),
        ("struct", "Item"),
        ("method", "Item.unitPrice"),
        ("class", "Inventory"),
        ("constructor", "Inventory.init"),
        ("method", "Inventory.add"),
        ("method", "Inventory.quantity"),
        ("method", "Inventory.notifyIfLow"),
        ("method", "Inventory.totalValue"),
        ("type", "SKU"),
        ("function", "makeInventory"),
    },
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_definitions(language: str) -> None:
    assert definitions(parse_fixture(language)) == EXPECTED_DEFINITIONS[language]


# (qualified name, start line, end line), 1-based inclusive.
EXPECTED_SPANS: dict[str, list[tuple[str, int, int]]] = {
    "go": [("cache.Store.Get", 44, 52), ("cache.Entry", 17, 21), ("cache.Key", 33, 33)],
    "rust": [("Circle::new", 38, 40), ("Circle", 16, 19), ("square", 30, 34)],
    "c": [("rb_new", 39, 47), ("ringbuf_t", 14, 19), ("rb_slot", 9, 12)],
    "cpp": [("scene::Drawable", 13, 24), ("scene", 10, 55), ("draw_all", 62, 68)],
    "zig": [("Stack", 15, 41), ("Stack.init", 21, 24), ("sum", 43, 49)],
    "swift": [("Inventory", 27, 50), ("Inventory.init", 31, 34), ("makeInventory", 62, 64)],
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_spans(language: str) -> None:
    parsed = parse_fixture(language)
    for qname, start, end in EXPECTED_SPANS[language]:
        node = the_node(parsed, qname)
        assert (node.start_line, node.end_line) == (start, end), qname


EXPECTED_DOCS: dict[str, list[tuple[str, str]]] = {
    "go": [
        ("cache.Store.Get", "Get returns the value stored under key, if it has not expired."),
        ("cache.Store", "Store is a size-bounded cache safe for concurrent use."),
        # A spec inside a `type ( ... )` group keeps its own comment.
        ("cache.Key", "Key identifies an entry."),
    ],
    "rust": [
        # The comment sits above a #[derive] attribute.
        ("Circle", "A circle centred on the origin."),
        ("Circle::new", "Makes a circle; negative radii are clamped to zero."),
        ("Shape", "Anything with an area."),
    ],
    "c": [
        ("rb_slot", "One slot of the buffer."),
        (
            "rb_new",
            "Allocate a ring buffer with room for at least `capacity` items.\n"
            "Returns NULL when out of memory.",
        ),
    ],
    "cpp": [
        ("scene::Drawable", "Base class of everything that can be drawn."),
        # Above the `template <typename T>` line.
        ("scene::Sprite", "An image drawn at a fixed position."),
        ("draw_all", "Draws every item, background first."),
    ],
    "zig": [
        ("Stack", "A bounded stack of integers backed by an allocator."),
        ("Stack.init", "Creates a stack that can hold `cap` items."),
    ],
    "swift": [
        ("Stockable", "Something that can be counted in stock."),
        ("Inventory", "Keeps quantities per item and reports low stock."),
    ],
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_doc_comments(language: str) -> None:
    parsed = parse_fixture(language)
    for qname, doc in EXPECTED_DOCS[language]:
        assert the_node(parsed, qname).docstring == doc, qname


# (caller, callee name, resolved callee): callees defined in the same file.
EXPECTED_LOCAL_CALLS: dict[str, list[tuple[str, str, str]]] = {
    "go": [
        ("cache.Store.Get", "expired", "cache.expired"),
        ("cache.Store.Put", "evictOne", "cache.Store.evictOne"),
    ],
    "rust": [
        ("Circle::new", "clamp", "clamp"),
        ("Circle::unit", "new", "Circle::new"),
    ],
    "c": [
        ("rb_new", "clamp_capacity", "clamp_capacity"),
        ("rb_push", "RB_WRAP", "RB_WRAP"),
    ],
    "cpp": [
        ("draw_all", "layer_index", "layer_index"),
    ],
    "zig": [
        ("sum", "pop", "Stack.pop"),
        ("main", "sum", "sum"),
        ("main", "init", "Stack.init"),
    ],
    "swift": [
        ("Inventory.add", "notifyIfLow", "Inventory.notifyIfLow"),
        ("Inventory.notifyIfLow", "quantity", "Inventory.quantity"),
    ],
}

# Calls to names defined elsewhere stay unresolved.
EXPECTED_EXTERNAL_CALLS: dict[str, list[tuple[str, str]]] = {
    "go": [("cache.Store.String", "Sprintf"), ("cache.expired", "After")],
    "rust": [("clamp", "max"), ("register", "insert")],
    "c": [("rb_push", "memcpy"), ("rb_free", "free")],
    "cpp": [("scene::Sprite::draw", "render"), ("draw_all", "draw")],
    "zig": [("Stack.init", "alloc"), ("Stack.deinit", "free")],
    "swift": [("Inventory.notifyIfLow", "post"), ("Inventory.totalValue", "reduce")],
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_calls(language: str) -> None:
    calls = edge_triples(parse_fixture(language), "calls")
    for caller, callee, resolved in EXPECTED_LOCAL_CALLS[language]:
        assert (caller, callee, resolved) in calls
    for caller, callee in EXPECTED_EXTERNAL_CALLS[language]:
        assert (caller, callee, None) in calls


EXPECTED_INHERITS: dict[str, list[tuple[str, str, str | None]]] = {
    "go": [("cache.Store", "Mutex", None), ("cache.Clock", "Stringer", None)],
    "rust": [("Shape", "Display", None)],
    "c": [],
    "cpp": [("scene::Sprite", "Drawable", "scene::Drawable")],
    "zig": [],
    "swift": [
        ("Item", "Stockable", "Stockable"),
        ("Item", "Hashable", None),
        ("Inventory", "NSObject", None),
        ("Stockable", "Identifiable", None),
    ],
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_inherits(language: str) -> None:
    inherits = edge_triples(parse_fixture(language), "inherits")
    for triple in EXPECTED_INHERITS[language]:
        assert triple in inherits
    if not EXPECTED_INHERITS[language]:
        assert inherits == set()


EXPECTED_IMPORTS: dict[str, set[str]] = {
    "go": {"fmt", "sync", "time"},
    "rust": {"std::collections::HashMap", "std::fmt", "std::fmt::Display"},
    "c": {"stdlib.h", "string.h", "ringbuf.h"},
    "cpp": {"memory", "string", "vector", "scene/node.hpp", "std::string"},
    "zig": {"std", "log.zig"},
    "swift": {"Foundation", "Swift.Array"},
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_imports(language: str) -> None:
    parsed = parse_fixture(language)
    assert import_hints(parsed) == EXPECTED_IMPORTS[language]
    assert all(e.src == 0 for e in edges_of(parsed, "imports"))


# Each snippet has a definition before and after a broken one.
BROKEN_SOURCES: dict[str, tuple[str, set[str]]] = {
    "go": (
        "package broken\n\nfunc Good() int { return 1 }\n\n"
        "func Bad(x int {\n\ty := \n}\n\ntype After struct{ A int }\n",
        {"broken.Good", "broken.After"},
    ),
    "rust": (
        "fn good() -> i32 { 1 }\n\nfn bad(x: i32 -> {\n    let y = ;\n}\n\n"
        "struct After { a: i32 }\n",
        {"good", "After"},
    ),
    "c": (
        "int good(void) { return 1; }\n\nint bad(int x {\n    return x +;\n}\n\n"
        "struct after { int a; };\n",
        {"good", "after"},
    ),
    "cpp": (
        "int good() { return 1; }\n\nclass Broken {\n    void f( { }\n};\n\n"
        "class After { public: void g() {} };\n",
        {"good", "After", "After::g"},
    ),
    "zig": (
        "fn good() i32 { return 1; }\n\nfn bad(x: i32 { return x + ; }\n\n"
        "const After = struct { a: i32 };\n",
        {"good", "After"},
    ),
    "swift": (
        "func good() -> Int { 1 }\n\nfunc bad(x: Int -> { let y = }\n\n"
        "struct After { var a: Int }\n",
        {"good", "After"},
    ),
}


@pytest.mark.parametrize("language", LANGUAGES)
def test_syntax_error_keeps_parsable_definitions(language: str) -> None:
    source, expected = BROKEN_SOURCES[language]
    parsed = parse_source(language, source)
    assert parsed.errors > 0
    assert expected <= {n.qualified_name for n in parsed.nodes}


# --- language specifics ---------------------------------------------------------


def test_go_method_receiver_parents_and_qualifies() -> None:
    parsed = parse_fixture("go")
    store = the_node(parsed, "cache.Store")
    for name in ("cache.Store.Get", "cache.Store.evictOne", "cache.Store.String"):
        assert the_node(parsed, name).parent == store.index
    assert the_node(parsed, "cache.Clock.Now").parent == the_node(parsed, "cache.Clock").index
    assert the_node(parsed, "cache.Store.Get").signature == (
        "func (s *Store) Get(key string) ([]byte, bool)"
    )


def test_go_generic_receiver_and_aliased_imports() -> None:
    parsed = parse_source(
        "go",
        'package box\n\nimport (\n\tnh "net/http"\n\t_ "embed"\n)\n\n'
        "type Pair[K comparable, V any] struct{ k K; v V }\n\n"
        "func (p *Pair[K, V]) Key() K { return p.k }\n\n"
        'func use() { _ = Map[int](nil); nh.Get("x") }\n',
    )
    assert ("method", "box.Pair.Key") in definitions(parsed)
    assert the_node(parsed, "box.Pair.Key").parent == the_node(parsed, "box.Pair").index
    assert import_hints(parsed) == {"net/http", "embed"}
    calls = {e.dst_name for e in edges_of(parsed, "calls")}
    assert {"Map", "Get"} <= calls


def test_rust_enum_constructors_are_not_calls() -> None:
    parsed = parse_source(
        "rust",
        "fn f(x: i32) -> Result<Option<i32>, ()> {\n"
        "    let v = Vec::<i32>::with_capacity(2);\n"
        "    g::<u8>();\n    Ok(Some(x))\n}\n",
    )
    calls = {e.dst_name for e in edges_of(parsed, "calls")}
    assert calls == {"with_capacity", "g"}


def test_rust_use_forms() -> None:
    parsed = parse_source(
        "rust",
        "use std::io::{self, Read, Write as W};\nuse serde;\nuse a::b as c;\n"
        "use crate::prelude::*;\nextern crate alloc;\n",
    )
    assert import_hints(parsed) == {
        "std::io",
        "std::io::Read",
        "std::io::Write",
        "serde",
        "a::b",
        "crate::prelude",
        "alloc",
    }


def test_c_pointer_returning_and_typedef_forms() -> None:
    parsed = parse_source(
        "c",
        "typedef struct node { int v; } node_t;\ntypedef unsigned long size;\n"
        "char **split(const char *s) { return 0; }\n"
        "static int fwd(int a);\n",
    )
    # `typedef struct tag {...} name;` is one struct node named by its tag;
    # a prototype outside a header is no definition.
    assert definitions(parsed) == {
        ("struct", "node"),
        ("type", "size"),
        ("function", "split"),
    }


def test_c_header_prototypes_are_functions_with_their_doc() -> None:
    parsed = parse_source(
        "c",
        "/** Compresses src into dst. */\n"
        "API size_t lib_compress(void *dst, const void *src);\n"
        "char **lib_split(const char *s);\n"
        "int lib_inline(int a);\n"
        "static inline int lib_inline(int a) { return a; }\n"
        "DECLARE_THING(widget);\n",
        "include/lib.h",
    )
    # The header's API: each prototype once, none where the header defines it, and no
    # all-caps macro call.
    assert definitions(parsed) == {
        ("function", "lib_compress"),
        ("function", "lib_split"),
        ("function", "lib_inline"),
    }
    compress = next(n for n in parsed.nodes if n.name == "lib_compress")
    assert compress.docstring == "Compresses src into dst."
    inline = [n for n in parsed.nodes if n.name == "lib_inline"]
    assert [(n.start_line, n.end_line) for n in inline] == [(5, 5)]


def test_cpp_header_prototypes_beside_class_methods() -> None:
    parsed = parse_source(
        "cpp",
        "namespace fmt {\n"
        "// Formats the arguments.\n"
        "std::string format(const char *spec);\n"
        "class Writer {\n public:\n  void flush();\n};\n"
        "}\n",
        "fmt/core.hpp",
    )
    assert definitions(parsed) == {
        ("namespace", "fmt"),
        ("function", "fmt::format"),
        ("class", "fmt::Writer"),
        ("method", "fmt::Writer::flush"),
    }
    assert next(n for n in parsed.nodes if n.name == "format").docstring == (
        "Formats the arguments."
    )


def test_cpp_out_of_class_definitions_join_their_class() -> None:
    parsed = parse_fixture("cpp")
    sprite = the_node(parsed, "scene::Sprite")
    draws = nodes_named(parsed, "scene::Sprite::draw")
    # The in-class declaration and the out-of-class definition.
    assert [(n.start_line, n.end_line) for n in draws] == [(39, 39), (50, 53)]
    assert all(n.parent == sprite.index for n in draws)
    calls = edge_triples(parse_fixture("cpp"), "calls")
    assert ("scene::Sprite::draw", "tint", "scene::Sprite::tint") in calls
    assert ("scene::Sprite::draw", "SCENE_CHECK", "SCENE_CHECK") in calls


def test_cpp_exported_and_out_of_class_types() -> None:
    # leveldb's public headers: an export macro between `class` and the name made
    # the grammar read a function definition, and the class had no node.
    parsed = parse_source(
        "cpp",
        "namespace leveldb {\n"
        "class LEVELDB_EXPORT Cache {\n"
        " public:\n"
        "  virtual ~Cache();\n"
        "};\n"
        "struct LEVELDB_EXPORT Options {\n"
        "  int x = 1;\n"
        "};\n"
        "class VersionSet { int a; };\n"
        "class VersionSet::Builder {\n"
        "  void Apply() {}\n"
        "};\n"
        "}\n",
        "include/leveldb/cache.h",
    )
    assert definitions(parsed) == {
        ("namespace", "leveldb"),
        ("class", "leveldb::Cache"),
        ("struct", "leveldb::Options"),
        ("class", "leveldb::VersionSet"),
        ("class", "leveldb::VersionSet::Builder"),
        ("method", "leveldb::VersionSet::Builder::Apply"),
    }
    cache = the_node(parsed, "leveldb::Cache")
    assert (cache.start_line, cache.end_line) == (2, 5)
    builder = the_node(parsed, "leveldb::VersionSet::Builder")
    assert builder.parent == the_node(parsed, "leveldb::VersionSet").index
    assert (builder.start_line, builder.end_line) == (10, 12)


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("namespace leveldb {\nclass DB;\n}\n", "cpp"),
        ("#include <string>\nint f();\n", "cpp"),
        ("template <typename T>\nT id(T x);\n", "cpp"),
        ("class Iterator {\n public:\n  Iterator();\n};\n", "cpp"),
        # A C header that C++ can include stays C.
        ('#ifdef __cplusplus\nextern "C" {\n#endif\ntypedef struct jv jv;\n', "c"),
        ("struct jv_refcnt { int count; };\nint jv_get_refcnt(jv);\n", "c"),
    ],
)
def test_headers_written_in_cpp_are_cpp(text: str, language: str) -> None:
    assert refine_language("include/x.h", "c", text) == language
    # Only `.h` is ambiguous.
    assert refine_language("src/x.c", "c", text) == "c"


def test_zig_test_blocks_are_skipped() -> None:
    parsed = parse_fixture("zig")
    assert not any("push then pop" in n.name for n in parsed.nodes)
    # Calls in a test block belong to the file.
    module = parsed.nodes[0].qualified_name
    assert (module, "expectEqual", None) in edge_triples(parsed, "calls")


def test_swift_subscripts_are_not_calls() -> None:
    parsed = parse_source(
        "swift",
        'func f(counts: [String: Int]) {\n  counts["a", default: 0] += 1\n'
        '  let x = counts["b"] ?? 0\n  g(x)\n  run { 1 }\n}\n',
    )
    assert {e.dst_name for e in edges_of(parsed, "calls")} == {"g", "run"}


# --- extractor behaviour for scopes, namespaces and paths -----------------------------------------


@pytest.mark.parametrize(
    ("language", "source", "qname"),
    [
        ("rust", "mod inner {\n    pub fn helper() {}\n}\n", "inner::helper"),
        ("cpp", "namespace geo {\nint area() { return 0; }\n}\n", "geo::area"),
    ],
)
def test_functions_in_namespaces_stay_functions(language: str, source: str, qname: str) -> None:
    assert the_node(parse_source(language, source), qname).kind == "function"


@pytest.mark.parametrize(
    ("language", "member", "owner"),
    [("rust", "Circle::new", "Circle"), ("swift", "Inventory.totalValue", "Inventory")],
)
def test_scope_members_belong_to_their_type(language: str, member: str, owner: str) -> None:
    parsed = parse_fixture(language)
    assert the_node(parsed, member).parent == the_node(parsed, owner).index


@pytest.mark.parametrize(
    ("language", "triple"),
    [
        ("rust", ("Circle", "Shape", "Shape")),
        ("swift", ("Inventory", "CustomStringConvertible", None)),
    ],
)
def test_scope_conformance_is_inherits(language: str, triple: tuple[str, str, str | None]) -> None:
    assert triple in edge_triples(parse_fixture(language), "inherits")


@pytest.mark.parametrize(
    ("language", "names"),
    [("c", {"stdlib.h", "string.h", "ringbuf.h"}), ("zig", {"std", "log.zig"})],
)
def test_import_paths_keep_their_file_name(language: str, names: set[str]) -> None:
    assert {e.dst_name for e in edges_of(parse_fixture(language), "imports")} == names


def test_swift_operators_subscripts_deinit_and_associated_types() -> None:
    parsed = parse_source(
        "swift",
        "struct Name {\n"
        "  static func < (lhs: Name, rhs: Name) -> Bool { true }\n"
        "  func plain() -> Bool { true }\n"
        "  subscript(position: Int) -> Int {\n"
        "    1\n"
        "  }\n"
        "  deinit {\n"
        "  }\n"
        "}\n"
        "protocol Parsable {\n"
        "  associatedtype Contained\n"
        "}\n",
    )
    found = {(n.kind, n.qualified_name, n.start_line, n.end_line) for n in parsed.nodes[1:]}
    assert found == {
        ("struct", "Name", 1, 9),
        ("method", "Name.<", 2, 2),
        ("method", "Name.plain", 3, 3),
        ("method", "Name.subscript", 4, 6),
        ("method", "Name.deinit", 7, 8),
        ("interface", "Parsable", 10, 12),
        ("type", "Parsable.Contained", 11, 11),
    }
    assert the_node(parsed, "Name.<").signature == "static func < (lhs: Name, rhs: Name) -> Bool"


def test_zig_types_made_by_type_functions_and_error_unions() -> None:
    # libxev's main.zig defines its backends as `pub const Epoll = Xev(.epoll, ...)`;
    # aliases (`xev.Loop`), imports and value calls are not definitions.
    parsed = parse_source(
        "zig",
        'const std = @import("std");\n'
        "pub const Loop = xev.Loop;\n"
        "/// Runtime-selected backend.\n"
        "pub const Dynamic = DynamicXev(Backend.candidates());\n"
        'pub const ThreadPool = @import("ThreadPool.zig");\n'
        "const x = compute(3);\n"
        "const Other = Make(1).Inner;\n"
        "pub const CtlError = error{\n"
        "    Busy,\n"
        "} || posix.UnexpectedError;\n"
        "pub const Stack = struct {\n"
        "    const Queue = IntrusiveQueue(Completion);\n"
        "    pub fn push(self: *Stack) void {}\n"
        "};\n",
    )
    found = {(n.kind, n.qualified_name, n.start_line, n.end_line) for n in parsed.nodes[1:]}
    assert found == {
        ("type", "Dynamic", 4, 4),
        ("type", "CtlError", 8, 10),
        ("struct", "Stack", 11, 14),
        ("type", "Stack.Queue", 12, 12),
        ("method", "Stack.push", 13, 13),
    }
    assert the_node(parsed, "Dynamic").docstring == "Runtime-selected backend."


def test_rust_statics_are_constants() -> None:
    parsed = parse_source(
        "rust",
        'static MANIFEST: &str = "pkg/windows/Manifest.xml";\nconst MAX: usize = 4;\n',
    )
    assert definitions(parsed) == {("constant", "MANIFEST"), ("constant", "MAX")}


def test_cpp_nested_struct_has_the_comment_above_it_as_its_doc() -> None:
    parsed = parse_source(
        "cpp",
        "struct DBImpl::CompactionState {\n"
        "  // Files produced by compaction\n"
        "  struct Output {\n    uint64_t number;\n  };\n"
        "  int total;  // the count\n"
        "  struct Next {\n    int z;\n  };\n"
        "};\n",
        "db/db_impl.cc",
    )
    docs = {n.qualified_name: n.docstring for n in parsed.nodes}
    assert docs["DBImpl::CompactionState::Output"] == "Files produced by compaction"
    assert docs["DBImpl::CompactionState::Next"] == ""  # the line above's own comment


def test_cpp_annotation_macros_in_a_class_body_are_not_methods() -> None:
    # leveldb's thread-safety annotations read as method declarations named
    # GUARDED_BY / EXCLUSIVE_LOCKS_REQUIRED (72 bogus nodes).
    parsed = parse_source(
        "cpp",
        "class DBImpl {\n"
        "  void MaybeScheduleCompaction() EXCLUSIVE_LOCKS_REQUIRED(mutex_);\n"
        "  Status bg_error_ GUARDED_BY(mutex_);\n"
        "  DBImpl();\n"
        "  virtual Status Get(const Slice& key) = 0;\n"
        "};\n",
        "db/db_impl.h",
    )
    assert definitions(parsed) == {
        ("class", "DBImpl"),
        ("method", "DBImpl::MaybeScheduleCompaction"),
        ("method", "DBImpl::DBImpl"),
        ("method", "DBImpl::Get"),
    }
