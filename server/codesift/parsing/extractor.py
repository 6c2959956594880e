"""Turn source text into nodes and edges with a tree-sitter grammar and query.

The query file of each language (see `queries/README.md`) tags:

    @definition.<kind> + @name    a definition (kind: function, method, class, ...)
      optional @receiver           a qualifier that is not an enclosing node
                                   (Go method receiver, C++ `Type::method` out of class)
    @scope + @name                 a named region that qualifies the definitions inside it
                                   but is not a node itself (Rust `impl Type`)
    @reference.call + @name        a call site; @name is the callee's name
    @reference.inherits + @name    a base class / implemented interface, inside a definition
    @import + @import.module / @import.name / @import.alias
    @package                       the package or namespace the file declares

Everything language-independent (nesting, qualified names, signatures) is done
here once; doc comments are read in comments.py, imports and inherits edges made
in structure_edges.py, calls resolved in calls.py and the language's own
calls_<language>.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from tree_sitter import Node, Query, QueryCursor

from codesift.parsing.calls import call_edges
from codesift.parsing.calls_python import absolute_import
from codesift.parsing.comments import (
    attached_start,
    attribute_doc,
    body_of,
    header_comment,
    inner_definition,
    last_equation,
    leading_comment,
    node_text,
    python_docstring,
)
from codesift.parsing.grammars import has_equations, parser_for, split_queries
from codesift.parsing.languages import LanguageSpec
from codesift.parsing.model import CallSites, ParsedEdge, ParsedFile, ParsedNode
from codesift.parsing.outline import (
    CLASS_LIKE,
    CallSite,
    Def,
    Import,
    Outline,
    last_component,
    nearest_node,
)
from codesift.parsing.structure_edges import import_edges, inherit_edges

__all__ = ["extract", "python_module_path"]

# A function directly inside one of these is a method; a module or namespace only qualifies it.
_METHOD_HOSTS = CLASS_LIKE - {"module", "namespace"}
_WS = re.compile(r"\s+")
MAX_SIGNATURE_CHARS = 400


@dataclass(slots=True)
class _Matches:
    """What the queries tag in one file, by role."""

    defs: dict[tuple[int, int], Def] = field(default_factory=dict)  # and scopes
    calls: list[CallSite] = field(default_factory=list)
    inherits: list[tuple[Node, str]] = field(default_factory=list)  # (name node, base)
    imports: list[Import] = field(default_factory=list)
    package: str = ""
    package_at: int = -1  # start byte of the package declaration taken


def python_module_path(rel_path: str) -> str:
    """`pkg/sub/mod.py` -> `pkg.sub.mod`; `pkg/__init__.py` -> `pkg`."""
    stem = rel_path.rsplit(".", 1)[0] if "." in rel_path.rsplit("/", 1)[-1] else rel_path
    parts = [p for p in stem.split("/") if p]
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _signature(node: Node, src: bytes) -> str:
    inner = inner_definition(node)
    body = body_of(inner)
    if body is not None and body.start_byte > inner.start_byte:
        # Stop before comments that sit between the header and the body.
        end = inner.start_byte
        for child in inner.children:
            if child.start_byte >= body.start_byte:
                break
            if "comment" not in child.type:
                end = child.end_byte
        raw = src[inner.start_byte : end]
    else:
        end = src.find(b"\n", inner.start_byte, inner.end_byte)
        raw = src[inner.start_byte : inner.end_byte if end < 0 else end]
    text = _WS.sub(" ", raw.decode("utf-8", "replace")).strip()
    text = text.rstrip("{:=(").rstrip()
    if text.endswith(" do"):
        text = text[:-3].rstrip()
    if len(text) > MAX_SIGNATURE_CHARS:
        text = text[: MAX_SIGNATURE_CHARS - 1] + "…"
    return text


def _name_text(node: Node, src: bytes) -> str:
    return _WS.sub("", node_text(node, src))


_ROLE_ORDER = ("reference.call", "scope", "reference.inherits", "import", "package")
_pattern_role_cache: dict[str, dict[int, str]] = {}


def _pattern_roles(language: str) -> dict[int, str]:
    """Per query pattern, which capture is its role (learned from its first match)."""
    return _pattern_role_cache.setdefault(language, {})


def _role_of(caps: dict[str, list[Node]]) -> str:
    for name in caps:
        if name.startswith("definition."):
            return name
    for name in _ROLE_ORDER:
        if name in caps:
            return name
    return ""


def extract(
    text: str,
    rel_path: str,
    spec: LanguageSpec,
    module_path: str | None = None,
    *,
    call_sites: CallSites = "resolve",
) -> ParsedFile:
    """Parse `text` and return nodes and edges (chunks are added by the caller).

    `module_path` overrides the Python module path derived from `rel_path`;
    `call_sites` says what becomes of the calls (model.CallSites): "names" leaves
    the edges' targets out (parsing/calls.py), "later" the call sites altogether.
    Syntax errors do not stop extraction: whatever tree-sitter recovered is used.
    """
    src = text.encode("utf-8")
    root = _parse(src, spec.name)
    parsed = ParsedFile(language=spec.name)
    parsed.errors = _count_errors(root)
    found = _query_matches(root, src, spec.name, calls=call_sites != "later")
    _settle_prototypes(found.defs, rel_path)
    module, prefix = _module_node(
        root, src, text, rel_path, spec, module_path, found.package, found.defs
    )
    outline = _outline(module, prefix, found.defs, spec, src)
    edges = _contains_edges(outline.nodes)
    if spec.qualifier == "python_module":
        package = prefix if rel_path.endswith("__init__.py") else prefix.rpartition(".")[0]
        found.imports = [absolute_import(item, package) for item in found.imports]
    imported, import_hints = import_edges(found.imports, spec)
    edges += imported
    language = "python" if spec.qualifier == "python_module" else spec.name
    edges += call_edges(
        found.calls,
        outline,
        found.imports,
        import_hints,
        src,
        language=language,
        rel_path=rel_path,
        prefix=prefix,
        resolve=call_sites == "resolve",
    )
    edges += inherit_edges(found.inherits, outline, import_hints)
    # "later": whether the file makes calls is not known until the call pass looks.
    parsed.calls_pending = call_sites == "later" or (
        call_sites == "names" and any(e.kind == "calls" for e in edges)
    )
    parsed.nodes = outline.nodes
    parsed.edges = edges
    return parsed


# Same-length rewrites of Bash that tree-sitter-bash misparses, after which every
# function below is swallowed by error recovery (pyenv's python-build lost 19 of its
# ~160): `${s:$i:1}` (a variable offset), `for f do` (no `;`), `[ "$a" "$@" ]` (a
# test of bare words: read as the `:` command, which is no call). Offsets stay valid
# and names and text are read from the original source.
_BASH_REWRITES = (
    (re.compile(rb"(\$\{[#!]?\w+(?:\[[^\]\n]*\])?:)\$(?=[A-Za-z_{(])"), rb"\1 "),
    (re.compile(rb"(\bfor[ \t]+\w+)[ \t](do\b)"), rb"\1;\2"),
    (re.compile(rb"(?<![\[\w$\\])\[ (?=[^\n]*? \](?:[ \t;|&)]|$))", re.MULTILINE), rb": "),
)


def _parse(src: bytes, language: str) -> Node:
    root = parser_for(language).parse(src).root_node
    if language != "bash" or not root.has_error:
        return root
    patched = src
    for pattern, replacement in _BASH_REWRITES:
        patched = pattern.sub(replacement, patched)
    retry = parser_for(language).parse(patched).root_node
    return retry if _count_errors(retry) < _count_errors(root) else root


# -- query matches: what the grammar's query tags, in source order --------------------


def _query_matches(root: Node, src: bytes, language: str, *, calls: bool = True) -> _Matches:
    """Run the language's queries over the tree and sort what they tag by role
    (`calls`: False leaves the call sites out)."""
    structure_query, calls_query = split_queries(language)
    found = _Matches(calls=_call_sites(calls_query, root, src) if calls else [])
    roles = _pattern_roles(language)
    for pattern, caps in QueryCursor(structure_query).matches(root):
        role = roles.get(pattern)
        if role is None:
            role = roles[pattern] = _role_of(caps)
        if not role:
            continue
        names = caps.get("name")
        name_node = names[0] if names else None
        if role.startswith("definition."):
            if name_node is not None:
                _add_definition(found.defs, role, caps, name_node, src)
        elif role == "scope":
            if name_node is not None:
                _add_scope(found.defs, caps[role][0], name_node, src)
        elif role == "reference.inherits":
            if name_node is not None:
                found.inherits.append((name_node, last_component(_name_text(name_node, src))))
        elif role == "import":
            found.imports.append(_import_of(caps, src))
        elif role == "package":
            _note_package(found, caps[role][0], src)
    # tree-sitter does not promise the order of captures and matches (it varies from
    # one run to the next): sorted by position, the first call site of each callee,
    # the import hints and so the summaries come out the same every time.
    found.calls.sort(key=lambda call: (call.start, call.callee))
    found.inherits.sort(key=lambda item: (item[0].start_byte, item[1]))
    found.imports.sort(key=lambda item: (item.line, item.module, item.name, item.alias))
    return found


def _call_sites(calls_query: Query, root: Node, src: bytes) -> list[CallSite]:
    sites: list[CallSite] = []
    for callee_name in QueryCursor(calls_query).captures(root).get("name", ()):
        raw = src[callee_name.start_byte : callee_name.end_byte].decode("utf-8", "replace")
        sites.append(
            CallSite(
                callee_name.start_byte,
                callee_name.start_point[0] + 1,
                last_component(raw),
                callee_name,
            )
        )
    return sites


def _add_definition(
    defs: dict[tuple[int, int], Def],
    role: str,
    caps: dict[str, list[Node]],
    name_node: Node,
    src: bytes,
) -> None:
    """Record a @definition; of two matches on one name, the larger node wins."""
    def_node = caps[role][0]
    key = (name_node.start_byte, name_node.end_byte)
    name = _name_text(name_node, src)
    if not name:
        return
    receiver_nodes = caps.get("receiver")
    receiver = _name_text(receiver_nodes[0], src) if receiver_nodes else ""
    existing = defs.get(key)
    span = def_node.end_byte - def_node.start_byte
    if existing is None:
        wins = True
    elif role == f"definition.{PROTOTYPE}":
        wins = False  # a prototype pattern never displaces another definition
    else:
        wins = (
            existing.kind == PROTOTYPE or span > existing.node.end_byte - existing.node.start_byte
        )
    if wins:
        kind = role.removeprefix("definition.")
        defs[key] = Def(kind, name, def_node, name_node, receiver)


# C and C++ function prototypes (`@definition.prototype`): in a header they are the
# library's API, documented there while the definition sits in a .c file or in no
# file of the workspace at all. Elsewhere (forward declarations in a .c file) and
# where the header defines the function too, the prototype is no node.
PROTOTYPE = "prototype"
HEADER_SUFFIXES = (".h", ".hh", ".hpp", ".hxx", ".h++")


def _settle_prototypes(defs: dict[tuple[int, int], Def], rel_path: str) -> None:
    prototypes = [key for key, d in defs.items() if d.kind == PROTOTYPE]
    if not prototypes:
        return
    if not rel_path.lower().endswith(HEADER_SUFFIXES):
        for key in prototypes:
            del defs[key]
        return
    defined = {d.name for d in defs.values() if d.kind not in (PROTOTYPE, "scope")}
    for key in prototypes:
        entry = defs[key]
        if entry.name in defined:
            del defs[key]
        else:
            entry.kind = "function"
            defined.add(entry.name)


def _add_scope(
    defs: dict[tuple[int, int], Def], scope_node: Node, name_node: Node, src: bytes
) -> None:
    # Keyed by the scope's own span (end negated) so it never collides with a definition.
    key = (scope_node.start_byte, -scope_node.end_byte)
    if key not in defs:
        name = _name_text(name_node, src)
        defs[key] = Def("scope", name, scope_node, name_node, is_scope=True)


def _import_of(caps: dict[str, list[Node]], src: bytes) -> Import:
    module = caps.get("import.module")
    imported_nodes = caps.get("import.name")
    alias_nodes = caps.get("import.alias")
    # A module path may be several sibling nodes (Scala `a.b.c`): take the span.
    raw_module = (
        _WS.sub("", src[module[0].start_byte : module[-1].end_byte].decode("utf-8", "replace"))
        if module
        else ""
    )
    return Import(
        raw_module.strip("\"'`<>"),
        _name_text(imported_nodes[0], src) if imported_nodes else "",
        _name_text(alias_nodes[0], src) if alias_nodes else "",
        caps["import"][0].start_point[0] + 1,
        # A quoted module is a path ("net/http", <stdio.h>), not a dotted name.
        raw_module[:1] in ('"', "'", "`", "<"),
    )


def _note_package(found: _Matches, declared: Node, src: bytes) -> None:
    if found.package_at < 0 or declared.start_byte < found.package_at:  # the first in the file
        found.package = _WS.sub("", node_text(declared, src)).strip(";")
        found.package_at = declared.start_byte


# -- definitions: the module node, then one node per definition -----------------------


def _module_node(
    root: Node,
    src: bytes,
    text: str,
    rel_path: str,
    spec: LanguageSpec,
    module_path: str | None,
    package: str,
    defs: dict[tuple[int, int], Def],
) -> tuple[ParsedNode, str]:
    """The file's module node, and the prefix of every qualified name in the file."""
    line_count = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    if spec.qualifier == "python_module":
        prefix = module_path if module_path is not None else python_module_path(rel_path)
        module_name = prefix.rsplit(".", 1)[-1] if prefix else rel_path
        module_qname = prefix or rel_path
        module_doc = python_docstring(root, src) if spec.body_docstring else ""
    else:
        prefix = package if spec.qualifier == "package" else ""
        module_name = rel_path.rsplit("/", 1)[-1]
        module_qname = rel_path
        def_rows = {d.node.start_point[0] for d in defs.values()}
        module_doc = header_comment(root, src, def_rows)
    module = ParsedNode(
        index=0,
        kind="module",
        name=module_name,
        qualified_name=module_qname,
        parent=None,
        start_line=1,
        end_line=max(1, line_count),
        signature=module_qname,
        docstring=module_doc,
    )
    return module, prefix


