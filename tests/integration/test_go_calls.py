"""Go calls resolved the way the language resolves them, not by name alone:
package qualifiers through the file's imports (aliased too), the method's
receiver and its type, embedded fields (Go's `super`), typed parameters and
locals, fields, other files of the package, the standard library and builtins
never linked to project namesakes; each edge with its confidence; a walk that
stops says so. (Go has no decorators.)

A small module written to a real folder, indexed by the real indexer (real
tree-sitter grammars) into a real SQLite file; the edges are read back as
`codesift callers/callees` show them (engine graph walk).
"""

from __future__ import annotations

import pytest
from call_workspace import engine_over

from codesift.engine import Engine, GraphQuery

FILES = {
    "go.mod": "module example.com/shop\n\ngo 1.21\n",
    "util/format.go": (
        "package util\n\n"
        'import "strings"\n\n'
        "func Slugify(s string) string {\n\treturn strings.ToLower(s)\n}\n\n"
        "func Error(msg string) string {\n\treturn msg\n}\n"
    ),
    "store/base.go": (
        "package store\n\n"
        "type Base struct{}\n\n"
        "func (b *Base) Get(k string) string {\n\treturn k\n}\n"
    ),
    "store/cache.go": (
        "package store\n\n"
        "type Cache struct{ ch chan int }\n\n"
        'func (c *Cache) Get(k string) string {\n\treturn ""\n}\n\n'
        "func (c *Cache) close() {}\n\n"
        "func newCache() *Cache {\n\treturn &Cache{}\n}\n"
    ),
    "store/store.go": (
        "package store\n\n"
        "import (\n"
        '\t"net/http"\n\n'
        '\tu "example.com/shop/util"\n'
        ")\n\n"
        "type Store struct {\n"
        "\tBase\n"
        "\tcache *Cache\n"
        "}\n\n"
        "func (s *Store) Name(k string) string {\n\treturn u.Slugify(s.Get(k))\n}\n\n"
        "func (s *Store) Get(k string) string {\n\treturn s.Base.Get(k)\n}\n\n"
        "func (s *Store) Lookup(k string) string {\n\treturn s.cache.Get(k)\n}\n\n"
        'func (s *Store) Fail(w http.ResponseWriter) {\n\thttp.Error(w, "no", 500)\n}\n\n'
        "func (s *Store) Stop(ch chan int) {\n\tclose(ch)\n}\n\n"
        "func (s *Store) Fresh() *Cache {\n\treturn newCache()\n}\n\n"
        "func Total(st *Store, k string) string {\n"
        "\tc := &Cache{}\n"
        "\tc.Get(k)\n"
        "\treturn st.Name(k)\n"
        "}\n"
    ),
    "main.go": (
        "package main\n\n"
        'import "example.com/shop/store"\n\n'
        'func main() {\n\tstore.Total(nil, "k")\n}\n'
    ),
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    return engine_over(tmp_path_factory, "golang", FILES)


def callees(engine: Engine, qualified_name: str) -> dict[str, str | None]:
    """Callee qualified name -> the edge's confidence."""
    walk = engine.graph(qualified_name, GraphQuery(direction="callees", depth=1))
    (root,) = walk.roots
    names = {s.node.id: s.node.qualified_name for s in walk.nodes}
    return {
        names[e.target]: e.confidence
        for e in walk.edges
        if e.source == root and e.target is not None
    }


def callers(engine: Engine, qualified_name: str) -> set[str]:
    walk = engine.graph(qualified_name, GraphQuery(direction="callers", depth=1))
    (root,) = walk.roots
    names = {s.node.id: s.node.qualified_name for s in walk.nodes}
    return {names[e.source] for e in walk.edges if e.target == root}


def test_package_qualifiers_resolve_through_the_imports(engine: Engine) -> None:
    found = callees(engine, "store.Store.Name")
    assert found["util.Slugify"] == "import"  # u "example.com/shop/util"
    assert callees(engine, "main.main") == {"store.Total": "import"}


def test_receiver_calls_reach_the_receivers_type(engine: Engine) -> None:
    found = callees(engine, "store.Store.Name")
    assert found["store.Store.Get"] == "type"
    assert "store.Cache.Get" not in found and "store.Base.Get" not in found


def test_an_embedded_field_reaches_the_embedded_types_method(engine: Engine) -> None:
    assert callees(engine, "store.Store.Get") == {"store.Base.Get": "import"}


def test_typed_receivers_and_fields_reach_their_type(engine: Engine) -> None:
    found = callees(engine, "store.Total")
    assert found["store.Store.Name"] == "type"  # st *Store
    assert "store.Cache.Get" in found  # c := &Cache{}, in another file of the package
    assert set(callees(engine, "store.Store.Lookup")) == {"store.Cache.Get"}  # cache *Cache
    # A function of another file of the package.
    assert callees(engine, "store.Store.Fresh") == {"store.newCache": "import"}


def test_standard_library_and_builtins_never_reach_namesakes(engine: Engine) -> None:
    assert callees(engine, "store.Store.Fail") == {}  # http.Error, not util.Error
    assert callees(engine, "store.Store.Stop") == {}  # close(ch), not Cache.close
    assert callers(engine, "util.Error") == set()
    assert callers(engine, "store.Cache.close") == set()


def test_a_walk_that_stops_says_so(engine: Engine) -> None:
    every = engine.graph("Get", GraphQuery(direction="callers", max_nodes=200))
    assert len(every.roots) == 3 and not every.truncated
    some = engine.graph("Get", GraphQuery(direction="callers", max_nodes=2))
    assert len(some.roots) == 2 and some.truncated
