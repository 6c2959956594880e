from __future__ import annotations

import itertools
import random

from codesift.parsing.markdown import MAX_SECTION_LINES, parse_markdown
from codesift.parsing.model import ParsedChunk
from codesift.parsing.plaintext import MAX_CHUNK_CHARS, split_lines


def sections(chunks: list[ParsedChunk]) -> list[tuple[int, int, str]]:
    return [(c.start_line, c.end_line, c.title) for c in chunks]


def md(*lines: str) -> str:
    return "\n".join(lines) + "\n"


def test_headings_of_several_levels_make_separate_sections() -> None:
    text = md(
        "# Guide",  # 1
        "intro",  # 2
        "",  # 3
        "## Install",  # 4
        "step one",  # 5
        "### From source",  # 6
        "make",  # 7
        "## Usage",  # 8
        "run it",  # 9
        "# Appendix",  # 10
        "extra",  # 11
    )
    parsed = parse_markdown(text, "docs/guide.md")
    assert parsed.language == "markdown"
    assert sections(parsed.chunks) == [
        (1, 2, "Guide"),
        (4, 5, "Guide > Install"),
        (6, 7, "Guide > Install > From source"),
        (8, 9, "Guide > Usage"),
        (10, 11, "Appendix"),
    ]
    assert all(c.layer == "doc" and c.node is None and c.part == 0 for c in parsed.chunks)
    # The heading path leads the text; nested sections do not repeat their children.
    assert parsed.chunks[1].text == "Guide > Install\n\n## Install\nstep one"
    assert "make" not in parsed.chunks[1].text


def test_heading_level_skips_and_returns_build_the_right_path() -> None:
    text = md("### Deep", "a", "# Top", "b", "#### Four", "c", "## Two", "d")
    titles = [c.title for c in parse_markdown(text, "x.md").chunks]
    assert titles == ["Deep", "Top", "Top > Four", "Top > Two"]


def test_setext_headings() -> None:
    text = md(
        "Title",  # 1
        "=====",  # 2
        "body",  # 3
        "",  # 4
        "Sub",  # 5
        "---",  # 6
        "more",  # 7
    )
    assert sections(parse_markdown(text, "x.md").chunks) == [
        (1, 3, "Title"),
        (5, 7, "Title > Sub"),
    ]


def test_setext_heading_over_a_multi_line_paragraph_starts_at_the_paragraph() -> None:
    text = md("# A", "x", "", "Long", "title", "===", "y")
    assert sections(parse_markdown(text, "x.md").chunks) == [
        (1, 2, "A"),
        (4, 7, "Long title"),
    ]


def test_dashes_after_blank_line_or_list_are_thematic_breaks() -> None:
    text = md("# A", "para", "", "---", "- item", "---", "=== not a heading", "end")
    assert sections(parse_markdown(text, "x.md").chunks) == [(1, 8, "A")]


def test_hash_lines_inside_fenced_code_are_not_headings() -> None:
    text = md(
        "# Real",  # 1
        "```bash",  # 2
        "# a shell comment",  # 3
        "~~~",  # 4  (a tilde line does not close a backtick fence)
        "# still code",  # 5
        "```",  # 6
        "~~~~",  # 7
        "# c",  # 8
        "~~~",  # 9  (shorter than the opening fence: still inside)
        "Fake",  # 10
        "====",  # 11
        "~~~~~",  # 12 (longer closes)
        "## Next",  # 13
        "text",  # 14
    )
    assert sections(parse_markdown(text, "x.md").chunks) == [
        (1, 12, "Real"),
        (13, 14, "Real > Next"),
    ]


def test_fence_opened_after_list_marker_hides_its_comments() -> None:
    text = md("# Setup", "- ```sh", "  # install deps", "  make", "  ```", "## After", "x")
    assert [c.title for c in parse_markdown(text, "x.md").chunks] == ["Setup", "Setup > After"]


def test_inline_triple_backticks_do_not_open_a_fence() -> None:
    text = md("# A", "``` inline ``` code", "## B", "x")
    assert [c.title for c in parse_markdown(text, "x.md").chunks] == ["A", "A > B"]


def test_unclosed_fence_runs_to_the_end_of_the_file() -> None:
    text = md("# A", "text", "```python", "# not a heading", "## nor this", "x = 1")
    parsed = parse_markdown(text, "x.md")
    assert sections(parsed.chunks) == [(1, 6, "A")]
    assert parsed.chunks[0].text.endswith("## nor this\nx = 1")


