"""What a Python scope's own source shows about the names a call is made on
(parsing/calls_python.py resolves calls with it): a parameter's or local's
annotation, the call a local or a field was assigned from, a field set from an
annotated parameter, and the elements of annotated containers a loop or an
unpacking binds (`for key, value in self.table.items()`, `event, item =
waiters.popitem()`).

Each scope's text is read once with a few patterns that find every name at once;
the facts are kept in the outline's `scope_facts` for the file's other calls."""

from __future__ import annotations

import re
import sys
from typing import NamedTuple

from tree_sitter import Node

from codesift.parsing.outline import CLASS_LIKE, Outline, enclosing_class, tree_definition

__all__ = [
    "ScopeType",
    "element_type",
    "field_type",
    "imported_inside",
    "receiver_type",
    "star_imports",
    "text_of",
]

_STDLIB = frozenset(sys.stdlib_module_names)


class ScopeType(NamedTuple):
    """What a receiver visibly holds: a class's name (`Klass`, `mod.Klass`) or,
    `called`, the callee of the call that made it (`make`, `mod.make`, `Klass`)."""

    text: str
    called: bool


def text_of(node: Node, src: bytes) -> str:
    return src[node.start_byte : node.end_byte].decode("utf-8", "replace")


# The patterns call resolution reads types with, each finding every name of a
# scope at once (one pass per scope, not one compiled pattern per call). Their
# quantifiers are possessive where giving characters back can never make a match
# (an identifier followed by `:`, `=` or `[`; blanks before a name): a failed
# match then fails at once instead of retrying with every shorter identifier and
# indentation.
_IDENT = r"[^\W\d]\w*+"
_INDENTED_IMPORT = re.compile(r"\n\s++(?:from\s+\S+\s+)?import\s([^\n]*)")
_STAR_IMPORT = re.compile(r"\n\s*+from\s+\S+\s+import\s+\*")
_WORD_RUN = re.compile(r"\w+")
# `x: Klass`, `x: "Klass"`, `x: Optional[Klass]`, `x: type[Klass]`, `x: Klass | None`
_ANNOTATION = r"[ \t]*+:[ \t]*+[\"']?(?:(?:Optional|type|Type)\[)?([A-Za-z_][\w.]*+)"
# `x = Klass(...)`, `x: T = Klass[...](...)`, `x = make(...)`, `x = mod.make(...)`
_CONSTRUCTED = (
    r"\s*+(?::[^=\n]++)?=\s*+(?:await\s+)?([A-Za-z_][\w.]*+(?:\(\)\.[A-Za-z_][\w.]*+)*)"
    r"(?:\[[^\n=]*\])?\("
)


class _TypePattern(NamedTuple):
    """A pattern that finds `name -> type` pairs in a scope's text. The type is read
    in a lookahead, so that a match consumes no more than the name and never hides
    the next name from the scan."""

    regex: re.Pattern[str]
    called: bool  # it reads a call's callee (True) or a type's name
    needle: str  # text every match needs: a scope without it is not scanned
    # A pattern for a line's start begins with a newline (the text is given one in
    # front): a literal first character is searched for fast, where `(?m)^` is
    # tried at every position.
    lines: bool = False
    swapped: bool = False  # the type is the first group, the name the second


