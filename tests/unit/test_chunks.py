"""build_chunks: code/ast/summary layers, stubs for nested definitions, parts,
module-level runs and doc comments travelling with their definition."""

from __future__ import annotations

from codesift.config import IndexSettings
from codesift.parsing import parse_source
from codesift.parsing.model import ParsedChunk, ParsedFile

PY = '''"""Module doc."""
import os

LIMIT = 3


class Store:
    """Keeps things."""

    def get(self, key):
        return self.data[key]

    def put(self, key, value):
        self.data[key] = value
        self.get(key)


def helper():
    return os.getcwd()
'''

GO = """package cache

import "time"

// Store keeps entries.
type Store struct {
	items map[string]string
}

// Get returns the value for key.
// It never blocks.
func (s *Store) Get(key string) string {
	return s.items[key]
}
"""


def parse(text: str, path: str, language: str, **settings: int) -> ParsedFile:
    return parse_source(text, path, language, IndexSettings(**settings))  # type: ignore[arg-type]


def code_chunks(parsed: ParsedFile) -> list[ParsedChunk]:
    return [c for c in parsed.chunks if c.layer == "code"]


def by_name(parsed: ParsedFile, name: str) -> int:
    return next(n.index for n in parsed.nodes if n.name == name)


def test_every_definition_gets_code_ast_and_summary_layers() -> None:
    parsed = parse(PY, "pkg/store.py", "python")
    for name in ("Store", "get", "put", "helper"):
        index = by_name(parsed, name)
        layers = sorted(c.layer for c in parsed.chunks if c.node == index)
        assert layers == ["ast", "code", "summary"], name


def test_class_chunk_shows_methods_as_stubs_and_keeps_its_span() -> None:
    parsed = parse(PY, "pkg/store.py", "python")
    store = by_name(parsed, "Store")
    chunk = next(c for c in code_chunks(parsed) if c.node == store)
    assert (chunk.start_line, chunk.end_line) == (7, 15)
    assert "    def get(self, key) …" in chunk.text
    assert "return self.data[key]" not in chunk.text  # the body lives in get's own chunk
    assert '"""Keeps things."""' in chunk.text


def test_module_chunks_hold_only_lines_outside_definitions() -> None:
    parsed = parse(PY, "pkg/store.py", "python")
    module_chunks = [c for c in code_chunks(parsed) if c.node == 0]
    assert [(c.start_line, c.end_line) for c in module_chunks] == [(1, 4)]
    assert "class Store" not in module_chunks[0].text
    every_line = "\n".join(c.text for c in code_chunks(parsed))
    assert every_line.count("return os.getcwd()") == 1


def test_summary_names_parent_doc_and_calls() -> None:
    parsed = parse(PY, "pkg/store.py", "python")
    put = by_name(parsed, "put")
    summary = next(c for c in parsed.chunks if c.node == put and c.layer == "summary")
    assert summary.text.splitlines()[0] == "pkg.store.Store.put (method)"
    assert "in class pkg.store.Store" in summary.text
    assert "calls get" in summary.text


CALLS_PY = """def run(job, log):
    job.prepare()
    check(job)
    log.write(job)
    print(job)
    job.prepare()
    finish()
"""


def test_summary_lists_calls_in_source_order_with_the_first_call_site() -> None:
    # Call sites come from several query patterns (plain and attribute calls), whose
    # captures tree-sitter returns in no promised order: the result must not depend on
    # it, or re-indexing an unchanged file changes its summaries and their vectors.
    first = parse(CALLS_PY, "jobs.py", "python")
    run = by_name(first, "run")
    summary = next(c for c in first.chunks if c.node == run and c.layer == "summary")
    assert "calls prepare, check, write, print, finish" in summary.text
    calls = [(e.dst_name, e.line) for e in first.edges if e.kind == "calls" and e.src == run]
    assert calls == [("prepare", 2), ("check", 3), ("write", 4), ("print", 5), ("finish", 7)]
    for _ in range(5):
        again = parse(CALLS_PY, "jobs.py", "python")
        assert again.edges == first.edges
        assert [c.text for c in again.chunks] == [c.text for c in first.chunks]


def test_long_body_is_split_into_parts_that_repeat_the_header() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(30))
    text = f"def big():\n{body}\n"
    parsed = parse(text, "long_module.py", "python", max_chunk_lines=10)
    parts = [c for c in code_chunks(parsed) if c.node == by_name(parsed, "big")]
    assert [c.part for c in parts] == [0, 1, 2, 3]
    assert parts[0].start_line == 1
    assert parts[1].text.startswith("def big() …(part 2)\n")
    assert parts[1].start_line == 11
    assert parts[-1].end_line == 31
    # every body line is in exactly one part
    body_lines = [line for p in parts for line in p.text.split("\n") if "=" in line]
    assert body_lines == [f"    x{i} = {i}" for i in range(30)]