def test_front_matter_belongs_to_the_first_section() -> None:
    text = md(
        "---",  # 1
        "title: Intro",  # 2
        "# a yaml comment",  # 3
        "tags: [a]",  # 4
        "---",  # 5  (closes the front matter; not a setext underline)
        "# Heading",  # 6
        "body",  # 7
    )
    parsed = parse_markdown(text, "docs/intro.md")
    assert sections(parsed.chunks) == [(1, 5, "intro.md"), (6, 7, "Heading")]
    assert "title: Intro" in parsed.chunks[0].text


def test_dashes_then_blank_line_at_the_top_are_not_front_matter() -> None:
    text = md("---", "", "# Heading", "body", "", "---")
    assert sections(parse_markdown(text, "x.md").chunks) == [(1, 1, "x.md"), (3, 6, "Heading")]


def test_text_before_the_first_heading_is_titled_by_the_file_name() -> None:
    text = md("Some intro", "more intro", "", "# First", "x")
    parsed = parse_markdown(text, "pkg/README.md")
    assert sections(parsed.chunks) == [(1, 2, "README.md"), (4, 5, "First")]
    assert parsed.chunks[0].text == "README.md\n\nSome intro\nmore intro"


def test_document_without_headings_is_one_section() -> None:
    parsed = parse_markdown("just\ntext\n", "notes.md")
    assert sections(parsed.chunks) == [(1, 2, "notes.md")]


def test_long_section_is_split_into_parts_repeating_the_title() -> None:
    text = md("# Intro", "hi", "## Big", *[f"row {n}" for n in range(1, 201)], "## After", "x")
    parsed = parse_markdown(text, "x.md")
    big = [c for c in parsed.chunks if c.title == "Intro > Big"]
    # Heading on line 3, rows on lines 4-203; no blank lines, so 80-line parts.
    assert [(c.start_line, c.end_line, c.part) for c in big] == [
        (3, 82, 0),
        (83, 162, 1),
        (163, 203, 2),
    ]
    assert all(c.text.startswith("Intro > Big\n\n") for c in big)
    assert big[1].text.split("\n")[2] == "row 80"
    assert sections(parsed.chunks)[-1] == (204, 205, "Intro > After")
    assert all(c.end_line - c.start_line + 1 <= MAX_SECTION_LINES for c in big)


def test_section_over_the_character_limit_is_split() -> None:
    text = md("# Wide", *["z" * 300 for _ in range(30)])
    parsed = parse_markdown(text, "x.md")
    assert len(parsed.chunks) == 3
    assert [c.part for c in parsed.chunks] == [0, 1, 2]
    assert all(len(c.text) <= MAX_CHUNK_CHARS for c in parsed.chunks)
    assert all(c.text.startswith("Wide\n\n") for c in parsed.chunks)
    assert parsed.chunks[0].start_line == 1
    assert parsed.chunks[-1].end_line == 31
    # Parts tile the section: each starts right after the previous one ends.
    for before, after in zip(parsed.chunks, parsed.chunks[1:], strict=False):
        assert after.start_line == before.end_line + 1


def test_empty_and_blank_documents_have_no_chunks() -> None:
    assert parse_markdown("", "x.md").chunks == []
    assert parse_markdown("\n  \n\t\n", "x.md").chunks == []


def test_trailing_blank_lines_are_not_part_of_a_section() -> None:
    text = md("# A", "a", "", "", "# B", "b", "", "")
    assert sections(parse_markdown(text, "x.md").chunks) == [(1, 2, "A"), (5, 6, "B")]


def test_bare_heading_is_dropped_only_when_its_subsections_follow() -> None:
    nested = parse_markdown(md("# A", "", "## B", "text"), "x.md")
    assert sections(nested.chunks) == [(3, 4, "A > B")]
    leaf = parse_markdown(md("# A", "text", "## B", "# C", "c"), "x.md")
    assert sections(leaf.chunks) == [(1, 2, "A"), (3, 3, "A > B"), (4, 5, "C")]


def test_atx_heading_edge_cases() -> None:
    text = md(
        "#hashtag is not a heading",
        "    # indented code is not a heading",
        "# Closed title ##",
        "x",
        "## [Docs](https://example.com) {#docs}",
        "y",
        "## <a name='z'></a>Anchored",
        "z",
    )
    parsed = parse_markdown(text, "x.md")
    assert sections(parsed.chunks) == [
        (1, 2, "x.md"),
        (3, 4, "Closed title"),
        (5, 6, "Closed title > Docs"),
        (7, 8, "Closed title > Anchored"),
    ]