_PARAMETER_TYPE = _TypePattern(re.compile(rf"(?:^|[(,\s])({_IDENT})(?={_ANNOTATION})"), False, ":")
_LOCAL_TYPES = (  # in order of preference: what is declared, then what is assigned
    _TypePattern(re.compile(rf"\n\s*+({_IDENT})(?={_ANNOTATION})"), False, ":", lines=True),
    _TypePattern(re.compile(rf"\n\s*+({_IDENT})(?={_CONSTRUCTED})"), True, "=", lines=True),
    _TypePattern(  # `with T() as x`; `with` first, so that it is searched for as text
        re.compile(rf"with\b(?<=\bwith)\s++([A-Za-z_][\w.]*+)\([^\n]*?\)\s+as\s+({_IDENT})\s*+:"),
        True,
        "with",
        swapped=True,
    ),
)
_MODULE_TYPES = (
    _TypePattern(re.compile(rf"\n({_IDENT})(?={_ANNOTATION})"), False, ":", lines=True),
    _TypePattern(re.compile(rf"\n({_IDENT})(?={_CONSTRUCTED})"), True, "=", lines=True),
)
_FIELD_TYPES = (
    _TypePattern(re.compile(rf"self\.({_IDENT})(?={_ANNOTATION})"), False, "self."),
    _TypePattern(re.compile(rf"\n\s++({_IDENT})(?={_ANNOTATION})"), False, ":", lines=True),
    _TypePattern(re.compile(rf"self\.({_IDENT})(?={_CONSTRUCTED})"), True, "self."),
)
# `self.lock = lock` / `self.lock = lock or Lock()` in a method: the parameter's type.
_PARAMETER_FIELD = re.compile(
    rf"(?m)^[ \t]*+self\.({_IDENT})[ \t]*+=[ \t]*+({_IDENT})(?:[ \t]+or[ \t][^\n]*)?[ \t]*$"
)
_Facts = list[dict[str, ScopeType]]
# Containers whose annotation names their elements' type (`deque[Event]`,
# `OrderedDict[Event, Item]`).
_SEQUENCES = frozenset(
    "list List set Set frozenset FrozenSet deque Deque Sequence MutableSequence"
    " Iterable Iterator Collection AbstractSet MutableSet".split()
)
_MAPPINGS = frozenset(
    "dict Dict Mapping MutableMapping OrderedDict defaultdict DefaultDict ChainMap".split()
)
_GENERIC = rf"[ \t]*+:[ \t]*+[\"']?(?:typing\.|collections\.|abc\.)?({_IDENT})\[([^\n=]*)"
_LOCAL_GENERIC = re.compile(rf"(?:^|[(,\s])({_IDENT}){_GENERIC}")
_FIELD_GENERIC = re.compile(rf"(?:self\.|(?m:^)\s++)({_IDENT}){_GENERIC}")
_ARGUMENT_NAME = re.compile(r"[\"']?([A-Za-z_][\w.]*)")
# What a loop or an unpacking binds: `for a, b in <iterated>:` and
# `a, b = <container>.popitem(...)`.
_TARGETS = rf"\(?+[ \t]*+({_IDENT}(?:[ \t]*+,[ \t]*+{_IDENT})*+)[ \t]*+,?+[ \t]*+\)?+"
_LOOP = re.compile(
    rf"(?m)\n[ \t]*+(?:async[ \t]+)?for[ \t]++{_TARGETS}[ \t]*+(?<=[ \t])in[ \t]++([^\n]*?)[ \t]*:"
    r"[ \t]*(?:#[^\n]*)?$"
)
# The container is the chain before `.popitem(` (the pattern reads the whole chain).
_POPITEM = re.compile(
    rf"(?m)^[ \t]*+{_TARGETS}[ \t]*+=[ \t]*+((?:self\.)?+{_IDENT}(?:\.{_IDENT})*+)\("
)
_DOTTED_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
_DOTTED = r"(?:self\.)?[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*"
_ITERATED = (  # the iterated expression -> (container, how its elements are taken)
    (re.compile(rf"enumerate\(({_DOTTED})\)"), "enumerate"),
    (re.compile(rf"({_DOTTED})\.(items|keys|values)\(\)"), ""),
    (re.compile(rf"({_DOTTED})"), "iter"),
    (re.compile(rf"({_DOTTED})\([^\n]*\)"), "call"),
)
# The methods that give one element of a container: a sequence's, a mapping's value.
SEQUENCE_ELEMENT_METHODS = frozenset({"pop", "popleft"})
MAPPING_VALUE_METHODS = frozenset({"pop", "get", "setdefault"})


class _Binding(NamedTuple):
    at: int  # the byte offset of the loop or unpacking in the file's source
    names: tuple[str, ...]
    container: str
    how: str  # iter, items, keys, values, enumerate, popitem, call


