"""The code index's text: identifier parts added once each, in a fixed order."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from codesift.tokens import code_index_text, compact_name, module_name

SOURCE = "def parseHttpHeader(raw_line):\n    return HttpHeader.fromRaw(raw_line)\n"


def test_parts_follow_the_text_once_each_in_the_order_they_first_appear() -> None:
    # parseHttpHeader, raw_line, HttpHeader, fromRaw: their parts, without repeats.
    assert code_index_text(SOURCE) == f"{SOURCE}\nparse http header raw line from"


def test_the_same_text_gives_the_same_index_text_whatever_the_hash_seed() -> None:
    program = "import sys; from codesift.tokens import code_index_text; " + (
        "sys.stdout.write(code_index_text(sys.stdin.read()))"
    )
    outputs = set()
    for seed in ("1", "2", "3", "4"):
        done = subprocess.run(
            [sys.executable, "-c", program],
            input=SOURCE * 3,
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        )
        outputs.add(done.stdout)
    assert outputs == {code_index_text(SOURCE * 3)}


def test_text_without_compound_identifiers_is_indexed_as_it_is() -> None:
    assert code_index_text("return value + 1") == "return value + 1"


def test_identifier_parts_across_underscores_digits_and_capitals() -> None:
    from codesift.tokens import split_identifier

    assert split_identifier("parseHTTPHeader") == ("parse", "http", "header")
    assert split_identifier("get_v2_url") == ("get", "v", "2", "url")
    assert split_identifier("__init__") == ("init",)
    assert split_identifier("_HTTP_Server2x") == ("http", "server", "2", "x")
    assert split_identifier("a__B") == ("a", "b")
    assert split_identifier("__") == ("__",)


def test_identifiers_are_what_the_identifier_pattern_finds() -> None:
    # An identifier is `[A-Za-z_][A-Za-z0-9_]*` wherever it starts: after digits
    # (`2ndPlace` -> `ndPlace`, `0x1Fab` -> `x1Fab`), and between non-ASCII letters,
    # which separate like punctuation (`naïveFooBar` -> `na`, `veFooBar`).
    import re
    from itertools import chain

    from codesift.tokens import split_identifier

    pattern = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
    boundary = re.compile(r"[A-Za-z0-9]_[A-Za-z0-9]|[a-z][A-Z]|[A-Z][A-Z][a-z]|[A-Za-z][0-9]")

    def expected(text: str) -> str:
        found = dict.fromkeys(pattern.findall(text))
        parts = chain.from_iterable(split_identifier(i) for i in found if boundary.search(i))
        extra = dict.fromkeys(parts)
        return f"{text}\n{' '.join(extra)}" if extra else text

    texts = [
        "x = 2ndPlace + 0x1Fab * 12_3x",
        "naïveFooBar = caféBar(élanVital)",
        "s = 'a\udcffbB'  # a lone surrogate from undecodable bytes",
        "9to5Mac ndPlace 2ndPlace",
        "__init__ _private_name\tTAB_Sep\r\nCRLF_line\x00NUL_byte",
        "日本語のfooBarと中文bazQux",
    ]
    for text in texts:
        assert code_index_text(text) == expected(text), text
    assert code_index_text("2ndPlace").endswith("\nnd place")


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("src/main/java/org/Widget.java", "widget"),
        ("include/foo_bar.h", "foobar"),
        ("crates/searcher/src/sink/mod.rs", "sink"),
        ("src/parser/index.ts", "parser"),
        ("werkzeug/sansio/__init__.py", "sansio"),
        ("lib/app/query.ex", "query"),
        ("libexec/pyenv-which", "pyenvwhich"),
        ("src/types.d.ts", "types"),
        (".eslintrc.js", "eslintrcjs"),
        ("mod.rs", "mod"),
    ],
)
def test_module_name_is_the_stem_or_the_folder_a_file_stands_for(path: str, expected: str) -> None:
    assert module_name(path) == expected
    assert compact_name("Foo_Bar-baz") == "foobarbaz"