def test_headings_inside_html_comments_and_pre_blocks_are_ignored() -> None:
    text = md(
        "# A",  # 1
        "<!--",  # 2
        "# hidden",  # 3
        "",  # 4
        "-->",  # 5
        "<pre>",  # 6
        "Banner",  # 7
        "------",  # 8
        "",  # 9
        "</pre>",  # 10
        "## B",  # 11
    )
    assert sections(parse_markdown(text, "x.md").chunks) == [(1, 10, "A"), (11, 11, "A > B")]


def test_crlf_and_byte_order_mark() -> None:
    text = "\ufeff# A\r\nx\r\n\r\n## B\r\ny\r\n"
    parsed = parse_markdown(text, "x.md")
    assert sections(parsed.chunks) == [(1, 2, "A"), (4, 5, "A > B")]
    assert parsed.chunks[0].text == "A\n\n# A\nx"


def body(chunk: ParsedChunk) -> str:
    """A doc chunk's text without its title line."""
    assert chunk.text.startswith(chunk.title + "\n\n")
    return chunk.text[len(chunk.title) + 2 :]


# Input sizes that made a quadratic parser take minutes (pytest-timeout stops a run
# like that); bench/markdown_speed.py times them.
def test_ten_thousand_headings() -> None:
    text = "\n".join(f"{'#' * (i % 6 + 1)} h{i}\nbody {i}" for i in range(10_000))
    parsed = parse_markdown(text, "x.md")
    assert len(parsed.chunks) == 10_000
    assert parsed.chunks[-1].start_line == 19_999
    assert parsed.chunks[-1].title == "h9996 > h9997 > h9998 > h9999"


def test_a_heading_of_unclosed_brackets_is_kept_whole_in_bounded_parts() -> None:
    parsed = parse_markdown("# " + "[" * 50_000 + "](" * 50_000, "x.md")
    assert parsed.chunks and {(c.start_line, c.end_line) for c in parsed.chunks} == {(1, 1)}
    assert all(len(c.text) <= MAX_CHUNK_CHARS for c in parsed.chunks)
    assert parsed.chunks[0].title.startswith("[[[")
    kept = "".join(body(c) for c in parsed.chunks)
    assert kept.count("]") == 50_000 and kept.count("(") == 50_000


def test_a_line_of_fifty_thousand_list_markers_is_kept_whole_in_bounded_parts() -> None:
    parsed = parse_markdown("- " * 50_000 + "```\n# x", "x.md")
    assert {c.start_line for c in parsed.chunks} == {1, 2}
    assert all(c.start_line == c.end_line for c in parsed.chunks)
    assert all(len(c.text) <= MAX_CHUNK_CHARS for c in parsed.chunks)
    assert "".join(body(c) for c in parsed.chunks).count("-") == 50_000
    assert body(parsed.chunks[-1]).endswith("# x")


def test_a_fifty_thousand_line_setext_heading_is_split_into_bounded_sections() -> None:
    parsed = parse_markdown("a\n" * 50_000 + "===", "x.md")
    spans = [(c.start_line, c.end_line) for c in parsed.chunks]
    assert spans[0][0] == 1 and spans[-1][1] == 50_001
    assert all(start == end + 1 for (_, end), (start, _) in itertools.pairwise(spans))
    assert all(end - start < MAX_SECTION_LINES for start, end in spans)
    assert sum(body(c).split("\n").count("a") for c in parsed.chunks) == 50_000


def test_never_raises_and_keeps_invariants_on_random_input() -> None:
    atoms = [
        "# h", "## h2", "####### seven", "Title", "===", "---", "- - -", "```", "````",
        "~~~", "```py", "- ```", "> ```", "<!--", "-->", "<pre>", "</pre>", "", "   ", "\t",
        "text", "    # indented", "- item", "1. x", "> quote", "\x00\x01\xff", "\ufeff", "\r",
        "#" * 50, "x" * 5000, " " * 5000, "+++", "...", "\u2028", "\x0c",
    ]  # fmt: skip
    rng = random.Random(20240611)
    for _ in range(500):
        lines = [rng.choice(atoms) for _ in range(rng.randint(0, 60))]
        text = rng.choice(["\n", "\r\n"]).join(lines)
        parsed = parse_markdown(text, "a/b.md")
        total = len(split_lines(text.removeprefix("\ufeff")))
        previous = (0, -1)
        for chunk in parsed.chunks:
            assert 1 <= chunk.start_line <= chunk.end_line <= total
            assert len(chunk.text) <= MAX_CHUNK_CHARS
            assert chunk.text.startswith(chunk.title + "\n\n")
            # Ordered, and no line belongs to two sections (long lines may repeat in parts).
            assert (chunk.start_line, chunk.part) > previous
            assert chunk.start_line > previous[0] or chunk.part > 0
            previous = (chunk.start_line, chunk.part)