def _outline(
    module: ParsedNode,
    prefix: str,
    defs: dict[tuple[int, int], Def],
    spec: LanguageSpec,
    src: bytes,
) -> Outline:
    """Nest the definitions by position and make their nodes (module node first:
    every other node descends from it)."""
    entries = sorted(defs.values(), key=lambda d: (d.node.start_byte, -d.node.end_byte))
    outline = Outline(nodes=[module], entries=entries)
    stack: list[Def] = []
    pending_receivers: list[tuple[int, str]] = []
    for entry in entries:
        while stack and stack[-1].node.end_byte <= entry.node.start_byte:
            stack.pop()
        enclosing = stack[-1] if stack else None
        entry.parent_entry = enclosing
        stack.append(entry)
        if entry.is_scope:
            continue
        entry.index = len(outline.nodes)
        outline.nodes.append(_definition_node(entry, enclosing, prefix, spec, src))
        outline.index_by_ts_id[entry.node.id] = entry.index
        if entry.node.type == "decorated_definition":
            inner = entry.node.child_by_field_name("definition")
            if inner is not None:
                outline.index_by_ts_id[inner.id] = entry.index
        if entry.receiver:
            pending_receivers.append((entry.index, last_component(entry.receiver)))
        elif enclosing is not None and enclosing.is_scope:
            # `impl Point { fn new() }`, `extension Inventory { ... }`: the scope's type owns it.
            pending_receivers.append((entry.index, last_component(enclosing.name)))
    outline.types_by_name = {
        n.name: n.index for n in outline.nodes[1:] if n.kind in CLASS_LIKE and n.kind != "module"
    }
    _adopt_by_receiver(outline, pending_receivers)
    for n in outline.nodes[1:]:
        outline.by_name.setdefault(n.name, []).append(n)
    return outline


