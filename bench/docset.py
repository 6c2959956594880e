#!/usr/bin/env python3
"""The generated measuring stick: questions made from doc comments of Debian-packaged code.

Run by hand from the repository root (with the project's interpreter):

    PYTHONPATH=server python bench/docset.py [--check] [--readme]

The recipe (bench/docset/README.md says more):

1. every package of SOURCES is fetched at its pinned version with `apt-get download
   PACKAGE=VERSION` into bench/.data/docset/debs and its SHA-256 compared with the pinned
   one; `dpkg-deb -x` unpacks it and the listed members (folders or files; members of a
   zip for the JDK's sources) are copied into bench/.data/docset/corpora/NAME;
2. every source file of the package's language is parsed with tree-sitter (the grammars
   of tree-sitter-language-pack, not codesift's extractor) and every definition with a
   doc comment (the comment block right above it, or a Python docstring) is a candidate;
3. a candidate's question is the first sentence of its doc comment, with the
   definition's own name, its file's stem and every identifier part of both removed, in
   three styles: the whole sentence (`long`, category `semantic`), 3-4 of its content
   words (`short`, category `semantic`) and, for a name defined once in the package, the
   bare name (`long`, category `symbol`); its target is the definition's span (doc
   comment included);
4. per package, at most QUESTIONS_PER_STYLE candidates per style are drawn with a
   random.Random seeded by SEED and the package name; the packages of each language are
   split into `train` and `held-out` by the same seed (at least one of each per
   language). Tuning reads the train split only.

Outputs (never committed): bench/.data/docset/questions/NAME.json in the dev sets' query
format plus `style`, `split` and `name` fields, and bench/.data/docset/manifest.json
(packages, digests, counts). `--check` rebuilds into a scratch folder and compares
digests with the cached build: the recipe is deterministic bit for bit.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "DOCSET_DIR",
    "DOCSET_NAMES",
    "SEED",
    "SOURCES",
    "Candidate",
    "DocsetSource",
    "build",
    "docset_corpus",
    "docset_questions",
    "first_sentence",
    "load_manifest",
    "question_text",
    "short_words",
]

BENCH_DIR = Path(__file__).resolve().parent
DOCSET_DIR = BENCH_DIR / ".data" / "docset"
SEED = "codesift-docset-1"
QUESTIONS_PER_STYLE = 40
SYMBOL_QUESTIONS = 20
MAX_SPAN_LINES = 150
FORMAT_VERSION = 1

Json = dict[str, Any]
Log = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class DocsetSource:
    """One package of the stick: a Debian binary package and what of it is the corpus."""

    name: str
    language: str
    package: str
    version: str
    sha256: str
    members: tuple[str, ...]  # paths inside the package (folders or files), or zip members
    zip_member: str = ""  # the zip inside the package whose `members` are taken
    rename: tuple[tuple[str, str], ...] = ()  # (path in corpus, new name): extension-less scripts
    licence: str = ""


SOURCES: tuple[DocsetSource, ...] = (
    # Python
    DocsetSource(
        "py-click",
        "python",
        "python3-click",
        "8.1.3-2",
        "c3af7e231d711f7fdb9a2fac4954061fe423ea517279bc30bf95a0920738279b",
        ("usr/lib/python3/dist-packages/click",),
        licence="BSD-3-Clause",
    ),
    DocsetSource(
        "py-attrs",
        "python",
        "python3-attr",
        "22.2.0-1",
        "6a12ea96a8a909445a982975279f96d7b9a1ff96c912efff39abc8d92372694a",
        ("usr/lib/python3/dist-packages/attr", "usr/lib/python3/dist-packages/attrs"),
        licence="MIT",
    ),
    DocsetSource(
        "py-requests",
        "python",
        "python3-requests",
        "2.28.1+dfsg-1",
        "c75b5c05d8d4a813bd83c3d432ffe65a2ca13e771bc91d4b9787690097598603",
        ("usr/lib/python3/dist-packages/requests",),
        licence="Apache-2.0",
    ),
    DocsetSource(
        "py-werkzeug",
        "python",
        "python3-werkzeug",
        "2.2.2-3+deb12u1",
        "283e2d849e93531581948b0c49ebdd3831c0a5fc22edb7bc08efd3c38ae055b8",
        ("usr/lib/python3/dist-packages/werkzeug",),
        licence="BSD-3-Clause",
    ),
    # Go
    DocsetSource(
        "go-cobra",
        "go",
        "golang-github-spf13-cobra-dev",
        "1.6.1-1",
        "4f5d20855133319beef3c5b49d3c21a0406f270bf94fb4b6f4d406b691283cb2",
        ("usr/share/gocode/src/github.com/spf13/cobra",),
        licence="Apache-2.0",
    ),
    DocsetSource(
        "go-logrus",
        "go",
        "golang-github-sirupsen-logrus-dev",
        "1.9.0-1",
        "51fb87b05452e96be38b97c03d5f997f6ce3a144421f911338d6c4ea2e8aa118",
        ("usr/share/gocode/src/github.com/sirupsen/logrus",),
        licence="MIT",
    ),
    DocsetSource(
        "go-cmp",
        "go",
        "golang-github-google-go-cmp-dev",
        "0.5.9-1",
        "b68bd919daa7c1bdf02abfb68894e29e532f19b03b68c8615f50626c48f553b6",
        ("usr/share/gocode/src/github.com/google/go-cmp",),
        licence="BSD-3-Clause",
    ),
    DocsetSource(
        "go-errors",
        "go",
        "golang-github-pkg-errors-dev",
        "0.9.1-2",
        "87227544904795f81d8c660b7854045a1ef78d5c690993bb4a0c43e05104ca64",
        ("usr/share/gocode/src/github.com/pkg/errors",),
        licence="BSD-2-Clause",
    ),
    # Rust
    DocsetSource(
        "rs-anyhow",
        "rust",
        "librust-anyhow-dev",
        "1.0.69-1",
        "f877f024d95d8af3c3f62e2cf74e6ba5eb976a3cf27c920bda786cd32029b79d",
        ("usr/share/cargo/registry/anyhow-1.0.69",),
        licence="MIT OR Apache-2.0",
    ),
    DocsetSource(
        "rs-itertools",
        "rust",
        "librust-itertools-dev",
        "0.10.3-1",
        "3e13fc328508275c2c84270133f41a300ffb58b9b77001b89373ba7f7ab57fde",
        ("usr/share/cargo/registry/itertools-0.10.3",),
        licence="MIT OR Apache-2.0",
    ),
    DocsetSource(
        "rs-semver",
        "rust",
        "librust-semver-dev",
        "1.0.14-1",
        "bf3719b7aac4b7f16f0d68a7037306dbc1532758fe7a5dea01254e85cecaca8c",
        ("usr/share/cargo/registry/semver-1.0.14",),
        licence="MIT OR Apache-2.0",
    ),
    DocsetSource(
        "rs-clap",
        "rust",
        "librust-clap-dev",
        "4.0.32-1",
        "00922f24c3eb5a899ae4438ebf7be2e82085559ee45055dbc856cdb113de9ebb",
        ("usr/share/cargo/registry/clap-4.0.32",),
        licence="MIT OR Apache-2.0",
    ),
    # Ruby
    DocsetSource(
        "rb-rack",
        "ruby",
        "ruby-rack",
        "2.2.22-0+deb12u2",
        "7ba26a66f6981b48ac604c9b829de51bdfc5d5ec8f329cf823b0aab72f718354",
        ("usr/share/rubygems-integration/all/gems/rack-2.2.22",),
        licence="MIT",
    ),
    DocsetSource(
        "rb-thor",
        "ruby",
        "ruby-thor",
        "1.2.1-2",
        "509715d16039ee7336531718e2497d0f81ae125b9ee53f321dd909c2f03fd2e1",
        ("usr/share/rubygems-integration/all/gems/thor-1.2.1",),
        licence="MIT",
    ),
    DocsetSource(
        "rb-addressable",
        "ruby",
        "ruby-addressable",
        "2.8.1-1",
        "4d6027d0bd7c2d63e965a2f728d30aba0f64e2745742c2ac861f163b7aa887fb",
        ("usr/share/rubygems-integration/all/gems/addressable-2.8.1",),
        licence="Apache-2.0",
    ),
    DocsetSource(
        "rb-mustermann",
        "ruby",
        "ruby-mustermann",
        "3.0.0-2",
        "951ce99726f797e9d28e4f64175733e007930109d295e8070e46ecf6f862c892",
        ("usr/share/rubygems-integration/all/gems/mustermann-3.0.0",),
        licence="MIT",
    ),
    # PHP
    DocsetSource(
        "php-monolog",
        "php",
        "php-monolog",
        "2.9.1-1",
        "f8a26688b521e33cf6ef73b75ae5eac0cb026d986a336161456dd37dbb710681",
        ("usr/share/php/Monolog",),
        licence="MIT",
    ),
    DocsetSource(
        "php-symfony-console",
        "php",
        "php-symfony-console",
        "5.4.53+dfsg-0+deb12u1",
        "64bd4cbdd9556ee3fd212e444a8df4aa0af00e09c81abb8634eff819a7bab62b",
        ("usr/share/php/Symfony/Component/Console",),
        licence="MIT",
    ),
    DocsetSource(
        "php-psr7",
        "php",
        "php-guzzlehttp-psr7",
        "2.4.5-1+deb12u1",
        "62a536ac1e6f7fc47e6f36562e0049da3023b3adeac1be114c9fda2fbc08eb52",
        ("usr/share/php/GuzzleHttp/Psr7",),
        licence="MIT",
    ),
    DocsetSource(
        "php-commonmark",
        "php",
        "php-league-commonmark",
        "2.3.9-1+deb12u1",
        "c702ba9fbe6727f011f25eba2bdb89871b56f37d811092e51089816df8eecd81",
        ("usr/share/php/League/CommonMark",),
        licence="BSD-3-Clause",
    ),
    # Java (the JDK's own sources, one module folder each)
    DocsetSource(
        "java-concurrent",
        "java",
        "openjdk-17-source",
        "17.0.21.1+2-1~deb12u1",
        "5106aa3881e3b49568823ebdfc3755d4043f6f53bbfc996d0efee03172dc0a9b",
        ("java.base/java/util/concurrent/",),
        zip_member="usr/lib/jvm/openjdk-17/lib/src.zip",
        licence="GPL-2.0 with Classpath exception",
    ),
    DocsetSource(
        "java-time",
        "java",
        "openjdk-17-source",
        "17.0.21.1+2-1~deb12u1",
        "5106aa3881e3b49568823ebdfc3755d4043f6f53bbfc996d0efee03172dc0a9b",
        ("java.base/java/time/",),
        zip_member="usr/lib/jvm/openjdk-17/lib/src.zip",
        licence="GPL-2.0 with Classpath exception",
    ),
    DocsetSource(
        "java-net-http",
        "java",
        "openjdk-17-source",
        "17.0.21.1+2-1~deb12u1",
        "5106aa3881e3b49568823ebdfc3755d4043f6f53bbfc996d0efee03172dc0a9b",
        ("java.net.http/",),
        zip_member="usr/lib/jvm/openjdk-17/lib/src.zip",
        licence="GPL-2.0 with Classpath exception",
    ),
    # C (library headers)
    DocsetSource(
        "c-libgit2",
        "c",
        "libgit2-dev",
        "1.5.1+ds-1+deb12u2",
        "b2edeb232dfb007d9555bca1b20385b36f6c40710a38c315ad00e699414eaa81",
        ("usr/include/git2", "usr/include/git2.h"),
        licence="GPL-2.0 with linking exception",
    ),
    DocsetSource(
        "c-json-c",
        "c",
        "libjson-c-dev",
        "0.16-2",
        "b91a921675bde7c777930f9f77e49010a754d787219104464ea0fce04a887337",
        ("usr/include/json-c",),
        licence="MIT",
    ),
    DocsetSource(
        "c-zstd",
        "c",
        "libzstd-dev",
        "1.5.4+dfsg2-5+deb12u1",
        "c60334929a7e6407ab92ae0d3bdede3f15ece2e7cb0a8d3b940b415f5c4c809e",
        ("usr/include/zstd.h", "usr/include/zdict.h", "usr/include/zstd_errors.h"),
        licence="BSD-3-Clause OR GPL-2.0",
    ),
    DocsetSource(
        "c-yaml",
        "c",
        "libyaml-dev",
        "0.2.5-1",
        "429a3853453346d971b7a6abc3a9dde4a7bb37ead65685de0eb031871b33b8e2",
        ("usr/include/yaml.h",),
        licence="MIT",
    ),
    # C++ (header-only libraries)
    DocsetSource(
        "cpp-fmt",
        "cpp",
        "libfmt-dev",
        "9.1.0+ds1-2",
        "c8fa00dd0269e6eda9fd06668df3d720de4b5a1f647dcd3c6e0ba63f0cbf2150",
        ("usr/include/fmt",),
        licence="MIT",
    ),
    DocsetSource(
        "cpp-nlohmann-json",
        "cpp",
        "nlohmann-json3-dev",
        "3.11.2-2",
        "ec57940def6b6186c30be0e0ee81d1e58f86d11a54a145b28686a1e3e4aae801",
        ("usr/include/nlohmann",),
        licence="MIT",
    ),
    DocsetSource(
        "cpp-spdlog",
        "cpp",
        "libspdlog-dev",
        "1:1.10.0+ds-0.4",
        "4e19d647fe9bc9ec6a1fae81be00a69b1796b41660e8a7a4cf567264b463dcfb",
        ("usr/include/spdlog",),
        licence="MIT",
    ),
    DocsetSource(
        "cpp-cli11",
        "cpp",
        "libcli11-dev",
        "2.1.2+ds-1",
        "f1f6ee9ec053e0e0bcec47345e241b6a8ee006321248b4329e9ce88d2b4b64a8",
        ("usr/include/CLI",),
        licence="BSD-3-Clause",
    ),
    # JavaScript
    DocsetSource(
        "js-underscore",
        "javascript",
        "node-underscore",
        "1.13.4~dfsg+~1.11.4-3",
        "5cab162ca645c4736f11f87075c64cd69aaa1bad869b8bfaaf23c7e4c4136ecf",
        ("usr/share/nodejs/underscore/modules",),
        licence="MIT",
    ),
    DocsetSource(
        "js-acorn",
        "javascript",
        "node-acorn",
        "8.8.1+ds+~cs25.17.7-2",
        "5c6814cf6536892b3a93cc72a0a3792beb0d3f6be3d69f499ca7d764583479a9",
        (
            "usr/share/nodejs/acorn/dist/acorn.js",
            "usr/share/nodejs/acorn-walk/dist/walk.js",
            "usr/share/nodejs/acorn-loose/dist/acorn-loose.js",
        ),
        licence="MIT",
    ),
    DocsetSource(
        "js-jquery",
        "javascript",
        "libjs-jquery",
        "3.6.1+dfsg+~3.5.14-1",
        "a58c9ff6afe96c769cb6535754c909410760e4efa1e1540236194e489adcfb25",
        ("usr/share/javascript/jquery/jquery.js",),
        licence="MIT",
    ),
    DocsetSource(
        "js-semver",
        "javascript",
        "node-semver",
        "7.3.5+~7.3.9-2",
        "1eeb2fa876308f117432ed87186f68fb5aac254c68eeec9bd9e4e942d40d1566",
        ("usr/share/nodejs/semver",),
        licence="ISC",
    ),
    # TypeScript (declaration files)
    DocsetSource(
        "ts-typescript-lib",
        "typescript",
        "node-typescript",
        "4.8.4+ds1-2",
        "a892c2ada87115af8875b4cbe9746836ffe8b5a00724a63ffcaa79b3d83d2245",
        ("usr/share/nodejs/typescript/lib",),
        licence="Apache-2.0",
    ),
    DocsetSource(
        "ts-semver-types",
        "typescript",
        "node-semver",
        "7.3.5+~7.3.9-2",
        "1eeb2fa876308f117432ed87186f68fb5aac254c68eeec9bd9e4e942d40d1566",
        ("usr/share/nodejs/@types/semver",),
        licence="MIT",
    ),
    # Lua
    DocsetSource(
        "lua-penlight",
        "lua",
        "lua-penlight",
        "1.13.1-3",
        "69918434ee650d06aa470d49ba05a1a16ae43e66b8216e135cc5075f7d5d9ff3",
        ("usr/share/lua/5.1/pl",),
        licence="MIT",
    ),
    DocsetSource(
        "lua-busted",
        "lua",
        "lua-busted",
        "2.1.1-1",
        "2bd80d74768b090024c3c6852032c681d323fc0a94506a727d17809e9c9a69b3",
        ("usr/share/lua/5.1/busted",),
        licence="MIT",
    ),
    DocsetSource(
        "lua-luassert",
        "lua",
        "lua-luassert",
        "1.9.0-1",
        "ff140f3dbf622d544c5bfc740037b0dc5485d5662c0500d25dcccf6dcaa958d4",
        ("usr/share/lua/5.1/luassert",),
        licence="MIT",
    ),
    DocsetSource(
        "lua-argparse",
        "lua",
        "lua-argparse",
        "0.7.1-2",
        "7b3ff8338d9d3df94d1bfed0e191440ee3a56e2622b9e32ddf2a35016ae5b32f",
        ("usr/share/lua/5.1/argparse.lua",),
        licence="MIT",
    ),
    # Bash
    DocsetSource(
        "sh-bats",
        "bash",
        "bats",
        "1.8.2-1",
        "9dc9e0421a621dae0878378a79deba0450b07aabd41be26e960add5aebc616a6",
        ("usr/lib/bats-core",),
        licence="MIT",
    ),
    DocsetSource(
        "sh-bash-completion",
        "bash",
        "bash-completion",
        "1:2.11-6",
        "8f79fbfae64b85ea54f63c6db688f2cd8cb079f40b6164f8b1f9451e37790549",
        ("usr/share/bash-completion/bash_completion",),
        rename=(("bash_completion", "bash_completion.sh"),),
        licence="GPL-2.0-or-later",
    ),
    DocsetSource(
        "sh-shunit2",
        "bash",
        "shunit2",
        "2.1.8-3",
        "8114c01821a9e0d81da4e078dbf67bb6edff35282aa4d8bfc62b4f2490c003ce",
        ("usr/bin/shunit2",),
        rename=(("shunit2", "shunit2.sh"),),
        licence="Apache-2.0",
    ),
)

DOCSET_NAMES: tuple[str, ...] = tuple(s.name for s in SOURCES)

EXTENSIONS: dict[str, tuple[str, ...]] = {
    "python": (".py",),
    "go": (".go",),
    "rust": (".rs",),
    "ruby": (".rb",),
    "php": (".php",),
    "java": (".java",),
    "c": (".h", ".c"),
    "cpp": (".h", ".hpp", ".hh", ".cc", ".cpp", ".ipp", ".inl"),
    "javascript": (".js", ".mjs", ".cjs"),
    "typescript": (".ts",),
    "lua": (".lua",),
    "bash": (".sh", ".bash"),
}
GRAMMAR = {"typescript": "typescript", "cpp": "cpp", "c": "c"}

# Definition node types per language (tree-sitter-language-pack grammars).
DEFINITIONS: dict[str, frozenset[str]] = {
    "python": frozenset({"function_definition", "class_definition"}),
    "go": frozenset({"function_declaration", "method_declaration", "type_spec"}),
    "rust": frozenset(
        {
            "function_item",
            "struct_item",
            "enum_item",
            "trait_item",
            "type_item",
            "macro_definition",
            "function_signature_item",
            "const_item",
            "static_item",
            "mod_item",
            "union_item",
        }
    ),
    "ruby": frozenset({"method", "singleton_method", "class", "module"}),
    "php": frozenset(
        {
            "function_definition",
            "method_declaration",
            "class_declaration",
            "interface_declaration",
            "trait_declaration",
            "enum_declaration",
        }
    ),
    "java": frozenset(
        {
            "class_declaration",
            "interface_declaration",
            "enum_declaration",
            "record_declaration",
            "method_declaration",
            "constructor_declaration",
            "annotation_type_declaration",
        }
    ),
    "c": frozenset(
        {
            "function_definition",
            "declaration",
            "struct_specifier",
            "enum_specifier",
            "union_specifier",
            "type_definition",
            "preproc_function_def",
            "preproc_def",
        }
    ),
    "cpp": frozenset(
        {
            "function_definition",
            "declaration",
            "field_declaration",
            "struct_specifier",
            "enum_specifier",
            "union_specifier",
            "class_specifier",
            "type_definition",
            "alias_declaration",
            "preproc_function_def",
            "concept_definition",
        }
    ),
    "javascript": frozenset(
        {
            "function_declaration",
            "generator_function_declaration",
            "class_declaration",
            "method_definition",
            "variable_declarator",
        }
    ),
    "typescript": frozenset(
        {
            "function_declaration",
            "generator_function_declaration",
            "class_declaration",
            "abstract_class_declaration",
            "method_definition",
            "interface_declaration",
            "type_alias_declaration",
            "enum_declaration",
            "function_signature",
            "method_signature",
            "variable_declarator",
            "abstract_method_signature",
        }
    ),
    "lua": frozenset({"function_declaration"}),
    "bash": frozenset({"function_definition"}),
}
# Parents that stand between a definition and its doc comment.
WRAPPERS = frozenset(
    {
        "export_statement",
        "template_declaration",
        "decorated_definition",
        "ambient_declaration",
        "lexical_declaration",
        "variable_declaration",
        "type_declaration",
    }
)
_SKIPPED_BEFORE_DOC = frozenset({"attribute_item", "decorator", "attribute", "annotation"})
_TEST_PART = re.compile(r"(^|/)(tests?|testing|spec|examples?|benches|bench|__tests__|fixtures?)/")
_NOT_DOC = re.compile(
    r"(copyright|license|licence|spdx|\btodo\b|fixme|\bxxx\b|-\*-|eslint|jshint|prettier|"
    r"@ts-|noinspection|phpcs|rubocop|nolint|clang-format|deprecated)",
    re.IGNORECASE,
)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:'[a-z]+)?|[^\sA-Za-z_]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
STOPWORDS = frozenset(
    "a an the of to in on for and or is are be by with from this that it its as at if "
    "when which into any all not no can will this these those their there then than so "
    "such each was were has have had been may must should would could does do given "
    "returns return used use using one two also only but via per whether new".split()
)


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --- text (pure) --------------------------------------------------------------------------


def identifier_parts(name: str) -> list[str]:
    """Lower-case parts of an identifier: snake, kebab, dotted and camel case."""
    parts: list[str] = []
    for piece in re.split(r"[^A-Za-z0-9]+", name):
        parts += [p.lower() for p in _CAMEL.findall(piece)]
    return [p for p in parts if p]


def clean_comment(raw: str) -> str:
    """A comment's text without its markers, tags and markup, lines joined by spaces."""
    lines: list[str] = []
    for line in raw.splitlines():
        text = line.strip()
        text = re.sub(r"^(/\*\*+|/\*!|/\*+|\*/|//[/!]?|#+'?|--+(\[\[)?|\*+(?!/))", "", text)
        text = re.sub(r"(\*+/|\]\])$", "", text).strip()
        if text.startswith(("@", "\\")) or text.startswith((":param", ":return", ":raises")):
            break  # the tags (@param, \brief's friends) end the description
        lines.append(text)
    text = " ".join(lines)
    text = re.sub(r"\{@\w+\s+([^}]*)\}", r"\1", text)  # {@link Foo} -> Foo
    text = re.sub(r"</?\w+[^>]*>", " ", text)  # HTML tags in javadoc
    text = re.sub(r"[`*]+", "", text)
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", text)  # markdown links
    text = re.sub(r"\[`?([^\]`]+)`?\]", r"\1", text)  # rustdoc [`Foo`]
    return re.sub(r"\s+", " ", text).strip()


