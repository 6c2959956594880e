"""TypeScript calls resolved the way the language resolves them, not by name
alone: ES module imports (named, aliased, namespace), `this.` within the
caller's class and its bases, `super.`, typed receivers (a parameter, `new X()`
assigned to a local, a field, a parameter property), decorators, global objects
and the runtime's own methods, each edge with its confidence.

A small project written to a real folder, indexed by the real indexer (real
tree-sitter grammars) into a real SQLite file; the edges are read back as
`codesift callers/callees` show them (engine graph walk).
"""

from __future__ import annotations

import pytest
from call_workspace import engine_over

from codesift.engine import Engine, GraphQuery

FILES = {
    "src/util/format.ts": (
        "export function slugify(s: string): string {\n"
        "  return s.toLowerCase();\n"
        "}\n"
        "export function values(m: object): string[] {\n"
        "  return Object.keys(m);\n"
        "}\n"
        "export function max(a: number, b: number): number {\n"
        "  return a > b ? a : b;\n"
        "}\n"
        "export function register(target: unknown): void {}\n"
    ),
    "src/base.ts": (
        "export class Base {\n"
        "  get(key: string) {\n"
        "    return key;\n"
        "  }\n"
        "  describe() {\n"
        '    return "base";\n'
        "  }\n"
        "}\n"
    ),
    "src/cache.ts": (
        "export class Cache {\n"
        "  get(key: string) {\n"
        "    return null;\n"
        "  }\n"
        "  push(x: number) {\n"
        "    return x;\n"
        "  }\n"
        "}\n"
    ),
    "src/subscriber.ts": (
        "export class Subscriber {\n"
        "  next(value: number) {\n"
        "    return value;\n"
        "  }\n"
        "}\n"
        "export function operate(init: (s: number, t: Subscriber) => void) {}\n"
        "export function loose(init: any) {}\n"
        "export function from(value: number): Subscriber {\n"
        "  return new Subscriber();\n"
        "}\n"
    ),
    "src/watch.ts": (
        "import { from, loose, operate } from './subscriber';\n"
        "\n"
        "export function watch() {\n"
        "  return operate((source, subscriber) => subscriber.next(source));\n"
        "}\n"
        "\n"
        "export function follow() {\n"
        "  return loose((subscriber) => subscriber.next(1));\n"
        "}\n"
        "\n"
        "export function made() {\n"
        "  return from(1).next(2);\n"
        "}\n"
    ),
    # A class whose method is its base's; a closure's typed variable; a chain of
    # unknown type, never guessed among the file's namesakes.
    "src/special.ts": ("import { Base } from './base';\nexport class Special extends Base {}\n"),
    "src/closure.ts": (
        "import { Special } from './special';\n"
        "\n"
        "export function outer(table: { items: Map<string, number> }) {\n"
        "  let held: Special | null = null;\n"
        "  function inner() {\n"
        "    held?.describe();\n"
        "  }\n"
        "  table.items.get('k');\n"
        "  return inner;\n"
        "}\n"
        "\n"
        "export function get(key: string) {\n"
        "  return key;\n"
        "}\n"
    ),
    # A barrel: the modules' names re-exported from one place.
    "src/index.ts": "export * from './cache';\nexport { slugify } from './util/format';\n",
    "src/app/main.ts": (
        "import { Cache, slugify } from '..';\n"
        "\n"
        "export function start() {\n"
        "  const cache = new Cache();\n"
        "  return slugify(cache.get('k'));\n"
        "}\n"
    ),
    "src/store.ts": (
        "import { Base } from './base';\n"
        "import { slugify as makeSlug, register } from './util/format';\n"
        "import * as fmt from './util/format.js';\n"
        "import { Cache } from './cache';\n"
        "\n"
        "@register\n"
        "export class Store extends Base {\n"
        "  private cache: Cache;\n"
        "  constructor(private readonly backup: Cache) {\n"
        "    super();\n"
        "    this.cache = new Cache();\n"
        "  }\n"
        "  get(key: string) {\n"
        "    return super.get(key);\n"
        "  }\n"
        "  name(key: string) {\n"
        "    return makeSlug(this.get(key));\n"
        "  }\n"
        "  keys(data: object) {\n"
        "    return fmt.values(data);\n"
        "  }\n"
        "  biggest(a: number, b: number) {\n"
        "    return Math.max(a, b);\n"
        "  }\n"
        "  lookup(key: string) {\n"
        "    return this.cache.get(key);\n"
        "  }\n"
        "  fallback(key: string) {\n"
        "    return this.backup.get(key);\n"
        "  }\n"
        "  collect(items: number[]) {\n"
        "    items.push(1);\n"
        "    return items;\n"
        "  }\n"
        "  label() {\n"
        "    return this.describe();\n"
        "  }\n"
        "  memo(key: string) {\n"
        "    const seen = new Map();\n"
        "    return seen.get(key);\n"
        "  }\n"
        "}\n"
        "\n"
        "export function total(store: Store, keys: string[]) {\n"
        "  const cache = new Cache();\n"
        "  cache.get(keys[0]);\n"
        "  return store.name(keys[0]);\n"
        "}\n"
    ),
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    return engine_over(tmp_path_factory, "script", FILES)


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


def test_aliased_and_namespace_imports_resolve_through_the_import(engine: Engine) -> None:
    found = callees(engine, "Store.name")
    assert found["slugify"] == "import"  # import { slugify as makeSlug }
    assert callees(engine, "Store.keys") == {"values": "import"}  # fmt.values, './x.js'


def test_this_calls_stay_in_the_callers_class_and_its_bases(engine: Engine) -> None:
    found = callees(engine, "Store.name")
    assert found["Store.get"] == "type"
    assert "Cache.get" not in found and "Base.get" not in found
    # Not the class's own: the base's, through the base's import.
    assert callees(engine, "Store.label") == {"Base.describe": "import"}


def test_super_calls_the_base_classs_method(engine: Engine) -> None:
    assert callees(engine, "Store.get") == {"Base.get": "import"}


def test_typed_receivers_reach_their_class(engine: Engine) -> None:
    found = callees(engine, "total")
    assert found["Store.name"] == "type"  # store: Store
    assert found["Cache.get"] == "import"  # const cache = new Cache()
    assert "Base.get" not in found and "Store.get" not in found
    assert set(callees(engine, "Store.lookup")) == {"Cache.get"}  # this.cache = new Cache()
    assert set(callees(engine, "Store.fallback")) == {"Cache.get"}  # private backup: Cache


def test_imports_through_a_barrel_reach_the_reexported_definitions(engine: Engine) -> None:
    # import { Cache, slugify } from '..' (src/index.ts: export * / export { } from)
    assert callees(engine, "start") == {
        "Cache": "import",
        "Cache.get": "import",
        "slugify": "import",
    }


def test_globals_and_builtin_methods_never_reach_namesakes(engine: Engine) -> None:
    assert callees(engine, "Store.biggest") == {}  # Math.max, not util's max
    assert callees(engine, "Store.collect") == {}  # an array's push, not Cache.push
    assert callees(engine, "Store.memo") == {}  # a Map's get, not Store.get
    assert callers(engine, "max") == set()
    assert callers(engine, "Cache.push") == set()


def test_a_decorator_is_called_by_the_enclosing_scope(engine: Engine) -> None:
    assert callers(engine, "register") == {"src/store.ts"}


def test_a_callbacks_parameter_and_a_calls_result_are_typed_by_the_declared_signature(
    engine: Engine,
) -> None:
    # `subscriber` is typed by operate's signature in another file, `from(1)` by
    # from's declared return type.
    assert callees(engine, "watch") == {"operate": "import", "Subscriber.next": "type"}
    assert callees(engine, "made") == {"from": "import", "Subscriber.next": "type"}


def test_closures_inherited_methods_and_chains(engine: Engine) -> None:
    # `held: Special` declared in the enclosing function; describe() is Base's.
    assert callees(engine, "outer.inner") == {"Base.describe": "import"}
    # `table.items.get()`: a Map's, not this file's `get`.
    assert "get" not in callees(engine, "outer")


def test_a_receiver_named_after_a_class_is_a_guess_of_that_class(engine: Engine) -> None:
    # loose's signature does not type its callback's parameter.
    assert callees(engine, "follow") == {"loose": "import", "Subscriber.next": "guess"}
    walk = engine.graph("Subscriber.next", GraphQuery(direction="callers", depth=1))
    guessed = [link for link in walk.edges if link.guessed]
    assert len(walk.edges) == 3 and len(guessed) == 1 and guessed[0].confidence == "guess"
