from __future__ import annotations

from collections.abc import Container

from codesift.parsing.model import ParsedChunk
from codesift.parsing.plaintext import MAX_CHUNK_CHARS, line_windows, parse_text, split_lines


def spans(chunks: list[ParsedChunk]) -> list[tuple[int, int]]:
    return [(c.start_line, c.end_line) for c in chunks]


def numbered(count: int, blank: Container[int] = ()) -> str:
    """`count` lines "line N" (1-based), with the line numbers in `blank` empty."""
    return "".join("\n" if n in blank else f"line {n}\n" for n in range(1, count + 1))


def test_windows_have_exact_line_numbers_and_verbatim_text() -> None:
    parsed = parse_text(numbered(100), "conf/app.yaml")
    assert parsed.language == "text"
    assert spans(parsed.chunks) == [(1, 40), (41, 80), (81, 100)]
    first = parsed.chunks[0]
    assert first.text == "\n".join(f"line {n}" for n in range(1, 41))
    assert all(c.layer == "code" and c.node is None and c.part == 0 for c in parsed.chunks)
    assert all(c.title == "conf/app.yaml" for c in parsed.chunks)


def test_window_lines_parameter_is_respected() -> None:
    parsed = parse_text(numbered(25), "x.sql", window_lines=10)
    assert spans(parsed.chunks) == [(1, 10), (11, 20), (21, 25)]


def test_window_ends_at_blank_line_in_last_quarter() -> None:
    # Line 35 is blank and lies in the last quarter (lines 31-40) of the first window.
    parsed = parse_text(numbered(60, blank={35}), "x.toml")
    assert spans(parsed.chunks) == [(1, 34), (36, 60)]


def test_blank_line_outside_last_quarter_does_not_shorten_window() -> None:
    parsed = parse_text(numbered(60, blank={20}), "x.toml")
    assert spans(parsed.chunks)[0] == (1, 40)
    assert "line 19\n\nline 21" in parsed.chunks[0].text


def test_window_already_at_paragraph_break_is_not_shortened() -> None:
    # Line 41 is blank, so cutting after line 40 already keeps blocks whole.
    parsed = parse_text(numbered(60, blank={35, 41}), "x.toml")
    assert spans(parsed.chunks) == [(1, 40), (42, 60)]


def test_last_blank_of_the_quarter_is_chosen() -> None:
    parsed = parse_text(numbered(60, blank={32, 38}), "x.toml")
    assert spans(parsed.chunks)[0] == (1, 37)


def test_whitespace_only_stretches_produce_no_chunks() -> None:
    text = "alpha\n" + "   \n\t\n\n" * 40 + "omega\n"
    parsed = parse_text(text, "x.txt")
    assert spans(parsed.chunks) == [(1, 1), (122, 122)]
    assert [c.text for c in parsed.chunks] == ["alpha", "omega"]


def test_leading_and_trailing_blank_lines_are_trimmed() -> None:
    parsed = parse_text("\n\n  \nkey: 1\nother: 2\n\n\n", "x.yaml")
    assert spans(parsed.chunks) == [(4, 5)]
    assert parsed.chunks[0].text == "key: 1\nother: 2"


def test_very_long_single_line_is_split_into_parts() -> None:
    line = "x" * 10_000
    parsed = parse_text("head\n" + line + "\ntail\n", "data.json")
    long_parts = [c for c in parsed.chunks if c.start_line == 2]
    assert [c.part for c in long_parts] == [0, 1, 2]
    assert all(c.end_line == 2 for c in long_parts)
    assert all(len(c.text) <= MAX_CHUNK_CHARS for c in long_parts)
    assert "".join(c.text for c in long_parts) == line
    assert spans(parsed.chunks) == [(1, 1), (2, 2), (2, 2), (2, 2), (3, 3)]


def test_long_line_prefers_to_split_at_whitespace() -> None:
    # 7-character words: a hard cut at 4000 would land inside "abcdef".
    line = "abcdef " * 1500
    parsed = parse_text(line, "x.txt")
    assert [c.part for c in parsed.chunks] == [0, 1, 2]
    assert all(c.text.endswith(" ") for c in parsed.chunks)
    assert all(len(c.text) <= MAX_CHUNK_CHARS for c in parsed.chunks)
    assert "".join(c.text for c in parsed.chunks) == line


def test_window_is_capped_by_characters() -> None:
    # 26 lines of 150 chars joined are 3925 chars; a 27th would make 4076.
    text = "".join(f"{n:03d}" + "y" * 147 + "\n" for n in range(1, 41))
    parsed = parse_text(text, "x.csv")
    assert spans(parsed.chunks) == [(1, 26), (27, 40)]
    assert all(len(c.text) <= MAX_CHUNK_CHARS for c in parsed.chunks)


def test_empty_file_has_no_chunks() -> None:
    assert parse_text("", "empty.txt").chunks == []
    assert parse_text("\n\n \t\n", "blank.txt").chunks == []


def test_crlf_and_cr_line_endings_count_like_an_editor() -> None:
    assert split_lines("a\r\nb\rc\n") == ["a", "b", "c"]
    parsed = parse_text("a\r\nb\r\n\r\nc", "win.ini")
    assert spans(parsed.chunks) == [(1, 4)]
    assert parsed.chunks[0].text == "a\nb\n\nc"


def test_form_feed_does_not_break_lines() -> None:
    # str.splitlines would split here and shift every later line number.
    assert split_lines("a\x0cb\nc") == ["a\x0cb", "c"]


def test_line_windows_offsets_line_numbers() -> None:
    result = line_windows(["", "x", "y", ""], first_line=10, window_lines=40, max_chars=100)
    assert [(s.start_line, s.end_line, s.text) for s in result] == [(11, 12, "x\ny")]