def first_sentence(doc: str) -> str:
    """The first sentence of a cleaned doc comment (up to a period and a space)."""
    match = re.search(r"(?<![A-Za-z]\.[A-Za-z])(?<!e\.g)(?<!i\.e)[.!?](\s|$)", doc)
    sentence = doc[: match.start()] if match else doc
    return sentence.strip()


def question_text(sentence: str, banned: Sequence[str]) -> str:
    """The sentence without the banned identifier parts (the definition's name and its
    file stem, split): every word whose parts meet them is removed."""
    parts = {p for p in banned if len(p) >= 3}
    out: list[str] = []
    for token in _WORD.findall(sentence):
        if re.match(r"[A-Za-z_]", token):
            words = identifier_parts(token)
            if any(
                w in parts or any(len(p) >= 4 and w.startswith(p) for p in parts) for w in words
            ):
                continue
            out.append(token)
        elif re.fullmatch(r"[,;:()'\"-]+", token) is None:
            continue  # punctuation and operators other than plain commas/brackets go
    text = " ".join(out)
    text = re.sub(r"\s+([,;:)])", r"\1", text)
    text = re.sub(r"\(\s*\)", "", text)
    text = re.sub(r"\(\s+", "(", text)
    return re.sub(r"\s+", " ", text).strip(" ,;:-")


