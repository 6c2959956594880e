"""Snippet windows and source line maps, on plain strings (no database)."""

from __future__ import annotations

import pytest

from codesift.retrieval.snippets import (
    CONTEXT_ABOVE,
    Snippet,
    estimate_tokens,
    snippet_window,
    source_line_map,
)

# Twenty lines of seven characters each; line i is numbered 101 + i in the source.
LINES = [f"line {i:02d}" for i in range(20)]
NUMBERS = list(range(101, 121))
FIVE_LINES = 5 * 7 + 4  # five lines and the four newlines between them


def text_with(replacements: dict[int, str]) -> str:
    lines = list(LINES)
    for index, line in replacements.items():
        lines[index] = line
    return "\n".join(lines)


# --- snippet_window ----------------------------------------------------------------------


def test_window_starts_context_above_the_first_matching_line() -> None:
    text = text_with({10: "found 1", 14: "found 2"})
    snippet = snippet_window(text, ["found"], FIVE_LINES, NUMBERS)
    assert CONTEXT_ABOVE == 2
    assert snippet.text == "line 08\nline 09\nfound 1\nline 11\nline 12"
    assert snippet.start_line == 109
    assert snippet.end_line == 113
    assert snippet.truncated is True


def test_match_is_case_insensitive_and_the_earliest_term_wins() -> None:
    text = text_with({6: "Alpha 6", 12: "beta 12"})
    snippet = snippet_window(text, ["BETA", "alpha"], FIVE_LINES, NUMBERS)
    assert snippet.text.split("\n")[2] == "Alpha 6"
    assert snippet.start_line == 105


def test_match_near_the_top_keeps_the_window_at_the_top() -> None:
    text = text_with({1: "found 1"})
    snippet = snippet_window(text, ["found"], FIVE_LINES, NUMBERS)
    assert snippet.text.split("\n")[0] == "line 00"
    assert snippet.start_line == 101
    assert snippet.end_line == 105


def test_window_is_head_anchored_when_no_term_matches() -> None:
    text = text_with({})
    for terms in (["absent"], []):
        snippet = snippet_window(text, terms, FIVE_LINES, NUMBERS)
        assert snippet.text == "line 00\nline 01\nline 02\nline 03\nline 04"
        assert (snippet.start_line, snippet.end_line) == (101, 105)
        assert snippet.truncated is True


def test_whole_text_that_fits_is_not_truncated() -> None:
    snippet = snippet_window("def f():\n    return 1", ["return"], 600, [7, 8])
    assert snippet == Snippet("def f():\n    return 1", 7, 8, False)


def test_text_exactly_the_budget_is_not_truncated() -> None:
    text = "\n".join(LINES[:5])
    assert len(text) == FIVE_LINES
    snippet = snippet_window(text, [], FIVE_LINES, NUMBERS[:5])
    assert snippet.text == text
    assert snippet.truncated is False
    shorter = snippet_window(text, [], FIVE_LINES - 1, NUMBERS[:5])
    assert shorter.text == "\n".join(LINES[:4])
    assert shorter.truncated is True


@pytest.mark.parametrize("max_chars", [1, 7, 8, 20, 39, 40, 100, 159, 1000])
@pytest.mark.parametrize("hit", [None, 0, 3, 10, 19])
def test_max_chars_is_respected(max_chars: int, hit: int | None) -> None:
    text = text_with({} if hit is None else {hit: "found!!"})
    snippet = snippet_window(text, ["found"], max_chars, NUMBERS)
    assert len(snippet.text) <= max_chars
    assert snippet.text  # something is always shown
    assert snippet.truncated is (len(snippet.text) < len(text))


def test_a_single_over_long_line_is_cut_with_an_ellipsis() -> None:
    snippet = snippet_window("x" * 500, ["x"], 100, [42])
    assert snippet.text == "x" * 99 + "…"
    assert len(snippet.text) == 100
    assert snippet.truncated is True
    assert (snippet.start_line, snippet.end_line) == (42, 42)


def test_an_over_long_first_window_line_is_cut_and_the_rest_dropped() -> None:
    text = "y" * 300 + "\nshort line\nanother"
    snippet = snippet_window(text, ["y"], 50, [10, 11, 12])
    assert snippet.text == "y" * 49 + "…"
    assert snippet.truncated is True
    assert (snippet.start_line, snippet.end_line) == (10, 10)


