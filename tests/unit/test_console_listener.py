"""The CLI's listener (cli/invocation.py's ConsoleListener) off a terminal: what it says
while a command waits, and how a task's progress ends."""

from __future__ import annotations

import io

import pytest

from codesift.cli.invocation import ConsoleListener, Invocation


def listener() -> tuple[ConsoleListener, io.StringIO]:
    err = io.StringIO()
    return ConsoleListener(Invocation(stdout=io.StringIO(), stderr=err), progress_every=0), err


@pytest.mark.parametrize(
    "what", ["this run starts after it", "the first search waits for the index"]
)
def test_the_lock_wait_sentence_reads_as_one(what: str) -> None:
    console, err = listener()
    console.waiting("pid 7: codesift index", what)
    assert " ".join(err.getvalue().split()) == (
        "waiting for another codesift process (pid 7: codesift index) to finish writing"
        f" the index; {what}"
    )


def test_a_finished_task_ends_without_a_count_of_its_own() -> None:
    console, err = listener()
    console.begin("indexing", 3)
    for done in (1, 2, 3):
        console.advance(done)
    console.end()
    last = err.getvalue().splitlines()[-1]
    assert last.startswith("codesift: indexing done in "), last


def test_an_interrupted_task_does_not_say_done() -> None:
    console, err = listener()
    console.begin("indexing", 3)
    console.advance(1)
    with pytest.raises(KeyboardInterrupt):
        try:
            raise KeyboardInterrupt
        finally:
            console.end()
    last = err.getvalue().splitlines()[-1]
    assert last.startswith("codesift: indexing interrupted after "), last
    assert "done" not in err.getvalue()