def short_words(question: str, count: int) -> str:
    """The first `count` content words of a question (no stopwords, 3+ letters)."""
    words = [
        w
        for w in re.findall(r"[A-Za-z][A-Za-z0-9_]*", question)
        if len(w) >= 3 and w.lower() not in STOPWORDS
    ]
    return " ".join(words[:count]) if len(words) >= count else ""


# --- definitions with doc comments ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Candidate:
    path: str
    name: str
    kind: str
    start_line: int  # of the doc comment (1-based)
    end_line: int  # of the definition
    sentence: str


def _parser(language: str) -> Any:
    from tree_sitter_language_pack import get_parser

    return get_parser(GRAMMAR.get(language, language))  # type: ignore[arg-type]


def _node_text(node: Any, src: bytes) -> str:
    return src[node.start_byte : node.end_byte].decode("utf-8", errors="replace")


def _last_identifier(node: Any, src: bytes) -> str:
    found = re.findall(r"[A-Za-z_$][A-Za-z0-9_$]*", _node_text(node, src))
    return found[-1] if found else ""


def _declarator_name(node: Any, src: bytes) -> str:
    """The name a C/C++ declaration declares: its function declarator's identifier."""
    stack = [node]
    while stack:
        current = stack.pop()
        if current.type == "function_declarator":
            inner = current.child_by_field_name("declarator")
            return _last_identifier(inner, src) if inner is not None else ""
        stack.extend(reversed(current.named_children))
    return ""