def _first_types(patterns: tuple[_TypePattern, ...], text: str) -> list[dict[str, ScopeType]]:
    """For each pattern, name -> the type of its first match in `text`."""
    lined = ""
    out: list[dict[str, ScopeType]] = []
    for pattern in patterns:
        found: dict[str, ScopeType] = {}
        out.append(found)
        if pattern.needle not in text:
            continue
        if pattern.lines and not lined:
            lined = "\n" + text
        for match in pattern.regex.finditer(lined if pattern.lines else text):
            name, typed = (match.group(2), match.group(1)) if pattern.swapped else match.groups()
            found.setdefault(name, ScopeType(typed, pattern.called))
    return out


def imported_inside(name: str, caller: int, outline: Outline, src: bytes) -> bool:
    """Whether the calling function itself imports `name` (`from x import name`
    inside its body), which shadows a definition of that name in the module."""
    if not caller:
        return False
    key = ("imports", caller)
    names = outline.scope_facts.get(key)
    if names is None:
        definition = tree_definition(caller, outline)
        names = set()
        if definition is not None:
            text = text_of(definition, src)
            for match in _INDENTED_IMPORT.finditer("\n" + text) if "import" in text else ():
                names.update(_WORD_RUN.findall(match.group(1)))
        outline.scope_facts[key] = names
    return name in names


def star_imports(outline: Outline, src: bytes) -> bool:
    key = ("star-imports", 0)
    found = outline.scope_facts.get(key)
    if found is None:
        text = src.decode("utf-8", "replace")
        found = "import" in text and _STAR_IMPORT.search("\n" + text) is not None
        outline.scope_facts[key] = found
    return bool(found)


def receiver_type(
    receiver: str, caller: int, outline: Outline, src: bytes, at: int = -1
) -> ScopeType | None:
    """What a receiver visibly holds: for a variable of the calling function,
    a parameter's annotation (`catalog: Catalog`, `"Catalog"`, `Optional[Catalog]`),
    a local annotation, an assignment of a call (`catalog = Catalog(...)`, `x =
    make()`) or `with Catalog() as catalog`; else a module-level variable's
    annotation or assignment; else an element of an annotated container the
    nearest loop or unpacking before `at` bound it to; for `self.field`, the
    field's assignment of a call or annotation in its class (`self.lock =
    Lock()`, `self.lock: Lock`, `lock: Lock` in the class body) or of an
    annotated parameter."""
    if receiver.startswith("self.") and receiver[5:].isidentifier():
        return field_type(receiver[5:], caller, outline, src)
    if not receiver.isidentifier():
        return None
    for facts in (_local_facts(caller, outline, src), _module_facts(outline, src)):
        for types in facts:
            if receiver in types:
                return types[receiver]
    return _bound_type(receiver, caller, outline, src, at)


def _bound_type(name: str, caller: int, outline: Outline, src: bytes, at: int) -> ScopeType | None:
    """The element type a loop or an unpacking gave `name`: the last one before
    `at` (the first when `at` is -1)."""
    binding = None
    for found in _bindings(caller, outline, src):
        if name in found.names and (at < 0 or found.at < at):
            binding = found
            if at < 0:
                break
    if binding is None:
        return None
    if binding.how == "call":  # `for m in re.finditer(...)`: a value from outside
        head = binding.container.split(".", 1)[0]
        outside = head in _STDLIB and not outline.by_name.get(head)
        return ScopeType(binding.container, True) if outside else None
    position = binding.names.index(name)
    return element_type(
        binding.container, binding.how, caller, outline, src, position, len(binding.names)
    )


def element_type(
    container: str,
    how: str,
    caller: int,
    outline: Outline,
    src: bytes,
    position: int = 0,
    count: int = 1,
) -> ScopeType | None:
    """The type of what `how` takes from a container a variable or field is
    annotated with (`waiters: deque[Event]`, `self.items: list[Item]`, `table:
    dict[str, Item]`): iterating it (`iter`; a mapping's keys), `enumerate`
    (the element second), `items` / `popitem` (key and value), `keys`, `values`,
    or a one-element method (`pop`, `popleft`; a mapping's `get`)."""
    found = _container_arguments(container, caller, outline, src)
    if found is None:
        return None
    mapping, arguments = found
    index = _argument_index(how, mapping, position, count)
    if index is None or index >= len(arguments) or not arguments[index]:
        return None
    return ScopeType(arguments[index], False)


