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

Everything language-independent (nesting, qualified names, doc comments,
signatures) is done here once; calls are resolved in calls.py and the
language's own calls_<language>.py.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field, replace

from tree_sitter import Node, Query, QueryCursor

from codesift.parsing.calls import call_edges
from codesift.parsing.calls_python import absolute_import
from codesift.parsing.grammars import parser_for, split_queries
from codesift.parsing.languages import LanguageSpec
from codesift.parsing.model import ParsedEdge, ParsedFile, ParsedNode
from codesift.parsing.outline import (
    CLASS_LIKE,
    CallSite,
    Def,
    Import,
    Outline,
    last_component,
    nearest_node,
)

__all__ = ["extract", "python_module_path"]

# A function directly inside one of these is a method; a module or namespace only qualifies it.
_METHOD_HOSTS = CLASS_LIKE - {"module", "namespace"}
# Node types whose first named child may be the definition (comments precede the wrapper).
_WRAPPERS = frozenset(
    {
        "export_statement",
        "decorated_definition",
        "template_declaration",
        "attributed_statement",
        "ambient_declaration",
        "field_declaration",  # C++: a struct or class declared inside a class body
    }
)
# Top-level sections whose first definition's doc comment may end the section
# before (tree-sitter-haskell keeps a comment after the imports inside them).
_SECTIONS = frozenset({"declarations"})
_BODY_TYPES = frozenset(
    {
        "block",
        "body",
        "class_body",
        "declaration_list",
        "field_declaration_list",
        "compound_statement",
        "statement_block",
        "enum_body",
        "interface_body",
        "enum_variant_list",
        "body_statement",
        "do_block",
        "template_body",
        "function_body",
        "class_declaration_body",
        "protocol_body",
        "enum_class_body",
    }
)
# `signature`: a Haskell type signature sits between the haddock and the first equation.
_SKIPPABLE_BEFORE_DOC = frozenset(
    {"attribute_item", "decorator", "annotation", "attribute", "signature"}
)
_COMMENT_PREFIX = re.compile(r"^\s*(?:///?!?|/\*\*?|\*/|\*|#+!?|--+ ?\|?|;+|%+)\s?")
_WS = re.compile(r"\s+")
MAX_SIGNATURE_CHARS = 400
MAX_DOC_CHARS = 400


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


def _text(node: Node, src: bytes) -> str:
    return src[node.start_byte : node.end_byte].decode("utf-8", "replace")


def _clean_comment(raw: str) -> str:
    lines = []
    for line in raw.splitlines():
        line = _COMMENT_PREFIX.sub("", line, count=1)
        line = line.rstrip().removesuffix("*/").rstrip()
        lines.append(line)
    return "\n".join(lines).strip()


def _is_comment(node: Node) -> bool:
    return "comment" in node.type or node.type == "haddock"  # Haskell `-- |` docs


def _skippable_before_doc(node: Node) -> bool:
    """An attribute, decorator or annotation between a doc comment and its
    definition. tree-sitter-kotlin reads an annotation with arguments on a line of
    its own at the top level (`@OptIn(X::class)` above `inline fun ...`) as an
    expression starting with that annotation."""
    if node.type in _SKIPPABLE_BEFORE_DOC:
        return True
    first = node.named_children[0] if node.type == "prefix_expression" else None
    return first is not None and first.type == "annotation"


# Tags of a `/** ... */` block that describes its file or sets a tool's pragma.
_FILE_DOC_TAGS = re.compile(
    r"@(?:module|file|fileoverview|overview|packageDocumentation|license|jsx\w*)\b"
)


def _detached_doc(comment: Node, src: bytes, anchor: Node) -> bool:
    """A `/** ... */` doc comment with only blank lines between it and its
    definition: Javadoc, KDoc, JSDoc and PHPDoc attach it all the same (a licence,
    a file's own description or a pragma is not a definition's doc)."""
    text = _text(comment, src)
    return (
        text.startswith("/**")
        and not src[comment.end_byte : anchor.start_byte].strip()
        and not _NOT_A_FILE_DOC.search(text[:400])
        and not _FILE_DOC_TAGS.search(text)
    )