def definition_name(node: Any, src: bytes, language: str) -> str:
    kind = node.type
    if kind == "variable_declarator":
        value = node.child_by_field_name("value")
        if value is None or value.type not in ("arrow_function", "function", "function_expression"):
            return ""
    if language in ("c", "cpp"):
        if kind in ("declaration", "field_declaration", "function_definition"):
            return _declarator_name(node, src)
        if kind == "type_definition":
            declarator = node.child_by_field_name("declarator")
            return _last_identifier(declarator, src) if declarator is not None else ""
        specifier = kind in ("struct_specifier", "enum_specifier", "union_specifier")
        if (specifier or kind == "class_specifier") and (
            node.child_by_field_name("body") is None or node.parent.type == "type_definition"
        ):
            return ""
    name = node.child_by_field_name("name")
    if name is None:
        return ""
    return _last_identifier(name, src)


def _anchor(node: Any) -> Any:
    """The node the doc comment sits above: the definition or its wrapping statement."""
    current = node
    while current.parent is not None and current.parent.type in WRAPPERS:
        if current.parent.type in ("lexical_declaration", "variable_declaration") and (
            len(current.parent.named_children) > 1
        ):
            break
        current = current.parent
    return current


def leading_comment(node: Any, src: bytes) -> tuple[str, int]:
    """The comment block right above `node` (no blank line between), and its first row."""
    comments: list[Any] = []
    below = node.start_point[0]
    sibling = node.prev_named_sibling
    while sibling is not None and sibling.type in _SKIPPED_BEFORE_DOC:
        below = sibling.start_point[0]
        sibling = sibling.prev_named_sibling
    while sibling is not None and "comment" in sibling.type and sibling.end_point[0] >= below - 1:
        comments.append(sibling)
        below = sibling.start_point[0]
        sibling = sibling.prev_named_sibling
    if not comments:
        return "", node.start_point[0]
    comments.reverse()
    return "\n".join(_node_text(c, src) for c in comments), comments[0].start_point[0]


