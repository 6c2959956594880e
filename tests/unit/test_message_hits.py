"""Where a pasted message is written (retrieval/messages.py, `in_string_literal`):
inside a string literal on one line, not in a comment or a docstring."""

from __future__ import annotations

import pytest

from codesift.retrieval.messages import PART, fills_template, in_string_literal, plain_runs

MESSAGE = "card missing for this charge"


@pytest.mark.parametrize(
    "text",
    [
        f'    raise ValueError("{MESSAGE}")',
        f"    log.error('charge %s: {MESSAGE}', charge_id)",
        f'    return Err(format!("{MESSAGE}"))',
        f"    throw new Error(`{MESSAGE}`);",
        f'def submit(charge):\n    if charge.card is None:\n        fail("{MESSAGE}")\n',
        f'    x = "a"; y = "{MESSAGE}"',  # the second literal of the line
    ],
)
def test_a_message_in_a_string_literal_is_where_the_code_says_it(text: str) -> None:
    assert in_string_literal(text, MESSAGE)


@pytest.mark.parametrize(
    "text",
    [
        f"    # {MESSAGE}",  # a comment
        f"    // {MESSAGE}",
        f'    """{MESSAGE}."""',  # a docstring
        f"    '''{MESSAGE}'''",
        f'    """Submit a charge.\n    {MESSAGE}\n    """',  # a docstring's later line
        f'    x = "done"  # {MESSAGE}',  # after a closed literal
        "    raise ValueError(msg)",  # not there at all
    ],
)
def test_a_message_in_a_comment_or_a_docstring_is_not(text: str) -> None:
    assert not in_string_literal(text, MESSAGE)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '    raise OSError("cannot open %s: %d bytes left" % (p, n))',
            "cannot open a.cfg: 42 bytes left",
        ),
        (
            '    return fmt.Errorf("bucket (%d, %d) has count %v", a, b, c)',
            "bucket (3, 4) has count 7",
        ),
        (
            "    throw new Error(`unknown flag ${name} for command`);",
            "Error: unknown flag -v for command",
        ),
        (
            '    log.info(f"writing grammar tables to {path}")',
            "writing grammar tables to /tmp/g.pickle",
        ),
        ('    puts "cannot find #{tool} in the path"', "cannot find ruby in the path"),
        ('    panic!("no entry named {:?} in {}", name, dir)', 'no entry named "x" in /srv'),
        ('    echo "install of $pkg failed, see the log"', "install of curl failed, see the log"),
        ('    eprintln!("usage error in {}\\n", msg)', "usage error in main.rs"),  # an escape
    ],
)
def test_a_filled_in_message_matches_the_template_it_came_from(text: str, message: str) -> None:
    assert fills_template(text, message)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("    # cannot open %s: %d bytes left", "cannot open a.cfg: 42 bytes left"),  # a comment
        ('    x = "%s: %s" % (a, b)', "cannot open a.cfg: 42 bytes left"),  # too few words
        ('    raise OSError("cannot open %s: %d bytes left")', "cannot read a.cfg: 42 bytes left"),
        ('    raise OSError("cannot open file")', "cannot open the file"),  # not its words
        ('    raise OSError("cannot open")', "cannot open the file"),  # too few words
    ],
)
def test_another_message_or_too_short_a_literal_does_not_match(text: str, message: str) -> None:
    assert fills_template(text, message) == 0.0


def test_a_literal_the_message_holds_matches_less_than_a_template() -> None:
    """A log line's prefix before a message without placeholders; a sibling literal
    that says the message's start, against the template that says all of it."""
    logged = "2026-12-06 15:04:05,123 ERROR app.billing: card missing for this charge"
    assert fills_template('    log.error("card missing for this charge")', logged) == PART
    message = "failed to convert address to SocketAddr: 10.0.0.1"
    assert fills_template('    err("failed to convert address to SocketAddr")', message) == PART
    assert (
        fills_template('    err(f"failed to convert address to SocketAddr: {a}")', message) == 1.0
    )
    assert PART < 1.0


@pytest.mark.parametrize(
    ("message", "runs"),
    [
        ("cannot open a.cfg: 42 bytes left", ["cannot open", "bytes left"]),
        ("bucket (3, 4) has count that is not 1: 7", ["has count that is not"]),
        ("unknown command foo", ["unknown command foo"]),  # a value may be a plain word
        ("user_17 logged in at 3.5", ["logged in at"]),
        ("42", []),
    ],
)
def test_a_messages_plain_runs_are_what_its_template_says_itself(
    message: str, runs: list[str]
) -> None:
    assert plain_runs(message) == runs
