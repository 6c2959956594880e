"""Where the code says a message that was pasted as the program showed it.

A message copied from a terminal or a log (`charge declined: card missing`,
`cannot open config.yaml: 42 bytes left`) is written in the code as a string
literal: as it is, or as a template whose placeholders the program filled in
(`"cannot open %s: %d bytes left"`, `f"cannot open {path}"`, `` `cannot open
${path}` ``, `"cannot open #{path}"`). The exact stream (streams.py) finds the
chunks holding the message's words in order and keeps those where a string
literal holds it (`in_string_literal`); failing that, the chunks holding its
longest run of plain words, where a literal's template fills in to it or a
literal is part of it (a log line's prefix before it: `fills_template`). A
comment or a docstring saying the same words is no place the program says them.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["fills_template", "in_string_literal", "plain_runs"]

# Quote characters a string literal opens with; a triple quote opens a docstring.
_QUOTES = "\"'`"

# A string literal on one line: double, single or back quotes, escapes kept.
_LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"|\'((?:[^\'\\\n]|\\.)*)\'|`([^`\n]*)`')
# A placeholder the program fills in: printf's (C, Go, Python's %, Java's
# String.format: `%s`, `%-8d`, `%.2f`, `%v`, `%q`, `%r`), a format field (`{}`,
# `{0}`, `{name}`, `{:?}`, `{!r}`), an interpolation (`${x}`, `#{x}`, `$name`).
_PLACEHOLDER = re.compile(
    r"%[-+ #0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?(?:hh|ll|[hlLqjzt])?[diouxXeEfFgGaAcspqvTtbrw]"
    r"|[$#]\{[^{}\n]{0,40}\}|\{[^{}\s]{0,30}\}|\$[A-Za-z_]\w*"
)
# An escape inside a literal (`\n`, `\t`, `\"`): spacing or the character itself.
_ESCAPE = re.compile(r"\\(.)")
# A template's own words: at least this many, so that `"%s: %s"` matches nothing.
MIN_TEMPLATE_WORDS = 3
# A literal without placeholders that a message holds, against a template that
# fills in to it (1.0).
PART = 0.9
_WORD = re.compile(r"[A-Za-z]{2,}")
# A word of a pasted message that no program fills in: letters (an apostrophe or a
# hyphen inside), with its punctuation around it.
_PLAIN = re.compile(r"[A-Za-z]+(?:['-][A-Za-z]+)*")
_EDGES = ",.;:!?()[]\"'`"


def in_string_literal(text: str, phrase: str) -> bool:
    """Whether `phrase` is written in `text` inside a string literal on one line (an
    odd number of one quote character before it on its line, none of them tripled):
    a message the code raises or logs, not a comment or a docstring."""
    for line in text.splitlines():
        at = line.find(phrase)
        while at >= 0:
            before = line[:at]
            if any(before.count(q) % 2 == 1 and q * 3 not in before for q in _QUOTES):
                return True
            at = line.find(phrase, at + 1)
    return False


def plain_runs(message: str) -> list[str]:
    """The runs of plain words of `message` (words no program fills in: a number, a
    path, a file or an identifier with `_` is a value), longest first, each of two
    words or more: what the message's template says itself."""
    runs: list[list[str]] = [[]]
    for token in message.split():
        word = token.strip(_EDGES)
        if _PLAIN.fullmatch(word) and not token.startswith(("'", '"', "`", "<")):
            runs[-1].append(word)
            if token.endswith((",", ".", ";", ":", "!", "?", ")", "'", '"', "`")):
                runs.append([])  # punctuation after a word closes the run
        elif runs[-1]:
            runs.append([])
    found = [" ".join(run) for run in runs if len(run) >= 2]
    return sorted(found, key=lambda run: -len(run.split()))


def fills_template(text: str, message: str) -> float:
    """How well a string literal in `text` with at least MIN_TEMPLATE_WORDS words of
    its own reads as `message` (the message may hold more around it: a log line's
    timestamp, level and logger, a concatenation's rest): 1.0 for a template whose
    placeholders fill in to it, PART for a literal without placeholders that it
    holds (a sibling literal that says less than a template does), 0.0 for none."""
    squeezed = " ".join(message.split())
    best = 0.0
    for line in text.splitlines():
        if not any(q in line for q in _QUOTES):
            continue
        for match in _LITERAL.finditer(line):
            literal = match.group(1) or match.group(2) or match.group(3) or ""
            pattern = _template_pattern(literal)
            if pattern is not None and pattern.search(squeezed):
                if _PLACEHOLDER.search(literal):
                    return 1.0
                best = PART
    return best


@lru_cache(maxsize=4096)
def _template_pattern(literal: str) -> re.Pattern[str] | None:
    """The pattern a literal's template matches once filled in (each placeholder
    one or more characters, spacing as spacing; a literal without placeholders as
    it is), None for a literal with too few words of its own."""
    pieces = [_ESCAPE.sub(" ", piece) for piece in _PLACEHOLDER.split(literal)]
    if len(_WORD.findall(" ".join(pieces))) < MIN_TEMPLATE_WORDS:
        return None
    pieces[0], pieces[-1] = pieces[0].lstrip(), pieces[-1].rstrip()
    return re.compile(".+?".join(map(_spaced, pieces)))


def _spaced(piece: str) -> str:
    """`piece` as a pattern: its text as written, any spacing as spacing."""
    return "".join(
        r"\s+" if chunk.isspace() else re.escape(chunk)
        for chunk in re.split(r"(\s+)", piece)
        if chunk
    )