def _definition_node(
    entry: Def, enclosing: Def | None, prefix: str, spec: LanguageSpec, src: bytes
) -> ParsedNode:
    parent = nearest_node(enclosing)
    doc = python_docstring(entry.node, src) if spec.body_docstring else ""
    doc_start = 0
    if not doc:
        doc, doc_start = leading_comment(entry.node, src)
    if not doc and not doc_start:
        doc, doc_start = attribute_doc(entry.node, src)
    kind = _node_kind(entry, enclosing)
    return ParsedNode(
        index=entry.index,
        kind=kind,
        name=_short_name(entry.name, kind, spec),
        qualified_name=_qualified_name(entry, enclosing, prefix, spec),
        parent=parent.index if parent is not None else 0,
        start_line=attached_start(entry.node, entry.name, src),
        end_line=_end_line(
            last_equation(entry.node, entry.name, src) if has_equations(spec.name) else entry.node,
            src,
        ),
        signature=_signature(entry.node, src),
        docstring=doc,
        doc_start_line=doc_start,
    )


def _short_name(name: str, kind: str, spec: LanguageSpec) -> str:
    """The name a person calls a definition by: an Elixir module `App.Query` is
    `Query` (its qualified name keeps `App.Query`), as a class is called by its own
    name in every other language."""
    if spec.name == "elixir" and kind in ("module", "interface") and "." in name:
        return name.rsplit(".", 1)[1]
    return name