def python_docstring(node: Any, src: bytes) -> str:
    body = node.child_by_field_name("body")
    if body is None or not body.named_children:
        return ""
    first = body.named_children[0]
    if first.type == "expression_statement" and first.named_children:
        first = first.named_children[0]
    if first.type != "string":
        return ""
    text = _node_text(first, src)
    return re.sub(r'^[rbuRBU]*("""|\'\'\'|"|\')|("""|\'\'\'|"|\')$', "", text)


def _walk(node: Any) -> Iterator[Any]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.named_children))


def file_candidates(
    path: str, src: bytes, language: str, names: Counter[str] | None = None
) -> list[Candidate]:
    """Every definition of one file with a usable first doc sentence; `names` counts
    every definition's name, documented or not."""
    tree = _parser(language).parse(src)
    kinds = DEFINITIONS[language]
    out: list[Candidate] = []
    for node in _walk(tree.root_node):
        if node.type not in kinds:
            continue
        name = definition_name(node, src, language)
        if len(name) < 2:
            continue
        if names is not None:
            names[name] += 1
        if language == "python":
            raw, first_row = python_docstring(node, src), _anchor(node).start_point[0]
            doc = re.sub(r"\s+", " ", raw.strip().split("\n\n")[0]).strip()
        else:
            raw, first_row = leading_comment(_anchor(node), src)
            if not raw or _NOT_DOC.search(raw[:200]):
                continue
            doc = clean_comment(raw)
        sentence = first_sentence(doc)
        words = sentence.split()
        if not 4 <= len(words) <= 40 or _NOT_DOC.search(sentence):
            continue
        start, end = first_row + 1, node.end_point[0] + 1
        if end - start + 1 > MAX_SPAN_LINES:
            continue
        out.append(Candidate(path, name, node.type, start, end, sentence))
    return out