def _argument_index(how: str, mapping: bool, position: int, count: int) -> int | None:
    """Which type argument of a container a binding of `count` names takes at
    `position` (`for key, value in table.items()`: the first, the second)."""
    if count == 2:
        if how in ("items", "popitem") and mapping:
            return position
        return 0 if how == "enumerate" and not mapping and position == 1 else None
    if count != 1:
        return None
    if how in ("iter", "keys"):
        return 0
    if mapping:
        return 1 if how == "values" or how in MAPPING_VALUE_METHODS else None
    return 0 if how in SEQUENCE_ELEMENT_METHODS else None


def _container_arguments(
    container: str, caller: int, outline: Outline, src: bytes
) -> tuple[bool, list[str]] | None:
    """(whether a mapping, the names its type arguments start with) of the
    container annotation of a local, `self.field` or `self.field.field` (the
    first field's class in this file)."""
    parts = container.split(".")
    if parts[0] != "self":
        found = _generics(("generics", caller), _LOCAL_GENERIC, caller, outline, src)
        return found.get(container) if len(parts) == 1 else None
    klass = enclosing_class(caller, outline.nodes)
    if len(parts) == 3 and klass is not None:  # `self._state.waiters`
        owner = field_type(parts[1], caller, outline, src)
        named = [] if owner is None else outline.by_name.get(owner.text, [])
        classes = [c.index for c in named if c.kind in CLASS_LIKE]
        klass = classes[-1] if classes else None
        parts = parts[1:]
    if klass is None or len(parts) != 2:
        return None
    found = _generics(("field-generics", klass), _FIELD_GENERIC, klass, outline, src)
    return found.get(parts[1])


def _generics(
    key: tuple[str, int], pattern: re.Pattern[str], owner: int, outline: Outline, src: bytes
) -> dict[str, tuple[bool, list[str]]]:
    """name -> (a mapping, type arguments) of its first container annotation in
    node `owner`."""
    found = outline.scope_facts.get(key)
    if found is None:
        definition = tree_definition(owner, outline) if owner else None
        text = "" if definition is None else text_of(definition, src)
        found = {}
        for match in pattern.finditer(text) if "[" in text else ():
            generic = match.group(2)
            if generic in _SEQUENCES or generic in _MAPPINGS:
                arguments = _type_arguments(match.group(3))
                found.setdefault(match.group(1), (generic in _MAPPINGS, arguments))
        outline.scope_facts[key] = found
    return found  # shared: callers only read it


def _type_arguments(text: str) -> list[str]:
    """The first name of each top-level argument of `A, B[C], "D"]...`."""
    out: list[str] = []
    depth, start = 0, 0
    for offset, char in enumerate(text):
        if char == "[":
            depth += 1
        elif char in ",]" and depth == 0:
            name = _ARGUMENT_NAME.match(text[start:offset].strip())
            out.append(name.group(1) if name else "")
            start = offset + 1
            if char == "]":
                break
        elif char == "]":
            depth -= 1
    return out


def _bindings(caller: int, outline: Outline, src: bytes) -> list[_Binding]:
    key = ("bindings", caller)
    found = outline.scope_facts.get(key)
    if found is None:
        found = []
        definition = tree_definition(caller, outline) if caller else None
        if definition is not None:
            text, offset = text_of(definition, src), definition.start_byte
            ascii_only = text.isascii()

            def at(index: int) -> int:  # a character index of `text` -> a byte offset
                return offset + (index if ascii_only else len(text[:index].encode()))

            lined = "\n" + text  # `_LOOP` starts with the newline before a line
            for match in _LOOP.finditer(lined) if "for" in text else ():
                iterated = _iterated(match.group(2))
                if iterated is not None:
                    names = tuple(n.strip() for n in match.group(1).split(","))
                    found.append(_Binding(at(match.start()), names, *iterated))
            for match in _POPITEM.finditer(text) if ".popitem(" in text else ():
                container, dot, method = match.group(2).rpartition(".")
                if dot and method == "popitem":
                    names = tuple(n.strip() for n in match.group(1).split(","))
                    found.append(_Binding(at(match.start()), names, container, "popitem"))
            found.sort()
        outline.scope_facts[key] = found
    return found  # shared: callers only read it


