"""Python calls resolved the way the language resolves them, not by name alone:
relative and aliased imports, module-qualified calls, builtins, `self`/`cls`
within the caller's class, `super()`, typed receivers and decorators.

A small package written to a real folder, indexed by the real indexer into a real
SQLite file; the edges are read back as `codesift callers/callees` show them
(engine graph walk).
"""

from __future__ import annotations

import pytest
from call_workspace import callee_names as callees
from call_workspace import engine_over

from codesift.engine import Engine, GraphQuery, Workspace

FILES = {
    "shop/__init__.py": "from .pricing import total as grand_total\n",
    "shop/util.py": (
        "def slugify(text):\n"
        "    return text.lower()\n"
        "\n"
        "\n"
        "def values(mapping):\n"
        "    return list(mapping)\n"
        "\n"
        "\n"
        "def register(fn):\n"
        "    return fn\n"
    ),
    "shop/pricing.py": (
        "import json\n"
        "\n"
        "from . import util\n"
        "from .util import slugify as make_slug, register\n"
        "\n"
        "\n"
        "class Base:\n"
        "    def get(self, key):\n"
        "        return key\n"
        "\n"
        "    def dumps(self, data):\n"
        "        return json.dumps(data)\n"
        "\n"
        "\n"
        "class Cache:\n"
        "    def get(self, key):\n"
        "        return None\n"
        "\n"
        "\n"
        "class Store(Base):\n"
        "    def get(self, key):\n"
        "        return super().get(key)\n"
        "\n"
        "    def name(self, key):\n"
        "        return make_slug(self.get(key))\n"
        "\n"
        "    def keys(self, data):\n"
        "        return util.values(data)\n"
        "\n"
        "    def next_key(self, items):\n"
        "        return next(iter(items))\n"
        "\n"
        "\n"
        "class Service:\n"
        "    def __init__(self):\n"
        "        self.cache = Cache()\n"
        "\n"
        "    def lookup(self, key):\n"
        "        return self.cache.get(key)\n"
        "\n"
        "\n"
        "@register\n"
        "def total(store: Store, keys):\n"
        "    cache = Cache()\n"
        "    cache.get(keys)\n"
        "    return store.name(keys)\n"
    ),
    "shop/special.py": (
        "from .pricing import Base\n"
        "\n"
        "\n"
        "class Special(Base):\n"
        "    def dumps(self, data):\n"
        "        return super().dumps(data)\n"
    ),
    # A project method named like a builtin and like json's function.
    "shop/iterators.py": (
        "class Walker:\n"
        "    def next(self):\n"
        "        return 1\n"
        "\n"
        "    def dumps(self):\n"
        "        return 2\n"
    ),
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    return engine_over(tmp_path_factory, "calls", FILES)


def callers(engine: Engine, qualified_name: str) -> set[str]:
    walk = engine.graph(qualified_name, GraphQuery(direction="callers", depth=1))
    (root,) = walk.roots
    names = {s.node.id: s.node.qualified_name for s in walk.nodes}
    return {names[e.source] for e in walk.edges if e.target == root}


def test_relative_and_aliased_imports_resolve_across_files(engine: Engine) -> None:
    assert "shop.util.slugify" in callees(engine, "shop.pricing.Store.name")
    assert "shop.util.values" in callees(engine, "shop.pricing.Store.keys")


def test_self_calls_stay_in_the_callers_class(engine: Engine) -> None:
    found = callees(engine, "shop.pricing.Store.name")
    assert "shop.pricing.Store.get" in found
    assert "shop.pricing.Cache.get" not in found and "shop.pricing.Base.get" not in found


def test_super_calls_the_base_classs_method(engine: Engine) -> None:
    assert callees(engine, "shop.pricing.Store.get") == {"shop.pricing.Base.get"}
    # A base imported from another module.
    assert callees(engine, "shop.special.Special.dumps") == {"shop.pricing.Base.dumps"}


def test_module_qualified_and_builtin_calls_never_reach_namesakes(engine: Engine) -> None:
    assert callees(engine, "shop.pricing.Base.dumps") == set()  # json.dumps
    assert "shop.iterators.Walker.next" not in callees(engine, "shop.pricing.Store.next_key")
    assert callers(engine, "shop.iterators.Walker.next") == set()
    assert callers(engine, "shop.iterators.Walker.dumps") == set()


def test_typed_receivers_reach_their_class(engine: Engine) -> None:
    found = callees(engine, "shop.pricing.total")
    assert "shop.pricing.Store.name" in found  # store: Store
    assert "shop.pricing.Cache.get" in found  # cache = Cache()
    assert "shop.pricing.Base.get" not in found
    # A field its class's constructor sets: self.cache = Cache()
    assert callees(engine, "shop.pricing.Service.lookup") == {"shop.pricing.Cache.get"}


def test_a_decorator_is_called_by_the_enclosing_scope(engine: Engine) -> None:
    assert callers(engine, "shop.util.register") == {"shop.pricing"}
    assert "shop.util.register" not in callees(engine, "shop.pricing.total")


def test_a_name_with_many_definitions_is_never_cut_silently(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    root = tmp_path_factory.mktemp("many") / "ws"
    root.mkdir()
    (root / "models.py").write_text(
        "".join(f"class Model{i}:\n    def __init__(self):\n        pass\n\n\n" for i in range(25))
    )
    engine = Engine(
        Workspace.at(root, {"embedding": {"enabled": False}}), vectors=False, quiet=True
    )
    try:
        every = engine.graph("__init__", GraphQuery(direction="callers", max_nodes=200))
        assert len(every.roots) == 25 and not every.truncated
        some = engine.graph("__init__", GraphQuery(direction="callers", max_nodes=10))
        assert len(some.roots) == 10 and some.truncated
        assert some.omitted >= 1  # at least the one more start the walk read
    finally:
        engine.close()


def test_a_workspace_opened_on_a_subfolder_still_links_its_own_imports(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """`from app.core.util import helper` in a workspace opened on `app/core` (the
    package name is no folder of the workspace): the call still reaches `helper`
    by its name, while `json.dumps` (the standard library's) never reaches a
    project `dumps`."""
    root = tmp_path_factory.mktemp("sub") / "core"
    root.mkdir()
    (root / "util.py").write_text("def helper():\n    return 1\n\n\ndef dumps():\n    return 2\n")
    (root / "main.py").write_text(
        "import json\n\nfrom app.core.util import helper\n\n\n"
        "def run():\n    helper()\n    return json.dumps({})\n"
    )
    engine = Engine(
        Workspace.at(root, {"embedding": {"enabled": False}}), vectors=False, quiet=True
    )
    try:
        assert callees(engine, "main.run") == {"util.helper"}
    finally:
        engine.close()


def test_a_cut_walk_counts_the_definitions_it_left_out(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    root = tmp_path_factory.mktemp("cut") / "ws"
    root.mkdir()
    callers = "".join(f"def caller{i}():\n    return target()\n\n\n" for i in range(7))
    (root / "calls.py").write_text("def target():\n    return 1\n\n\n" + callers)
    engine = Engine(
        Workspace.at(root, {"embedding": {"enabled": False}}), vectors=False, quiet=True
    )
    try:
        cut = engine.graph("target", GraphQuery(direction="callers", max_nodes=3))
        # target and two callers shown, the five others counted, not dropped silently
        assert len(cut.nodes) == 3 and cut.truncated and cut.omitted == 5
        assert len([e for e in cut.edges if e.target is not None]) == 2
        whole = engine.graph("target", GraphQuery(direction="callers", max_nodes=8))
        assert len(whole.nodes) == 8 and not whole.truncated and whole.omitted == 0
    finally:
        engine.close()
