"""Where a pasted message is written (retrieval/streams.py, `in_string_literal`):
inside a string literal on one line, not in a comment or a docstring."""

from __future__ import annotations

import pytest

from codesift.retrieval.streams import in_string_literal

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