def _iterated(text: str) -> tuple[str, str] | None:
    for pattern, how in _ITERATED:
        match = pattern.fullmatch(text)
        if match is not None:
            return match.group(1), how or match.group(2)
    return None


def _local_facts(caller: int, outline: Outline, src: bytes) -> _Facts:
    if not caller:
        return []
    key = ("locals", caller)
    facts = outline.scope_facts.get(key)
    if facts is None:
        facts = []
        definition = tree_definition(caller, outline)
        if definition is not None:
            parameters = definition.child_by_field_name("parameters")
            body = definition.child_by_field_name("body")
            if parameters is not None:
                facts += _first_types((_PARAMETER_TYPE,), text_of(parameters, src))
            if body is not None:
                text = text_of(body, src)
                facts += _first_types(_LOCAL_TYPES, text)
        outline.scope_facts[key] = facts
    return facts  # shared: callers only read it


def _module_facts(outline: Outline, src: bytes) -> _Facts:
    key = ("module-types", 0)
    facts = outline.scope_facts.get(key)
    if facts is None:
        text = src.decode("utf-8", "replace")
        facts = _first_types(_MODULE_TYPES, text)
        outline.scope_facts[key] = facts
    return facts  # shared: callers only read it


def field_type(field_name: str, caller: int, outline: Outline, src: bytes) -> ScopeType | None:
    klass = enclosing_class(caller, outline.nodes)
    if klass is None:
        return None
    key = ("fields", klass)
    facts = outline.scope_facts.get(key)
    if facts is None:
        definition = tree_definition(klass, outline)
        text = "" if definition is None else text_of(definition, src)
        facts = _first_types(_FIELD_TYPES, text)
        outline.scope_facts[key] = facts
    for types in facts:
        if field_name in types:
            return ScopeType(*types[field_name])
    if any(c.parent == klass for c in outline.by_name.get(field_name, ())):
        return ScopeType(f"self.{field_name}", True)  # a property: what it returns
    found = _parameter_fields(klass, outline, src).get(field_name)
    return found if found is not None else _class_aliases(klass, outline, src).get(field_name)


def _class_aliases(klass: int, outline: Outline, src: bytes) -> dict[str, ScopeType]:
    """attribute -> the name it is set to in the class's own body (`Validator =
    validators.Draft3Validator`): what that name holds (a class, a variable)."""
    key = ("class-aliases", klass)
    found = outline.scope_facts.get(key)
    if found is None:
        found = {}
        definition = tree_definition(klass, outline)
        body = None if definition is None else definition.child_by_field_name("body")
        for assignment in () if body is None else body.named_children:
            if assignment.type == "expression_statement" and assignment.named_children:
                assignment = assignment.named_children[0]  # older grammars wrap it
            if assignment.type != "assignment":
                continue
            left = assignment.child_by_field_name("left")
            right = assignment.child_by_field_name("right")
            if left is None or right is None or left.type != "identifier":
                continue
            if right.type in ("identifier", "attribute"):
                text = text_of(right, src)
                if _DOTTED_NAME.fullmatch(text):
                    found.setdefault(text_of(left, src), ScopeType(text, False))
        outline.scope_facts[key] = found
    return found  # shared: callers only read it


def _parameter_fields(klass: int, outline: Outline, src: bytes) -> dict[str, ScopeType]:
    """field -> the annotation of the parameter a method of `klass` sets it from
    (`def __init__(self, lock: Lock | None)` ... `self._lock = lock or Lock()`)."""
    key = ("parameter-fields", klass)
    found = outline.scope_facts.get(key)
    if found is None:
        found = {}
        for node in outline.nodes:
            if node.parent != klass or node.kind != "method":
                continue
            definition = tree_definition(node.index, outline)
            body = None if definition is None else definition.child_by_field_name("body")
            if body is None or "self." not in text_of(body, src):
                continue
            assigned = _PARAMETER_FIELD.findall(text_of(body, src))
            if not assigned:
                continue
            parameters = _local_facts(node.index, outline, src)
            typed = parameters[0] if parameters else {}
            for field_name, parameter in assigned:
                if parameter in typed:
                    found.setdefault(field_name, typed[parameter])
        outline.scope_facts[key] = found
    return found  # shared: callers only read it
