"""Which language a file is, and how each grammar-backed language is parsed.

Languages with a tree-sitter query file in `parsing/queries/<name>.scm` get
nodes, edges and per-node chunks. `markdown` and `rst` are split into heading
sections; `sql`, `openapi` and `jsonschema` into resources (a table, an
endpoint, a schema). Every other text file is `text` and is indexed as line
windows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Literal

__all__ = [
    "DOCUMENT_LANGUAGES",
    "LANGUAGES",
    "LanguageSpec",
    "QualifierStyle",
    "detect_language",
    "refine_language",
    "spec_for",
]

# How a definition's qualified name is prefixed:
#   python_module  dotted module path from the file path (pkg.mod.Class.method)
#   package        the file's @package capture (Go `http.Serve`, Java `java.util.List.add`)
#   none           only enclosing definitions (Rust `Type::method`, C++ `ns::Type::f`)
QualifierStyle = Literal["python_module", "package", "none"]


@dataclass(frozen=True, slots=True)
class LanguageSpec:
    name: str
    grammar: str  # name in tree-sitter-language-pack
    extensions: tuple[str, ...]
    separator: str = "."
    qualifier: QualifierStyle = "none"
    filenames: tuple[str, ...] = ()
    # Python-style docstrings: the first string statement of the body.
    body_docstring: bool = False
    # Joins the @package prefix to a qualified name and an import's module to its names.
    package_separator: str = "."


LANGUAGES: dict[str, LanguageSpec] = {
    spec.name: spec
    for spec in (
        LanguageSpec(
            "python",
            "python",
            (".py", ".pyi", ".pyw"),
            qualifier="python_module",
            body_docstring=True,
        ),
        LanguageSpec("javascript", "javascript", (".js", ".mjs", ".cjs", ".jsx")),
        LanguageSpec("typescript", "typescript", (".ts", ".mts", ".cts")),
        LanguageSpec("tsx", "tsx", (".tsx",)),
        LanguageSpec("go", "go", (".go",), qualifier="package"),
        LanguageSpec("rust", "rust", (".rs",), separator="::"),
        LanguageSpec("java", "java", (".java",), qualifier="package"),
        LanguageSpec("c", "c", (".c", ".h")),
        LanguageSpec(
            "cpp",
            "cpp",
            (".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++", ".ipp"),
            separator="::",
        ),
        LanguageSpec("csharp", "csharp", (".cs",), qualifier="package"),
        LanguageSpec(
            "ruby",
            "ruby",
            (".rb", ".rake", ".gemspec"),
            separator="::",
            filenames=("Rakefile", "Gemfile"),
        ),
        LanguageSpec(
            "php", "php", (".php",), separator="::", qualifier="package", package_separator="\\"
        ),
        LanguageSpec("kotlin", "kotlin", (".kt", ".kts"), qualifier="package"),
        LanguageSpec("swift", "swift", (".swift",)),
        LanguageSpec("scala", "scala", (".scala", ".sc"), qualifier="package"),
        LanguageSpec("elixir", "elixir", (".ex", ".exs")),
        LanguageSpec("haskell", "haskell", (".hs",), qualifier="package"),
        LanguageSpec("lua", "lua", (".lua",)),
        LanguageSpec("zig", "zig", (".zig",)),
        LanguageSpec(
            "bash",
            "bash",
            (".sh", ".bash", ".zsh"),
            filenames=(".bashrc", ".bash_profile"),
        ),
    )
}

MARKDOWN_EXTENSIONS = (".md", ".markdown", ".mdx", ".mdown")
# Languages without a grammar that are parsed into sections or resources
# (parsing/__init__.py); `openapi` and `jsonschema` are told by content.
DOCUMENT_LANGUAGES: tuple[str, ...] = ("markdown", "rst", "sql", "openapi", "jsonschema")
_DOCUMENT_EXTENSIONS = {".rst": "rst", ".rest": "rst", ".sql": "sql", ".ddl": "sql"}
# Where `refine_language` looks for an API description or a schema, and how far.
_STRUCTURED_EXTENSIONS = (".json", ".yaml", ".yml")
_SNIFF_CHARS = 4096

_BY_EXTENSION: dict[str, str] = {
    ext: spec.name for spec in LANGUAGES.values() for ext in spec.extensions
}
_BY_FILENAME: dict[str, str] = {
    fname: spec.name for spec in LANGUAGES.values() for fname in spec.filenames
}


def detect_language(path: str) -> str:
    """Language id for a relative POSIX path: a key of LANGUAGES, one of
    DOCUMENT_LANGUAGES, or "text"."""
    pure = PurePosixPath(path)
    by_name = _BY_FILENAME.get(pure.name)
    if by_name:
        return by_name
    suffix = pure.suffix.lower()
    if suffix in MARKDOWN_EXTENSIONS:
        return "markdown"
    if suffix == ".json" and pure.name.lower().endswith(".schema.json"):
        return "jsonschema"
    return _DOCUMENT_EXTENSIONS.get(suffix) or _BY_EXTENSION.get(suffix, "text")


def spec_for(language: str) -> LanguageSpec | None:
    return LANGUAGES.get(language)


# `#!/usr/bin/env bash`, `#!/bin/sh -e`, `#!/usr/bin/env -S python3 -u`: the interpreter.
_SHEBANG = re.compile(r"#!\s*(?:\S*/)?(?:env\s+(?:-\S+\s+)*)?(?:\S*/)?([A-Za-z]+)")
_INTERPRETERS = {
    "bash": "bash",
    "sh": "bash",
    "zsh": "bash",
    "ksh": "bash",
    "dash": "bash",
    "python": "python",
    "ruby": "ruby",
    "node": "javascript",
    "php": "php",
    "lua": "lua",
    "elixir": "elixir",
}
# Lines only C++ has; a C header shared with C++ (`extern "C"`) has none of them.
_CPP_HEADER_LINE = re.compile(
    r"^\s*(?:namespace\s+[\w:]+\s*\{|template\s*<|(?:public|private|protected)\s*:"
    r"|class\s+\w+(?:\s+final)?\s*(?::[^;{]*)?\{?\s*$"
    r"|#\s*include\s*<(?:string|vector|memory|map|set|atomic|mutex|cstdint|cstddef"
    r"|cstdio|cstdlib|cstring|functional|utility|algorithm|iostream|deque|thread)>)",
    re.MULTILINE,
)


# What tells an API description or a schema: a top-level `openapi` / `swagger`
# key, or a top-level `$schema` naming json-schema.org (editor configs name the
# schemastore.org schemas they follow; a test suite nests schemas in a list).
# YAML: keys at column 0. JSON: keys of the root object, told by a scan of the
# strings and brackets of the first few KB.
_YAML_API = re.compile(r"""^["']?(?:openapi|swagger)["']?[ \t]*:""", re.MULTILINE)
_YAML_SCHEMA = re.compile(
    r"""^["']?\$schema["']?[ \t]*:[ \t]*["']?[^"'\s]*json-schema\.org""", re.MULTILINE
)
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]')
_SCHEMA_URL = re.compile(r"https?://json-schema\.org/")