def test_a_long_doc_comment_leaves_the_header_in_the_first_part() -> None:
    doc = "\n".join(f"/// Line {i} of a long explanation, with an example." for i in range(30))
    body = "\n".join(f"    let x{i} = {i};" for i in range(30))
    text = f"{doc}\nfn fold(init: u32) -> u32 {{\n{body}\n    init\n}}\n"
    parsed = parse(text, "src/iter.rs", "rust", max_chunk_lines=20)
    fold = next(n for n in parsed.nodes if n.name == "fold")
    assert (fold.doc_start_line, fold.start_line) == (1, 31)
    parts = [c for c in code_chunks(parsed) if c.node == fold.index]
    first = parts[0]
    # The part that stands for the definition holds its header and the comment's tail.
    assert first.part == 0 and "fn fold(init: u32)" in first.text
    assert first.start_line == 31 - 20 // 4
    assert first.text.startswith("/// Line 25 of")
    # The comment's head comes last, after the body, with the header repeated.
    head = [p for p in parts if p.end_line < first.start_line]
    assert head == parts[-len(head) :]
    assert (head[0].start_line, head[-1].end_line) == (1, 25)
    assert all(p.text.startswith("fn fold(init: u32) -> u32 …(part ") for p in head)
    # Every line of the node is in exactly one part.
    lines = [line for p in parts for line in p.text.split("\n") if "…(part" not in line]
    assert sorted(lines) == sorted(text.rstrip("\n").split("\n"))


def test_doc_comment_travels_with_its_definition() -> None:
    parsed = parse(GO, "cache/store.go", "go")
    get = next(n for n in parsed.nodes if n.name == "Get")
    assert (get.doc_start_line, get.start_line) == (10, 12)
    assert get.docstring.startswith("Get returns the value for key.")
    chunk = next(c for c in code_chunks(parsed) if c.node == get.index)
    assert chunk.start_line == 10
    assert chunk.text.startswith("// Get returns the value for key.")
    module_text = "\n".join(c.text for c in code_chunks(parsed) if c.node == 0)
    assert "Get returns" not in module_text
    assert "Store keeps entries" not in module_text
    assert 'import "time"' in module_text


def test_a_file_that_describes_itself_gets_one_summary() -> None:
    parsed = parse(PY, "pkg/store.py", "python")
    summaries = [c for c in parsed.chunks if c.node == 0 and c.layer == "summary"]
    assert len(summaries) == 1
    summary = summaries[0]
    assert (summary.start_line, summary.end_line) == (1, len(PY.splitlines()))
    assert summary.text.splitlines() == ["pkg.store (module)", "Module doc."]
    undescribed = parse(PY.replace('"""Module doc."""', ""), "pkg/store.py", "python")
    assert [c for c in undescribed.chunks if c.node == 0 and c.layer == "summary"] == []


def test_a_go_file_is_described_by_its_package_comment_not_its_licence() -> None:
    source = (
        "// Copyright 2026 The Cache Authors. All rights reserved.\n"
        "// Use of this source code is governed by a BSD-style license.\n"
        "\n"
        "// Package cache keeps recently used values in memory.\n"
        "package cache\n"
        "\n"
        "// Get returns the value for key.\n"
        "func Get(key string) string { return key }\n"
    )
    parsed = parse(source, "cache/cache.go", "go")
    assert parsed.nodes[0].docstring == "Package cache keeps recently used values in memory."
    summary = next(c for c in parsed.chunks if c.node == 0 and c.layer == "summary")
    assert "Package cache keeps recently used values in memory." in summary.text
    assert "Copyright" not in summary.text


def test_a_definitions_own_doc_comment_does_not_describe_the_file() -> None:
    source = "#!/usr/bin/env bash\n# Deploys the site.\ndeploy() {\n  rsync -a . host:\n}\n"
    parsed = parse(source, "deploy.sh", "bash")
    assert parsed.nodes[0].docstring == ""  # "Deploys the site." is deploy's own
    script = "#!/usr/bin/env bash\n#\n# Summary: Show the current version\n#\nset -e\n"
    assert parse(script, "bin/version", "bash").nodes[0].docstring == (
        "Summary: Show the current version"
    )


KOTLIN_TAGGED = """package org.example

/**
 * Single instance holder
 * @author A. Person
 */
class SingleHolder(private val create: () -> Int) {
    /**
     * @return the value, created on first use
     */
    fun get(): Int = create()
}
"""


def test_a_summary_sentence_stops_at_a_block_tag() -> None:
    parsed = parse(KOTLIN_TAGGED, "src/SingleHolder.kt", "kotlin")
    holder = by_name(parsed, "SingleHolder")
    summary = next(c for c in parsed.chunks if c.node == holder and c.layer == "summary")
    assert "Single instance holder" in summary.text
    assert "@author" not in summary.text and "Person" not in summary.text
    # A doc that is only tags keeps its first one: what it returns is worth saying.
    get = by_name(parsed, "get")
    summary = next(c for c in parsed.chunks if c.node == get and c.layer == "summary")
    assert "@return the value, created on first use" in summary.text


def test_a_leaf_definition_that_just_fits_max_chars_stays_one_chunk() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(6))
    text = f"def fits():\n{body}"
    size = len(text)  # its lines with their newlines
    whole = parse(text, "m.py", "python", max_chunk_chars=size)
    assert [(c.part, c.text) for c in code_chunks(whole)] == [(0, text.rstrip("\n"))]
    split = parse(text, "m.py", "python", max_chunk_chars=size - 1)
    assert [c.part for c in code_chunks(split)] == [0, 1]