# --- fetching and unpacking ---------------------------------------------------------------


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _deb_file(debs: Path, source: DocsetSource) -> Path:
    version = source.version.replace(":", "%3a")
    found = sorted(debs.glob(f"{source.package}_{version}_*.deb"))
    return found[0] if found else debs / f"{source.package}_{version}_all.deb"


def fetch(source: DocsetSource, debs: Path, logger: Log = log) -> Path:
    """The package file at its pinned version (downloaded once)."""
    debs.mkdir(parents=True, exist_ok=True)
    deb = _deb_file(debs, source)
    if not deb.is_file():
        cmd = ["apt-get", "download", "-q", f"{source.package}={source.version}"]
        logger("$ " + " ".join(cmd))
        done = subprocess.run(cmd, cwd=debs, capture_output=True, text=True, check=False)
        deb = _deb_file(debs, source)
        if done.returncode != 0 or not deb.is_file():
            raise SystemExit(
                f"{source.package}={source.version}: apt-get download failed "
                f"({done.stderr.strip()[-300:]}); run `apt-get update` first"
            )
    if source.sha256 and _sha256(deb) != source.sha256:
        raise SystemExit(f"{deb}: SHA-256 {_sha256(deb)} is not the pinned {source.sha256}")
    return deb


def unpack(source: DocsetSource, deb: Path, root: Path) -> None:
    """Copy the source's members out of the package into `root` (replaced whole)."""
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="docset-") as tmp:
        subprocess.run(["dpkg-deb", "-x", str(deb), tmp], check=True)
        base = Path(tmp)
        if source.zip_member:
            with zipfile.ZipFile(base / source.zip_member) as archive:
                for info in sorted(archive.infolist(), key=lambda i: i.filename):
                    if info.is_dir() or not info.filename.startswith(source.members):
                        continue
                    target = root / info.filename
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(archive.read(info))
        else:
            for member in source.members:
                path = base / member
                if path.is_symlink() and not path.exists():
                    continue
                target = root / path.name
                if path.is_dir():
                    shutil.copytree(path, target, symlinks=False, ignore_dangling_symlinks=True)
                elif path.is_file():
                    shutil.copyfile(path, target)
    for old, new in source.rename:
        (root / old).rename(root / new)


