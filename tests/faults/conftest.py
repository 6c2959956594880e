"""Helpers shared by the fault tests.

assert_clean_error(result, code) (also the fixture `clean_error`)
    The command failed the way a person can act on: exit `code`, exactly one
    line on stderr, no Python traceback. Returns that line.
describe(result)
    Exit code, stdout and stderr, for assertion messages.
Misbehaviour
    The AssertionError these raise: mark a test of a known, unfixed fault
    `pytest.mark.xfail(strict=True, raises=Misbehaviour, ...)` so that a broken
    setup (a plain AssertionError or any other error) still fails.
The `unprivileged` fixture (tests/conftest.py) runs commands as a user whose file
permissions bind, also under CI, which runs as root.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable

import pytest


class Misbehaviour(AssertionError):
    """codesift did not behave as a fault test requires."""


def expect(condition: bool, message: str) -> None:
    """Raise Misbehaviour with `message` unless `condition` holds."""
    if not condition:
        raise Misbehaviour(message)


def describe(result: subprocess.CompletedProcess[str]) -> str:
    return f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"


def assert_clean_error(result: subprocess.CompletedProcess[str], code: int) -> str:
    expect(result.returncode == code, f"expected exit {code}: {describe(result)}")
    expect("Traceback" not in result.stderr + result.stdout, describe(result))
    lines = result.stderr.strip().splitlines()
    expect(len(lines) == 1, f"expected one line on stderr: {describe(result)}")
    return lines[0]


@pytest.fixture
def clean_error() -> Callable[[subprocess.CompletedProcess[str], int], str]:
    """assert_clean_error as a fixture, for fault test modules."""
    return assert_clean_error