def _leading_comment(node: Node, src: bytes) -> tuple[str, int]:
    """The doc comment right above a definition, cleaned, and the 1-based line it
    starts on (0 when there is none)."""
    target = node
    while True:
        prev = target.prev_named_sibling
        anchor = target  # the comment must end right above the skipped attributes
        while prev is not None and _skippable_before_doc(prev):
            anchor = prev
            prev = prev.prev_named_sibling
        if prev is not None and "comment" not in prev.type:
            # tree-sitter-kotlin puts the comments after a package/import header
            # inside that header: take them when they are its last tokens.
            tail = prev
            while tail.child_count and not _is_comment(tail):
                tail = tail.children[-1]
            if _is_comment(tail):
                prev = tail
        if prev is not None and _is_comment(prev):
            break
        parent = target.parent
        # The first statement of a body: Ruby keeps the comment above it outside the
        # body (`module M` / `# doc` / `class A` puts the comment before body_statement).
        if parent is not None and (
            parent.type in _WRAPPERS
            or (prev is None and (parent.type in _BODY_TYPES or parent.type in _SECTIONS))
        ):
            target = parent
            continue
        return "", 0
    comments: list[str] = []
    expected_row = anchor.start_point[0]
    if prev.end_point[0] < expected_row - 1 and _detached_doc(prev, src, anchor):
        expected_row = prev.end_point[0] + 1
    while prev is not None and _is_comment(prev) and prev.end_point[0] >= expected_row - 1:
        before = prev.prev_sibling
        if (
            before is not None
            and before.end_point[0] == prev.start_point[0]
            and prev.end_point[0] < expected_row
        ):
            break  # a trailing comment of the line above, not a doc
        comments.append(_text(prev, src))
        expected_row = prev.start_point[0]
        prev = prev.prev_named_sibling
    comments.reverse()
    if not comments:
        return "", 0
    return _clean_comment("\n".join(comments))[:MAX_DOC_CHARS], expected_row + 1


# A comment block at the top of a file that is not the file's description: licences,
# editor and tool directives, shebangs.
_NOT_A_FILE_DOC = re.compile(
    r"copyright|licen[cs]e|spdx-|all rights reserved|-\*-|vim?:|eslint|prettier|@ts-|"
    r"go:build|\+build|clang-format|nolint|pylint|generated|do not edit|^!|"
    r"frozen_string_literal|coding[:=]|^\s*@(?:file|flow|jsx|format)\b",
    re.IGNORECASE,
)
# Top-level nodes that may stand between a file's first comments and its code.
_HEADER_CLAUSES = frozenset(
    {
        "package_clause",
        "package_declaration",
        "package_header",
        "inner_attribute_item",
        "shebang",
        "hash_bang_line",
    }
)


def _header_comment(root: Node, src: bytes, def_rows: Collection[int]) -> str:
    """A file's description in languages without module docstrings: the first
    comment block at its top (before its first statement other than a package
    clause) that is not a licence, a shebang, a tool directive or the doc comment
    of a definition starting right below it (`def_rows`: 0-based rows where
    definitions start)."""
    blocks: list[list[Node]] = []
    for child in root.children:
        if _is_comment(child):
            if blocks and child.start_point[0] <= blocks[-1][-1].end_point[0] + 1:
                blocks[-1].append(child)
            else:
                blocks.append([child])
        elif child.type not in _HEADER_CLAUSES:
            below = blocks[-1][-1].end_point[0] + 1 if blocks else -1
            if below == child.start_point[0] and below in def_rows:
                blocks.pop()  # the first definition's own doc comment
            break
    for block in blocks:
        raw = "\n".join(_text(c, src) for c in block)
        if raw.startswith("#!"):
            raw = raw.split("\n", 1)[1] if "\n" in raw else ""
        cleaned = _clean_comment(raw)
        if cleaned and not _NOT_A_FILE_DOC.search(cleaned[:400]):
            return cleaned[:MAX_DOC_CHARS]
    return ""


def _inner_definition(node: Node) -> Node:
    if node.type == "decorated_definition":
        inner = node.child_by_field_name("definition")
        if inner is not None:
            return inner
    return node


def _body_of(node: Node) -> Node | None:
    body = node.child_by_field_name("body")
    if body is not None:
        return body
    for child in node.named_children:
        if child.type in _BODY_TYPES:
            return child
    return None


def _python_docstring(node: Node, src: bytes) -> str:
    body = node if node.type == "module" else _body_of(_inner_definition(node))
    if body is None:
        return ""
    for child in body.named_children:
        if child.type == "comment":
            continue
        string = child
        if child.type == "expression_statement" and child.named_child_count == 1:
            string = child.named_children[0]
        if string.type == "string":
            parts = [c for c in string.named_children if c.type == "string_content"]
            raw = "".join(_text(p, src) for p in parts)
            return _dedent_doc(raw)[:MAX_DOC_CHARS]
        return ""
    return ""


def _dedent_doc(raw: str) -> str:
    lines = raw.expandtabs().splitlines()
    if not lines:
        return ""
    indents = [len(x) - len(x.lstrip()) for x in lines[1:] if x.strip()]
    cut = min(indents) if indents else 0
    out = [lines[0].strip()] + [x[cut:].rstrip() for x in lines[1:]]
    return "\n".join(out).strip()