# Siblings written right above a definition that belong to it: Rust `#[attr]`, TS
# method decorators, a Haskell type signature of the same name, Elixir `@spec`/`@impl`.
# (An Elixir `@doc` is the definition's doc: its lines open the code chunk, as a doc
# comment's do, and a long one is cut off the chunk's first part.)
def _node_kind(entry: Def, enclosing: Def | None) -> str:
    """A function inside a type, an `impl` scope or with a receiver is a method."""
    if entry.kind != "function":
        return entry.kind
    if entry.receiver:
        return "method"
    if enclosing is not None and (enclosing.is_scope or enclosing.kind in _METHOD_HOSTS):
        return "method"
    return entry.kind


def _qualified_name(entry: Def, enclosing: Def | None, prefix: str, spec: LanguageSpec) -> str:
    chain: list[str] = []
    walker = enclosing
    while walker is not None:
        chain.append(walker.name)
        if walker.receiver:  # `class Foo::Bar` / `defimpl P, for: T`: keep the qualifier
            chain.append(walker.receiver)
        walker = walker.parent_entry
    chain.reverse()
    if entry.receiver:
        chain.append(entry.receiver)
    qualified = spec.separator.join([*chain, entry.name])
    if prefix:
        joiner = spec.package_separator if spec.qualifier == "package" else "."
        qualified = f"{prefix}{joiner}{qualified}"
    return qualified


def _adopt_by_receiver(outline: Outline, pending: list[tuple[int, str]]) -> None:
    """A receiver, out-of-class qualifier or scope names a type in this file: make it
    the parent."""
    for idx, recv in pending:
        parent = outline.types_by_name.get(recv.lstrip("*&"))
        if parent is not None:
            outline.nodes[idx] = replace(outline.nodes[idx], parent=parent)


def _contains_edges(nodes: list[ParsedNode]) -> list[ParsedEdge]:
    return [
        ParsedEdge(src=n.parent, kind="contains", dst_name=n.name, line=n.start_line, dst=n.index)
        for n in nodes[1:]
        if n.parent is not None
    ]


def _end_line(node: Node, src: bytes) -> int:
    # Some nodes (Scala indented blocks, trailing newlines) end in whitespace:
    # the node ends on the line of its last non-blank byte.
    end = node.end_byte
    while end > node.start_byte and src[end - 1] in b" \t\r\n":
        end -= 1
    row = node.end_point[0] - src.count(b"\n", end, node.end_byte)
    return row + 1


def _count_errors(root: Node) -> int:
    if not root.has_error:
        return 0
    count = 0
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            count += 1
            continue
        if node.has_error:
            stack.extend(node.children)
    return count
