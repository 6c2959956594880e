"""C calls resolved the way the compiler links them: a call to a function a
header declares reaches its definition in the .c file; a `static` function is
file-local (never the callee of a call in another file, unless that file
`#include`s its .c file); code under `#if 0` makes no edge; a header's
prototype behind an API macro is no call; a function-like macro is called.

A small project written to a real folder, indexed by the real indexer (real
tree-sitter grammars) into a real SQLite file; the edges are read back as
`codesift callers/callees` show them (engine graph walk).
"""

from __future__ import annotations

import pytest
from call_workspace import engine_over

from codesift.engine import Engine, GraphQuery

FILES = {
    "include/codec.h": (
        "#ifndef CODEC_H\n#define CODEC_H\n"
        "#define CODEC_API\n"
        "typedef int codec_result;\n"
        "typedef const char codec_state;\n"
        "#define CODEC_MAX(a, b) ((a) > (b) ? (a) : (b))\n"
        "int codec_encode(const char *s);\n"
        "CODEC_API codec_result codec_decode(codec_state* s);\n"
        "int shared_name(void);\n"
        "#endif\n"
    ),
    "src/encode.c": (
        '#include "codec.h"\n\n'
        "static int helper(int x) { return x; }\n\n"
        "static int only_here(void) { return 7; }\n\n"
        "static int shared_name(void) { return 1; }\n\n"
        "int codec_encode(const char *s) {\n"
        "#if 0\n"
        "    legacy_encode(s);\n"
        "#endif\n"
        "    return CODEC_MAX(helper(1), shared_name());\n"
        "}\n"
    ),
    "src/decode.c": (
        '#include "codec.h"\n\n'
        "static int helper(int x) { return -x; }\n\n"
        "codec_result codec_decode(codec_state* s) {\n"
        "    return helper(2) + codec_encode(s);\n"
        "}\n"
    ),
    "src/util.c": '#include "codec.h"\n\nint shared_name(void) { return 2; }\n',
    "src/legacy.c": "int legacy_encode(const char *s) { return 0; }\n",
    "src/main.c": (
        '#include "codec.h"\n\n'
        "int main(void) {\n"
        '    return helper(3) + only_here() + shared_name() + codec_decode("x");\n'
        "}\n"
    ),
    "src/bundle.c": (
        '#include "encode.c"\n\nint bundle_entry(void) {\n    return only_here();\n}\n'
    ),
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    return engine_over(tmp_path_factory, "clang", FILES)


def callees(engine: Engine, name: str, path: str) -> dict[str, str | None]:
    """`path:name` of each callee -> the edge's confidence."""
    walk = engine.graph(name, GraphQuery(direction="callees", depth=1))
    where = {s.node.id: f"{s.node.path}:{s.node.name}" for s in walk.nodes}
    (root,) = [r for r in walk.roots if where[r] == f"{path}:{name}"]
    return {
        where[e.target]: e.confidence
        for e in walk.edges
        if e.source == root and e.target is not None
    }


def callers(engine: Engine, name: str, path: str) -> set[str]:
    walk = engine.graph(name, GraphQuery(direction="callers", depth=1))
    where = {s.node.id: f"{s.node.path}:{s.node.name}" for s in walk.nodes}
    (root,) = [r for r in walk.roots if where[r] == f"{path}:{name}"]
    return {where[e.source] for e in walk.edges if e.target == root}


def test_a_header_declared_function_reaches_its_definition(engine: Engine) -> None:
    found = callees(engine, "codec_decode", "src/decode.c")
    assert found["src/encode.c:codec_encode"] == "unique"
    assert "include/codec.h:codec_encode" not in found


def test_a_static_function_is_file_local(engine: Engine) -> None:
    # Each file's own static helper, by the file's scope.
    assert callees(engine, "codec_decode", "src/decode.c")["src/decode.c:helper"] == "scope"
    assert callees(engine, "codec_encode", "src/encode.c")["src/encode.c:helper"] == "scope"
    found = callees(engine, "main", "src/main.c")
    # only_here is static in encode.c: main.c cannot call it (the name alone would).
    assert "src/encode.c:only_here" not in found
    assert not any(name.endswith(":helper") for name in found)
    # shared_name: static in encode.c, extern in util.c: main.c reaches util.c's.
    assert found["src/util.c:shared_name"] == "unique"
    assert "src/encode.c:shared_name" not in found
    assert callers(engine, "only_here", "src/encode.c") == {"src/bundle.c:bundle_entry"}


def test_a_file_that_includes_a_c_file_sees_its_statics(engine: Engine) -> None:
    assert callees(engine, "bundle_entry", "src/bundle.c") == {"src/encode.c:only_here": "unique"}


def test_code_under_if_0_makes_no_edge(engine: Engine) -> None:
    assert "src/legacy.c:legacy_encode" not in callees(engine, "codec_encode", "src/encode.c")
    assert callers(engine, "legacy_encode", "src/legacy.c") == set()


def test_a_prototype_behind_an_api_macro_is_no_call(engine: Engine) -> None:
    assert callers(engine, "codec_decode", "src/decode.c") == {"src/main.c:main"}


def test_a_function_like_macro_is_called(engine: Engine) -> None:
    found = callees(engine, "codec_encode", "src/encode.c")
    assert found["include/codec.h:CODEC_MAX"] == "unique"
    assert found["src/encode.c:shared_name"] == "scope"