def _signature(node: Node, src: bytes) -> str:
    inner = _inner_definition(node)
    body = _body_of(inner)
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


_SCRIPT_EXTENSIONS = (".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx")


def _import_tail(target: str) -> str:
    """The local-looking name of an import path: its last segment (`net/http` ->
    `http`, `<sys/stat.h>` -> `stat.h`), without a script extension
    (`./util/format.js` -> `format`) since those are bound by their stem."""
    stem = target.rstrip("/").rsplit("/", 1)[-1] or target
    for ext in _SCRIPT_EXTENSIONS:
        if stem.endswith(ext) and len(stem) > len(ext):
            return stem[: -len(ext)]
    return stem


def _name_text(node: Node, src: bytes) -> str:
    return _WS.sub("", _text(node, src))


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
) -> ParsedFile:
    """Parse `text` and return nodes and edges (chunks are added by the caller).

    `module_path` overrides the Python module path derived from `rel_path`.
    Syntax errors do not stop extraction: whatever tree-sitter recovered is used.
    """
    src = text.encode("utf-8")
    root = _parse(src, spec.name)
    parsed = ParsedFile(language=spec.name)
    parsed.errors = _count_errors(root)
    found = _query_matches(root, src, spec.name)
    _settle_prototypes(found.defs, rel_path)
    module, prefix = _module_node(
        root, src, text, rel_path, spec, module_path, found.package, found.defs
    )
    outline = _outline(module, prefix, found.defs, spec, src)
    edges = _contains_edges(outline.nodes)
    if spec.qualifier == "python_module":
        package = prefix if rel_path.endswith("__init__.py") else prefix.rpartition(".")[0]
        found.imports = [absolute_import(item, package) for item in found.imports]
    import_edges, import_hints = _import_edges(found.imports, spec)
    edges += import_edges
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
    )
    edges += _inherit_edges(found.inherits, outline, import_hints)
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