def corpus_files(root: Path, language: str) -> list[str]:
    extensions = EXTENSIONS[language]
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and not p.is_symlink() and p.name.endswith(extensions)
    )


# --- questions -----------------------------------------------------------------------------


def _target(c: Candidate) -> Json:
    return {"path": c.path, "start_line": c.start_line, "end_line": c.end_line}


def docset_questions(
    source: DocsetSource,
    candidates: Sequence[Candidate],
    split: str,
    defined: Counter[str] | None = None,
) -> list[Json]:
    """The package's questions, drawn with its own seeded generator. Definitions whose
    question reads the same (overloads, twins) are all targets of it."""
    rng = random.Random(f"{SEED}:{source.name}")
    usable = [c for c in candidates if not _TEST_PART.search(c.path)]
    questions: list[Json] = []
    prose: list[tuple[Candidate, str]] = []
    twins: dict[str, list[Candidate]] = {}
    for c in usable:
        stem = Path(c.path).name.split(".")[0]
        text = question_text(c.sentence, [*identifier_parts(c.name), *identifier_parts(stem)])
        if len(text.split()) >= 3:
            if text.lower() not in twins:
                prose.append((c, text))
            twins.setdefault(text.lower(), []).append(c)
    for c, text in rng.sample(prose, min(QUESTIONS_PER_STYLE, len(prose))):
        targets = [_target(t) for t in twins[text.lower()]]
        base = {"category": "semantic", "relevant": targets, "name": c.name, "split": split}
        questions.append({"query": text, "style": "long", **base})
        words = short_words(text, rng.choice((3, 4)))
        if words:
            questions.append({"query": words, "style": "short", **base})
    if defined is None:
        defined = Counter(c.name for c in candidates)
    symbols = [
        c
        for c in usable
        if defined[c.name] == 1 and len(c.name) >= 4 and not c.name.startswith("_")
    ]
    for c in rng.sample(symbols, min(SYMBOL_QUESTIONS, len(symbols))):
        questions.append(
            {
                "query": c.name,
                "style": "long",
                "category": "symbol",
                "relevant": [_target(c)],
                "name": c.name,
                "split": split,
            }
        )
    return questions