def _json_root_keys(head: str) -> dict[str, str]:
    """The keys of a JSON text's root object seen in `head`, each with its
    value when that is a string ("" otherwise)."""
    keys: dict[str, str] = {}
    depth = 0
    key = ""
    expect_value = False
    for token in _JSON_TOKEN.findall(head):
        if token in "{[":
            depth += 1
            expect_value = False
        elif token in "}]":
            depth -= 1
        elif token == ":":
            expect_value = depth == 1
        elif token == ",":
            expect_value = False
        elif depth == 1:
            if expect_value:
                keys[key] = token[1:-1]
                expect_value = False
            else:
                key = token[1:-1]
                keys.setdefault(key, "")
        if depth <= 0 and token in "}]":
            break
    return keys


def _structured_language(path: str, text: str) -> str:
    head = text[:_SNIFF_CHARS].lstrip("\ufeff")
    if path.lower().endswith(".json") or head.lstrip().startswith("{"):
        if not head.lstrip().startswith("{"):
            return "text"
        keys = _json_root_keys(head)
        if "openapi" in keys or "swagger" in keys:
            return "openapi"
        if _SCHEMA_URL.match(keys.get("$schema", "")):
            return "jsonschema"
        return "text"
    if _YAML_API.search(head):
        return "openapi"
    if _YAML_SCHEMA.search(head):
        return "jsonschema"
    return "text"


def refine_language(path: str, language: str, text: str) -> str:
    """The language of a file whose path does not tell it: an extensionless script
    by its `#!` line (pyenv's `libexec/pyenv-init` is Bash), a `.h` header by its
    content (C++ projects write their headers as `.h`), a `.json` / `.yaml` file
    that is an OpenAPI description or a JSON Schema by its first few KB.
    Otherwise `language`."""
    if language == "text" and path.lower().endswith(_STRUCTURED_EXTENSIONS):
        return _structured_language(path, text)
    if language == "text" and text.startswith("#!"):
        match = _SHEBANG.match(text)
        interpreter = match.group(1).rstrip("0123456789.") if match else ""
        return _INTERPRETERS.get(interpreter, language)
    if language == "c" and path.endswith(".h") and _CPP_HEADER_LINE.search(text):
        return "cpp"
    return language