def _query_matches(root: Node, src: bytes, language: str) -> _Matches:
    """Run the language's queries over the tree and sort what they tag by role."""
    structure_query, calls_query = split_queries(language)
    found = _Matches(calls=_call_sites(calls_query, root, src))
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
        found.package = _WS.sub("", _text(declared, src)).strip(";")
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
        module_doc = _python_docstring(root, src) if spec.body_docstring else ""
    else:
        prefix = package if spec.qualifier == "package" else ""
        module_name = rel_path.rsplit("/", 1)[-1]
        module_qname = rel_path
        def_rows = {d.node.start_point[0] for d in defs.values()}
        module_doc = _header_comment(root, src, def_rows)
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
    doc = _python_docstring(entry.node, src) if spec.body_docstring else ""
    doc_start = 0
    if not doc:
        doc, doc_start = _leading_comment(entry.node, src)
    if not doc and not doc_start:
        doc, doc_start = _attribute_doc(entry.node, src)
    kind = _node_kind(entry, enclosing)
    return ParsedNode(
        index=entry.index,
        kind=kind,
        name=_short_name(entry.name, kind, spec),
        qualified_name=_qualified_name(entry, enclosing, prefix, spec),
        parent=parent.index if parent is not None else 0,
        start_line=_attached_start(entry.node, entry.name, src),
        end_line=_end_line(_last_equation(entry.node, entry.name, src), src),
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
_ATTACHED_BEFORE = frozenset({"attribute_item", "decorator", "annotation", "attribute"})
_ELIXIR_ATTACHED = frozenset({"spec", "impl", "deprecated"})


def _elixir_attribute(sibling: Node, src: bytes) -> str:
    """`doc` for `@doc "..."`, `spec` for `@spec ...`; "" for anything else."""
    if sibling.type != "unary_operator" or not _text(sibling, src).startswith("@"):
        return ""
    operand = sibling.child_by_field_name("operand")
    target = operand.child_by_field_name("target") if operand is not None else None
    return _text(target, src) if target is not None else ""


def _is_attached(sibling: Node, name: str, src: bytes) -> bool:
    if sibling.type in _ATTACHED_BEFORE:
        return True
    if sibling.type == "signature":
        named = sibling.child_by_field_name("name")
        return named is not None and _text(named, src) == name
    return _elixir_attribute(sibling, src) in _ELIXIR_ATTACHED


def _attached_start(node: Node, name: str, src: bytes) -> int:
    """The definition's first line, counting the attributes written above it."""
    first = node
    prev = node.prev_named_sibling
    while prev is not None and _is_attached(prev, name, src):
        first = prev
        prev = prev.prev_named_sibling
    return first.start_point[0] + 1


def _last_equation(node: Node, name: str, src: bytes) -> Node:
    """A Haskell function's last equation (`f [] = ..` / `f (x:xs) = ..`): its node is
    the first one, its lines run to the last."""
    last = node
    after = node.next_named_sibling
    while after is not None and after.type in ("function", "bind"):
        named = after.child_by_field_name("name")
        if named is None or _text(named, src) != name:
            break
        last = after
        after = after.next_named_sibling
    return last


def _attribute_doc(node: Node, src: bytes) -> tuple[str, int]:
    """Elixir `@doc` attributes above a definition (among its `@spec`/`@impl`): the
    doc text and the 1-based line the first one starts on (0 when there is none)."""
    text, line = "", 0
    prev = node.prev_named_sibling
    while prev is not None:
        attribute = _elixir_attribute(prev, src)
        if attribute == "doc":  # `@doc """..."""`, `@doc false`, `@doc since: "1.0"`
            arguments = prev.named_children[0].named_children[-1]
            parts = [
                c
                for s in arguments.named_children
                if s.type in ("string", "sigil")  # `@doc ~S"""..."""`
                for c in s.named_children
            ]
            raw = "".join(_text(p, src) for p in parts if p.type == "quoted_content")
            text = _dedent_doc(raw)[:MAX_DOC_CHARS] or text
            line = prev.start_point[0] + 1
        elif attribute not in _ELIXIR_ATTACHED:
            break
        prev = prev.prev_named_sibling
    return text, line


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


# -- imports ---------------------------------------------------------------------------


def _import_edges(
    imports: list[Import], spec: LanguageSpec
) -> tuple[list[ParsedEdge], dict[str, str]]:
    """One imports edge per imported target, and the qualified name each local name
    stands for (the hint a call or base of that name carries when it stays unresolved)."""
    edges: list[ParsedEdge] = []
    hints: dict[str, str] = {}
    sep = _import_separator(spec)
    seen: set[tuple[str, str]] = set()
    for module, imported, alias, line, is_path in imports:
        target = imported or module
        if not target:
            continue
        hint = f"{module}{sep}{imported}" if module and imported else target
        short = (
            _import_tail(target)
            if (is_path or "/" in target) and not imported
            else (last_component(target))
        )
        hints.setdefault(alias or short, hint)
        if (target, hint) in seen:
            continue
        seen.add((target, hint))
        edges.append(ParsedEdge(src=0, kind="imports", dst_name=short, line=line, dst_hint=hint))
    return edges, hints


def _import_separator(spec: LanguageSpec) -> str:
    if spec.qualifier == "python_module":
        return "."
    if spec.qualifier == "package":
        return spec.package_separator
    return spec.separator


# -- inherits --------------------------------------------------------------------------


def _inherit_edges(
    inherits: list[tuple[Node, str]], outline: Outline, import_hints: dict[str, str]
) -> list[ParsedEdge]:
    """One inherits edge per base class / implemented interface of a node."""
    scopes = [e for e in outline.entries if e.is_scope]
    edges: list[ParsedEdge] = []
    for name_node, base in inherits:
        if not base:
            continue
        owner = _enclosing_index(name_node, outline.index_by_ts_id) or _scope_owner(
            name_node, scopes, outline.types_by_name
        )
        if owner == 0:
            continue
        candidates = [n for n in outline.by_name.get(base, ()) if n.kind in CLASS_LIKE]
        dst = candidates[0].index if len(candidates) == 1 else None
        if dst == owner:  # `@behaviour App.Policy` inside `defmodule Policy`: another Policy
            dst = None
        edges.append(
            ParsedEdge(
                src=owner,
                kind="inherits",
                dst_name=base,
                line=name_node.start_point[0] + 1,
                dst=dst,
                dst_hint="" if dst is not None else import_hints.get(base, ""),
            )
        )
    return edges


def _enclosing_index(node: Node, index_by_ts_id: dict[int, int]) -> int:
    """The node index of the closest definition around a tree-sitter node (0: none)."""
    walker: Node | None = node.parent
    while walker is not None:
        idx = index_by_ts_id.get(walker.id)
        if idx is not None:
            return idx
        walker = walker.parent
    return 0


def _scope_owner(node: Node, scopes: list[Def], types_by_name: dict[str, int]) -> int:
    """The type a scope (`impl Trait for Type`, `extension Type: P`) names, if in this file."""
    inner: Def | None = None
    for scope in scopes:
        contains = scope.node.start_byte <= node.start_byte <= node.end_byte <= scope.node.end_byte
        if contains and (inner is None or scope.node.start_byte >= inner.node.start_byte):
            inner = scope
    return types_by_name.get(last_component(inner.name), 0) if inner is not None else 0


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