def splits() -> dict[str, str]:
    """Each package's split: per language, a seeded shuffle; the first third (at least
    one) is held out, the rest is train."""
    out: dict[str, str] = {}
    languages = sorted({s.language for s in SOURCES})
    for language in languages:
        names = sorted(s.name for s in SOURCES if s.language == language)
        random.Random(f"{SEED}:split:{language}").shuffle(names)
        held = max(1, len(names) // 3)
        for i, name in enumerate(names):
            out[name] = "held-out" if i < held else "train"
    return out


def _digest(paths: Sequence[Path], root: Path) -> str:
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


def build(out_dir: Path = DOCSET_DIR, logger: Log = log) -> Json:
    """Fetch, unpack and generate every package's questions; returns the manifest."""
    debs = DOCSET_DIR / "debs"
    corpora = out_dir / "corpora"
    questions_dir = out_dir / "questions"
    questions_dir.mkdir(parents=True, exist_ok=True)
    split_of = splits()
    manifest: Json = {"format": FORMAT_VERSION, "seed": SEED, "packages": []}
    for source in SOURCES:
        deb = fetch(source, debs, logger)
        root = corpora / source.name
        unpack(source, deb, root)
        files = corpus_files(root, source.language)
        candidates: list[Candidate] = []
        names: Counter[str] = Counter()
        for rel in files:
            src = (root / rel).read_bytes()
            candidates += file_candidates(rel, src, source.language, names)
        questions = docset_questions(source, candidates, split_of[source.name], names)
        path = questions_dir / f"{source.name}.json"
        path.write_text(json.dumps(questions, indent=1, ensure_ascii=False) + "\n", "utf-8")
        every = sorted(p for p in root.rglob("*") if p.is_file())
        counts = Counter(f"{q['style']}/{q['category']}" for q in questions)
        manifest["packages"].append(
            {
                "name": source.name,
                "language": source.language,
                "package": source.package,
                "version": source.version,
                "deb_sha256": _sha256(deb),
                "licence": source.licence,
                "split": split_of[source.name],
                "files": len(every),
                "source_files": len(files),
                "candidates": len(candidates),
                "questions": len(questions),
                "by_style": dict(sorted(counts.items())),
                "corpus_sha256": _digest(every, root),
                "questions_sha256": _sha256(path),
            }
        )
        logger(
            f"{source.name}: {len(files)} {source.language} files, {len(candidates)} documented "
            f"definitions, {len(questions)} questions ({split_of[source.name]})"
        )
    total = sum(p["questions"] for p in manifest["packages"])
    manifest["questions"] = total
    manifest["digest"] = hashlib.sha256(
        "".join(p["questions_sha256"] + p["corpus_sha256"] for p in manifest["packages"]).encode()
    ).hexdigest()
    (out_dir / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", "utf-8")
    logger(f"{total} questions over {len(SOURCES)} packages; digest {manifest['digest']}")
    return manifest


def load_manifest() -> Json:
    path = DOCSET_DIR / "manifest.json"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: run `python bench/docset.py` first")
    data: Json = json.loads(path.read_text(encoding="utf-8"))
    return data


def docset_corpus(name: str) -> Any:
    """The package as bench/quality.py's `Corpus` (dev set number 3)."""
    from corpora import Corpus, CorpusUnavailable

    source = next((s for s in SOURCES if s.name == name), None)
    root = DOCSET_DIR / "corpora" / name
    queries = DOCSET_DIR / "questions" / f"{name}.json"
    if source is None or not root.is_dir() or not queries.is_file():
        raise CorpusUnavailable(f"{name}: not built; run `python bench/docset.py`")
    return Corpus(
        name,
        root,
        queries,
        (),
        note=f"Debian {source.package} {source.version}",
        devset=3,
        language=source.language,
    )


README = BENCH_DIR / "docset" / "README.md"


def readme_tables(manifest: Json) -> str:
    """The README's generated part: packages, then counts by language and split."""
    lines = [
        "<!-- docset:begin -->",
        f"Built from the manifest of digest `{manifest['digest'][:16]}`"
        f" (seed `{manifest['seed']}`): {manifest['questions']:,} questions over"
        f" {len(manifest['packages'])} packages.",
        "",
        "| package | language | Debian package = version | licence | split | source files |"
        " documented definitions | questions (long / short / symbol) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    by_language: dict[tuple[str, str], Counter[str]] = {}
    for p in manifest["packages"]:
        styles = p["by_style"]
        long_, short, symbol = (
            styles.get("long/semantic", 0),
            styles.get("short/semantic", 0),
            styles.get("long/symbol", 0),
        )
        lines.append(
            f"| {p['name']} | {p['language']} | `{p['package']}={p['version']}` | {p['licence']} |"
            f" {p['split']} | {p['source_files']} | {p['candidates']} |"
            f" {p['questions']} ({long_} / {short} / {symbol}) |"
        )
        count = by_language.setdefault((p["language"], p["split"]), Counter())
        count["packages"] += 1
        count["questions"] += p["questions"]
    lines += ["", "| language | train: packages, questions | held-out: packages, questions |"]
    lines.append("|---|---|---|")
    for language in sorted({lang for lang, _ in by_language}):
        cells = []
        for split in ("train", "held-out"):
            c = by_language.get((language, split), Counter())
            cells.append(f"{c['packages']}, {c['questions']}")
        lines.append(f"| {language} | {cells[0]} | {cells[1]} |")
    lines.append("<!-- docset:end -->")
    return "\n".join(lines) + "\n"


def write_readme(manifest: Json) -> None:
    text = README.read_text(encoding="utf-8")
    pattern = re.compile(r"<!-- docset:begin -->.*?<!-- docset:end -->\n?", re.DOTALL)
    README.write_text(pattern.sub(lambda _: readme_tables(manifest), text, count=1), "utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--check",
        action="store_true",
        help="rebuild into a scratch folder and compare every digest with the cached build",
    )
    parser.add_argument(
        "--readme",
        action="store_true",
        help="rewrite the generated tables of bench/docset/README.md from the manifest",
    )
    args = parser.parse_args(argv)
    if args.readme:
        write_readme(load_manifest())
        return 0
    if args.check:
        before = load_manifest()
        with tempfile.TemporaryDirectory(prefix="docset-check-", dir=DOCSET_DIR) as tmp:
            again = build(Path(tmp))
        same = before["digest"] == again["digest"]
        log(f"rebuild {'matches' if same else 'DIFFERS FROM'} the cached build ({again['digest']})")
        return 0 if same else 1
    build()
    return 0


if __name__ == "__main__":
    sys.exit(main())
