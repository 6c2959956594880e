"""Python calls whose receiver's class is told across files: a package's
re-exports, bases walked in other modules (generic ones too), return
annotations of called functions, module-level variables, properties, and
receivers the file does not type (never linked to a module-level function or
through a method of Python's own types).

A small package written to a real folder, indexed by the real indexer into a real
SQLite file; the edges are read back as `codesift callers/callees` show them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from call_workspace import callee_names as callees
from call_workspace import engine_over

from codesift.engine import Engine, GraphQuery, Workspace
from conftest import write_files

FILES = {
    "net/__init__.py": (
        "from .base import Resource as Resource\n"
        "from .base import now\n"
        "from .streams import Stream as Stream\n"
    ),
    "net/base.py": (
        "from typing import Generic, TypeVar\n"
        "\n"
        "T = TypeVar('T')\n"
        "\n"
        "\n"
        "def now() -> float:\n"
        "    return 0.0\n"
        "\n"
        "\n"
        "class Resource(Generic[T]):\n"
        "    def close(self) -> None:\n"
        "        pass\n"
        "\n"
        "\n"
        "def items(mapping):\n"
        "    return list(mapping)\n"
    ),
    "net/streams.py": (
        "from .base import Resource\n"
        "\n"
        "\n"
        "class Stream(Resource[bytes]):\n"
        "    def send(self, data: bytes) -> None:\n"
        "        pass\n"
        "\n"
        "\n"
        "class Backend:\n"
        "    def open(self) -> 'Stream':\n"
        "        return Stream()\n"
        "\n"
        "\n"
        "def backend() -> type[Backend]:\n"
        "    return Backend\n"
    ),
    "net/events.py": (
        "class Event:\n"
        "    def set(self) -> None:\n"
        "        pass\n"
        "\n"
        "\n"
        "class Flag:\n"
        "    def set(self) -> None:\n"
        "        pass\n"
    ),
    "net/waiters.py": (
        "from collections import deque\n"
        "\n"
        "from .events import Event\n"
        "\n"
        "\n"
        "class Waiters:\n"
        "    def __init__(self) -> None:\n"
        "        self._waiters: deque[Event] = deque()\n"
        "\n"
        "    def notify_all(self) -> None:\n"
        "        for event in self._waiters:\n"
        "            event.set()\n"
        "\n"
        "    def notify(self) -> None:\n"
        "        self._waiters.popleft().set()\n"
        "\n"
        "\n"
        "def wake(pending: list[Event]) -> None:\n"
        "    first = pending.pop()\n"
        "    first.set()\n"
    ),
    "net/deep/__init__.py": "",
    "net/deep/tools.py": "def helper():\n    return 1\n",
    "net/measure.py": "class Measure:\n    def span(self):\n        return 0\n",
    "net/hub.py": (
        "import re\n"
        "from collections import OrderedDict\n"
        "\n"
        "import net.deep.tools\n"
        "\n"
        "from .base import Resource\n"
        "from .events import Event, Flag\n"
        "from .streams import Stream\n"
        "\n"
        "\n"
        "def make_flag_class() -> type[Flag]:\n"
        "    return Flag\n"
        "\n"
        "\n"
        "def make_flag(\n"
        + "".join(f"    parameter_{n}: 'dict[str, list[int]]' = None,\n" for n in range(12))
        + ") -> Flag:\n"
        "    return Flag()\n"
        "\n"
        "\n"
        "def tools():\n"
        "    return net.deep.tools.helper()\n"
        "\n"
        "\n"
        "class State:\n"
        "    senders: OrderedDict[Event, Flag]\n"
        "\n"
        "\n"
        "class Hub(Resource[bytes]):\n"
        "    waiting: 'OrderedDict[Event, Flag]'\n"
        "    _flags: set[Flag] | None\n"
        "    _state: State\n"
        "\n"
        "    def __init__(self, stream: 'Stream', lock: Flag | None = None) -> None:\n"
        "        self.stream = stream\n"
        "        self._lock = lock or Flag()\n"
        "\n"
        "    def read(self) -> None:\n"
        "        self.stream.send(b'')\n"
        "        self._lock.set()\n"
        "\n"
        "    def close(self) -> None:\n"
        "        self._fp.close()\n"
        "        super().close()\n"
        "\n"
        "    def drain(self) -> None:\n"
        "        event, flag = self.waiting.popitem(last=False)\n"
        "        event.set()\n"
        "\n"
        "    def each(self) -> None:\n"
        "        for event, flag in self.waiting.items():\n"
        "            flag.set()\n"
        "\n"
        "    def receive(self) -> None:\n"
        "        sender, value = self._state.senders.popitem()\n"
        "        sender.set()\n"
        "\n"
        "    def both(self, pending) -> None:\n"
        "        for item in pending:\n"
        "            item.set()\n"
        "        for item in self._flags:\n"
        "            item.set()\n"
        "\n"
        "    def first(self, pending) -> None:\n"
        "        # Plus d'été que d'hiver: àéèêëîïôöùûüç àéèêëîïôöùûüç àéèêëîïôöùûüç\n"
        "        for item in pending:\n"
        "            item.set()\n"
        "        for item in self._flags:\n"
        "            item.close()\n"
        "\n"
        "\n"
        "def spans(text: str) -> None:\n"
        "    for match in re.finditer('a', text):\n"
        "        match.span()\n"
        "\n"
        "\n"
        "def made() -> None:\n"
        "    Made = make_flag_class()\n"
        "    Made().set()\n"
        "\n"
        "\n"
        "def long_made() -> None:\n"
        "    make_flag().set()\n"
    ),
    # Module-level variables bound by a call, an annotation or an alias, used in
    # other modules (`Made` holds the class `backend()` returns).
    "net/registry.py": (
        "from .events import Event, Flag\n"
        "from .streams import backend\n"
        "\n"
        "FLAG = Flag()\n"
        "Made = backend()\n"
        "ALIAS = Flag\n"
        "SHARED: Event = None\n"
        "log = __import__('logging').getLogger(__name__)\n"
        "\n"
        "\n"
        "def made_again():\n"
        '    """Whatever backend() returns."""\n'
        "    return backend()\n"
        "\n"
        "\n"
        "class Pool:\n"
        "    @classmethod\n"
        "    def create(cls, size):\n"
        "        if size:\n"
        "            return cls(size)\n"
        "        return cls(0)\n"
        "\n"
        "    def close(self):\n"
        "        pass\n"
    ),
    "net/share.py": "from .registry import FLAG as FLAG\n",
    "net/user.py": (
        "from net import registry\n"
        "\n"
        "from .registry import ALIAS, Made\n"
        "from .share import FLAG\n"
        "from .streams import backend\n"
        "\n"
        "\n"
        "def use():\n"
        "    FLAG.set()\n"
        "\n"
        "\n"
        "def build():\n"
        "    Made().open()\n"
        "\n"
        "\n"
        "def through_module():\n"
        "    registry.SHARED.set()\n"
        "    registry.log.set()\n"
        "\n"
        "\n"
        "def aliased():\n"
        "    ALIAS().set()\n"
        "\n"
        "\n"
        "def rebuilt():\n"
        "    Again = registry.made_again()\n"
        "    Again().open()\n"
        "\n"
        "\n"
        "def pooled():\n"
        "    registry.Pool.create(1).close()\n"
        "\n"
        "\n"
        "class Suite:\n"
        "    Kind = registry.Made\n"
        "\n"
        "    def setUp(self):\n"
        "        self.Factory = backend()\n"
        "\n"
        "    def test_alias(self):\n"
        "        made = self.Kind()\n"
        "        made.open()\n"
        "\n"
        "    def test_field(self):\n"
        "        made = self.Factory()\n"
        "        made.open()\n"
    ),
    # A namesake of the re-exported `now`: the name alone does not tell them apart.
    "net/clock.py": "def now() -> int:\n    return 1\n",
    "net/client.py": (
        "from . import now\n"
        "from .streams import Stream, backend\n"
        "from net import Resource\n"
        "\n"
        "_default = Stream()\n"
        "\n"
        "\n"
        "class Client(Resource[str]):\n"
        "    def __init__(self, stream: Stream) -> None:\n"
        "        self.stream = stream\n"
        "\n"
        "    @property\n"
        "    def current(self) -> Stream:\n"
        "        return self.stream\n"
        "\n"
        "    def stop(self) -> None:\n"
        "        self.close()\n"
        "        self.stream.close()\n"
        "\n"
        "    def push(self, data) -> None:\n"
        "        self.current.send(data)\n"
        "\n"
        "\n"
        "def started():\n"
        "    return now()\n"
        "\n"
        "\n"
        "def fresh():\n"
        "    backend().open().send(b'')\n"
        "    _default.send(b'')\n"
        "\n"
        "\n"
        "def untyped(table, handler):\n"
        "    handler()\n"
        "    return table.items()\n"
    ),
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    return engine_over(tmp_path_factory, "receivers", FILES)


def test_a_name_a_package_re_exports_reaches_its_definition(engine: Engine) -> None:
    assert callees(engine, "net.client.started") == {"net.base.now"}


def test_self_and_typed_fields_reach_methods_of_bases_in_other_modules(engine: Engine) -> None:
    # Client(Resource[str]) with Resource imported through the package; the field
    # `stream: Stream` whose generic base Resource[bytes] has close().
    assert callees(engine, "net.client.Client.stop") == {"net.base.Resource.close"}


def test_a_property_and_a_called_functions_return_annotation_type_the_receiver(
    engine: Engine,
) -> None:
    assert "net.streams.Stream.send" in callees(engine, "net.client.Client.push")
    found = callees(engine, "net.client.fresh")
    # backend() -> type[Backend]; Backend.open() -> 'Stream'; a module variable.
    assert {"net.streams.backend", "net.streams.Backend.open", "net.streams.Stream.send"} <= found


def test_elements_of_annotated_containers_are_typed(engine: Engine) -> None:
    # `deque[Event]` iterated or popped, `list[Event]` popped: Event.set, never
    # the namesake Flag.set.
    for caller in ("Waiters.notify_all", "Waiters.notify", "wake"):
        assert callees(engine, f"net.waiters.{caller}") == {"net.events.Event.set"}


def test_untyped_receivers_and_names_reach_no_namesake_function(engine: Engine) -> None:
    # `table.items()` is a method of an unknown object (a dict's), never the
    # module-level `items`; `handler()` is a parameter, not a definition.
    assert callees(engine, "net.client.untyped") == set()


def test_import_of_a_dotted_module_binds_its_head(engine: Engine) -> None:
    # `import net.deep.tools` binds `net`; the call is written through it (and the
    # module's own function `tools` is no target of it).
    assert callees(engine, "net.hub.tools") == {"net.deep.tools.helper"}


def test_super_through_a_generic_base_wins_over_an_untyped_namesake(engine: Engine) -> None:
    # Hub(Resource[bytes]): super().close() is Resource.close, although an untyped
    # `self._fp.close()` comes first in the method.
    assert callees(engine, "net.hub.Hub.close") == {"net.base.Resource.close"}


def test_fields_set_from_annotated_parameters_are_typed(engine: Engine) -> None:
    # `self.stream = stream` (stream: 'Stream'), `self._lock = lock or Flag()`
    # (lock: Flag | None): Flag.set, never the namesake Event.set.
    assert callees(engine, "net.hub.Hub.read") == {"net.streams.Stream.send", "net.events.Flag.set"}


def test_mapping_keys_and_values_unpacked_are_typed(engine: Engine) -> None:
    # OrderedDict[Event, Flag]: popitem() gives (Event, Flag), items() too; a field
    # of a field's class in the same file (self._state.senders) as well.
    assert callees(engine, "net.hub.Hub.drain") == {"net.events.Event.set"}
    assert callees(engine, "net.hub.Hub.each") == {"net.events.Flag.set"}
    assert callees(engine, "net.hub.Hub.receive") == {"net.events.Event.set"}


def test_the_loop_that_binds_a_name_last_types_it(engine: Engine) -> None:
    # `item` first iterates an untyped parameter, then a set[Flag] field.
    assert callees(engine, "net.hub.Hub.both") == {"net.events.Flag.set"}
    # A loop after the call binds nothing for it (positions counted in bytes, with
    # accented letters before them).
    assert callees(engine, "net.hub.Hub.first") == set()


def test_elements_of_a_standard_library_call_reach_no_project_method(engine: Engine) -> None:
    # `match` comes from re.finditer(): re.Match.span, not the project's one span.
    assert callees(engine, "net.hub.spans") == set()


def test_a_returned_class_called_makes_its_instance(engine: Engine) -> None:
    assert "net.events.Flag.set" in callees(engine, "net.hub.made")
    # make_flag's signature is too long to be kept whole: its return is read from
    # its text.
    assert callees(engine, "net.hub.long_made") == {"net.hub.make_flag", "net.events.Flag.set"}


def test_module_level_variables_are_typed_across_files(engine: Engine) -> None:
    # `FLAG = Flag()` re-exported by another module; `Made = backend()` (a function
    # returning type[Backend]), called; `registry.SHARED: Event` through the
    # module; `ALIAS = Flag`, called. `log` holds a standard-library object: no
    # project method. Each edge says it was resolved through a type.
    assert callees(engine, "net.user.use") == {"net.events.Flag.set"}
    assert callees(engine, "net.user.build") == {"net.streams.Backend.open"}
    assert callees(engine, "net.user.through_module") == {"net.events.Event.set"}
    assert callees(engine, "net.user.aliased") == {"net.events.Flag.set"}
    for caller in ("use", "build", "through_module", "aliased"):
        walk = engine.graph(f"net.user.{caller}", GraphQuery(direction="callees", depth=1))
        assert {e.confidence for e in walk.edges if e.target is not None} == {"type"}, caller


def test_class_attributes_and_fields_holding_a_class_are_called(engine: Engine) -> None:
    # `Kind = registry.Made` in the class body (a module variable of another
    # module holding a class), `self.Factory = backend()` (a function returning
    # type[Backend]): calling either makes a Backend.
    assert callees(engine, "net.user.Suite.test_alias") == {"net.streams.Backend.open"}
    assert callees(engine, "net.user.Suite.test_field") == {"net.streams.Backend.open"}


def test_a_function_without_annotation_returns_what_its_returns_call(engine: Engine) -> None:
    # made_again() only returns backend() (type[Backend]); Pool.create only
    # returns cls(...).
    assert callees(engine, "net.user.rebuilt") == {
        "net.registry.made_again",
        "net.streams.Backend.open",
    }
    assert callees(engine, "net.user.pooled") == {
        "net.registry.Pool.create",
        "net.registry.Pool.close",
    }


@pytest.mark.parametrize("order", ["remove first", "add first"])
def test_an_edge_through_a_base_follows_the_base_when_it_changes(
    tmp_path: Path, order: str
) -> None:
    # Sub.stop's self.close() is resolved across files through Sub's base: when
    # the base's close goes, the edge reaches nothing; when the base gains a mixin
    # that has close, or its package re-exports another base, it reaches that.
    root = tmp_path / "ws"
    files = {
        ".codesift.toml": "[embedding]\nenabled = false\n",
        "pkg/__init__.py": "from .base import Base as Base\n",
        "pkg/mixin.py": "class Closing:\n    def close(self):\n        pass\n",
        "pkg/other.py": "class Base:\n    def close(self):\n        pass\n",
        "pkg/sub.py": (
            "from . import Base\n\n\nclass Sub(Base):\n    def stop(self):\n        self.close()\n"
        ),
    }
    plain = "class Base:\n    def close(self):\n        pass\n"
    bare = "class Base:\n    def open(self):\n        pass\n"
    mixed = "from .mixin import Closing\n\n\nclass Base(Closing):\n    pass\n"
    steps = [
        ({"pkg/base.py": plain}, {"pkg.base.Base.close"}),
        ({"pkg/base.py": bare}, set()),
        ({"pkg/base.py": mixed}, {"pkg.mixin.Closing.close"}),
        ({"pkg/__init__.py": "from .other import Base as Base\n"}, {"pkg.other.Base.close"}),
    ]
    if order == "add first":
        steps = [steps[0], steps[2], steps[1], steps[3]]
    for change, expected in steps:
        files.update(change)
        assert callees_after(root, files, "pkg.sub.Sub.stop") == expected, change


def test_an_edge_through_a_module_variable_follows_its_binding(tmp_path: Path) -> None:
    # `user.stop` calls `CURRENT.close()` with CURRENT imported from another
    # module: when that module binds CURRENT to another class, the edge follows.
    root = tmp_path / "ws"
    files = {
        ".codesift.toml": "[embedding]\nenabled = false\n",
        "pkg/__init__.py": "",
        "pkg/kinds.py": (
            "class Plain:\n    def close(self):\n        pass\n\n\n"
            "class Fancy:\n    def close(self):\n        pass\n"
        ),
        "pkg/user.py": "from .state import CURRENT\n\n\ndef stop():\n    CURRENT.close()\n",
    }
    steps = [
        ("from .kinds import Plain\n\nCURRENT = Plain()\n", {"pkg.kinds.Plain.close"}),
        ("from .kinds import Fancy\n\nCURRENT = Fancy()\n", {"pkg.kinds.Fancy.close"}),
        ("from . import kinds\n\nCURRENT: kinds.Plain = None\n", {"pkg.kinds.Plain.close"}),
        ("CURRENT = None\n", set()),
    ]
    for text, expected in steps:
        files["pkg/state.py"] = text
        assert callees_after(root, files, "pkg.user.stop") == expected, text


def test_an_edge_through_a_return_annotation_follows_it(tmp_path: Path) -> None:
    # `user.stop` calls `make().close()`: when make's return annotation names
    # another class, the edge follows.
    root = tmp_path / "ws"
    files = {
        ".codesift.toml": "[embedding]\nenabled = false\n",
        "pkg/__init__.py": "",
        "pkg/kinds.py": (
            "class Plain:\n    def close(self):\n        pass\n\n\n"
            "class Fancy:\n    def close(self):\n        pass\n"
        ),
        "pkg/user.py": "from .make import make\n\n\ndef stop():\n    make().close()\n",
    }
    made = "from .kinds import Fancy, Plain\n\n\ndef make() -> {}:\n    return {}()\n"
    steps = [("Plain", {"pkg.make.make", "pkg.kinds.Plain.close"})]
    steps.append(("Fancy", {"pkg.make.make", "pkg.kinds.Fancy.close"}))
    for kind, expected in steps:
        files["pkg/make.py"] = made.format(kind, kind)
        assert callees_after(root, files, "pkg.user.stop") == expected, kind


def callees_after(root: Path, files: dict[str, str], name: str) -> set[str]:
    """The callees of `name` once `files` are written to `root` and indexed again."""
    write_files(root, files)
    engine = Engine(Workspace.at(root), vectors=False, quiet=True)
    try:
        return callees(engine, name)
    finally:
        engine.close()
