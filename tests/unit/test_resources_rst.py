"""reStructuredText heading sections."""

from __future__ import annotations

from codesift.config import IndexSettings
from codesift.parsing import parse_source
from codesift.parsing.markdown import MAX_SECTION_LINES
from codesift.parsing.model import ParsedChunk
from codesift.parsing.rst import parse_rst


def rst(*lines: str) -> str:
    return "\n".join(lines) + "\n"


def sections(chunks: list[ParsedChunk]) -> list[tuple[int, int, str]]:
    return [(c.start_line, c.end_line, c.title) for c in chunks]


GUIDE = rst(
    ".. _top:",  # 1
    "",  # 2
    "=================",  # 3
    " Billing Service",  # 4
    "=================",  # 5
    "",  # 6
    ":Author: Payments team",  # 7
    "",  # 8
    "Charges customers and retries failed payments.",  # 9
    "",  # 10
    "Installation",  # 11
    "============",  # 12
    "",  # 13
    "Install it with pip::",  # 14
    "",  # 15
    "    pip install billing",  # 16
    "    Not a title",  # 17
    "    ===========",  # 18
    "",  # 19
    ".. code-block:: python",  # 20
    "",  # 21
    "   import billing",  # 22
    "   Also not a title",  # 23
    "   ----------------",  # 24
    "",  # 25
    "Retry policy",  # 26
    "------------",  # 27
    "",  # 28
    "Failed charges are retried with ``RETRY_LIMIT`` attempts::",  # 29
    "",  # 30
    "> Quoted literal block",  # 31
    "> ====================",  # 32
    "",  # 33
    "Backoff",  # 34
    "~~~~~~~",  # 35
    "",  # 36
    "Exponential, capped at an hour.",  # 37
    "",  # 38
    "Usage",  # 39
    "=====",  # 40
    "",  # 41
    "Call ``charge()``.",  # 42
)


def test_titles_make_sections_with_heading_paths() -> None:
    parsed = parse_rst(GUIDE, "docs/guide.rst")
    assert parsed.language == "rst"
    assert sections(parsed.chunks) == [
        (1, 1, "guide.rst"),  # the label before the first title
        (3, 9, "Billing Service"),  # overline and underline: its own style, level 1
        (11, 24, "Billing Service > Installation"),
        (26, 32, "Billing Service > Installation > Retry policy"),
        (34, 37, "Billing Service > Installation > Retry policy > Backoff"),
        (39, 42, "Billing Service > Usage"),  # "=" underline only: level 2 again
    ]
    retry = parsed.chunks[3]
    assert retry.text.startswith(
        "Billing Service > Installation > Retry policy\n\nRetry policy\n------------\n"
    )
    assert retry.layer == "doc" and retry.node is None


def test_literal_blocks_and_directives_do_not_open_sections() -> None:
    titles = {c.title for c in parse_rst(GUIDE, "guide.rst").chunks}
    assert not any("Not a title" in t or "Also not" in t or "Quoted" in t for t in titles)


def test_levels_follow_the_order_styles_first_appear() -> None:
    text = rst(
        "Part",  # 1
        "####",  # 2
        "",  # 3
        "Chapter",  # 4
        "*******",  # 5
        "",  # 6
        "Section",  # 7
        "=======",  # 8
        "",  # 9
        "Second chapter",  # 10
        "**************",  # 11
    )
    assert [c.title for c in parse_rst(text, "book.rst").chunks] == [
        "Part > Chapter > Section",
        "Part > Second chapter",
    ]


def test_what_is_not_a_title() -> None:
    text = rst(
        "Intro",  # 1
        "",  # 2
        "a paragraph line",  # 3
        "Directly after a paragraph",  # 4
        "==========================",  # 5
        "",  # 6
        "Too short",  # 7
        "==",  # 8
        "",  # 9
        "----------",  # 10: a transition
        "",  # 11
        "..",  # 12
        "==",  # 13
    )
    assert sections(parse_rst(text, "notes.rst").chunks) == [(1, 13, "notes.rst")]


def test_inline_markup_is_removed_from_titles_and_short_underlines_of_four_count() -> None:
    text = rst(
        "The ``charge()`` *call* and `docs <https://x.example>`_",
        "====",
        "",
        "body",
    )
    assert [c.title for c in parse_rst(text, "a.rst").chunks] == ["The charge() call and docs"]


def test_long_sections_are_split_with_the_title_repeated() -> None:
    body = [f"line {i} of the runbook" for i in range(MAX_SECTION_LINES * 2)]
    parsed = parse_rst(rst("Runbook", "=======", "", *body), "ops.rst")
    assert len(parsed.chunks) >= 2
    assert all(c.text.startswith("Runbook\n\n") for c in parsed.chunks)
    assert [c.part for c in parsed.chunks] == list(range(len(parsed.chunks)))


def test_parse_source_dispatches_rst_and_never_raises() -> None:
    parsed = parse_source(GUIDE, "docs/guide.rst", "rst", IndexSettings())
    assert parsed.language == "rst" and len(parsed.chunks) == 6
    for text in ("", "=\n", "====\n====\n", "::\n\n=====\nx\n", "\ufeffTitle\n=====\n"):
        parse_rst(text, "x.rst")
    assert parse_rst("\ufeffTitle\n=====\nbody\n", "x.rst").chunks[0].title == "Title"