def test_an_over_long_line_after_the_first_ends_the_window_without_cutting() -> None:
    text = "short\n" + "z" * 300 + "\nshort again"
    snippet = snippet_window(text, ["short"], 50, [1, 2, 3])
    assert snippet.text == "short"
    assert snippet.truncated is True
    assert (snippet.start_line, snippet.end_line) == (1, 1)


def test_an_over_long_matching_line_is_shown_cut_rather_than_its_context() -> None:
    text = "short\n" + "z" * 300
    snippet = snippet_window(text, ["z"], 50, [1, 2])
    assert snippet.text == "z" * 49 + "…"
    assert len(snippet.text) <= 50
    assert snippet.truncated is True
    assert (snippet.start_line, snippet.end_line) == (2, 2)


def test_window_fills_upwards_when_it_reaches_the_end_of_the_text() -> None:
    text = text_with({18: "found18"})
    snippet = snippet_window(text, ["found"], FIVE_LINES, NUMBERS)
    # From the match (context starts at 16) to the end is four lines; one more fits above.
    assert snippet.text.split("\n") == ["line 15", "line 16", "line 17", "found18", "line 19"]
    assert (snippet.start_line, snippet.end_line) == (116, 120)
    assert snippet.truncated is True


def test_filling_upwards_can_reach_the_whole_text() -> None:
    text = "\n".join(LINES[:6])
    snippet = snippet_window(text, ["line 05"], 1000, NUMBERS[:6])
    assert snippet.text == text
    assert snippet.truncated is False
    assert (snippet.start_line, snippet.end_line) == (101, 106)


def test_line_numbers_come_from_the_map() -> None:
    # A chunk whose nested definitions are stubs: source lines jump.
    lines = [
        "class Pool:",
        "    size = 4",
        "    def start(self) …",
        "    workers = []",
        "    def imap_unordered(self, fn, items) …",
        "    closed = False",
        "    limit = 9",
    ]
    line_map = [10, 11, 12, 21, 22, 26, 27]
    snippet = snippet_window("\n".join(lines), ["imap_unordered"], 80, line_map)
    assert snippet.text.split("\n") == lines[2:5]
    assert (snippet.start_line, snippet.end_line) == (12, 22)


def test_the_matching_line_is_shown_when_it_fits_the_budget() -> None:
    lines = [
        "    deadline = time.monotonic() + timeout_seconds * attempts",
        "    backoff = initial_backoff_seconds * multiplier",
        "    return retry_failed_charge(gateway, charge)",
    ]
    snippet = snippet_window("\n".join(lines), ["retry_failed_charge"], 80, [1, 2, 3])
    assert len(lines[2]) <= 80
    assert "retry_failed_charge" in snippet.text


def test_empty_text() -> None:
    assert snippet_window("", ["x"], 100, [5]) == Snippet("", 5, 5, False)


# --- source_line_map ---------------------------------------------------------------------


def test_stubs_collapse_their_spans() -> None:
    assert source_line_map(10, 7, [(12, 20), (22, 25)]) == [10, 11, 12, 21, 22, 26, 27]


def test_stub_spans_may_come_in_any_order() -> None:
    assert source_line_map(10, 7, [(22, 25), (12, 20)]) == [10, 11, 12, 21, 22, 26, 27]


def test_adjacent_stubs() -> None:
    assert source_line_map(1, 4, [(2, 3), (4, 8)]) == [1, 2, 4, 9]


def test_no_stubs_is_consecutive_lines() -> None:
    assert source_line_map(5, 3, []) == [5, 6, 7]
    assert source_line_map(5, 0, []) == []


def test_part_header_maps_to_the_parts_first_line() -> None:
    assert source_line_map(30, 4, [], has_part_header=True) == [30, 30, 31, 32]
    assert source_line_map(40, 4, [(41, 50)], has_part_header=True) == [40, 40, 41, 51]
    assert source_line_map(40, 0, [], has_part_header=True) == []


def test_spans_before_the_start_are_ignored() -> None:
    # A continuation part starting at line 30: the node's earlier children are behind it.
    assert source_line_map(30, 4, [(5, 12), (14, 20), (31, 33)]) == [30, 31, 34, 35]


def test_map_length_is_the_line_count() -> None:
    for count in range(0, 12):
        assert len(source_line_map(3, count, [(4, 9), (11, 11)])) == count


# --- estimate_tokens ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tokens"),
    [("", 0), ("a", 1), ("abcd", 1), ("abcde", 2), ("x" * 8, 2), ("x" * 401, 101)],
)
def test_estimate_tokens_is_characters_over_four_rounded_up(text: str, tokens: int) -> None:
    assert estimate_tokens(text) == tokens
