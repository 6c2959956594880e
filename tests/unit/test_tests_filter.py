"""The `tests` option of a search (engine/search.py, `keeps_tests`): `include` and
`exclude` whatever the query; `auto` keeps the results in test files only for a
query that asks for test code."""

from __future__ import annotations

import pytest

from codesift.engine.results import TESTS_CHOICES
from codesift.engine.search import keeps_tests


@pytest.mark.parametrize(
    "query",
    [
        '"card declined"',  # a quoted text: found wherever it is written
        "assert ledger.total() == 3",  # a pasted line of code
        "test_retry_charge",  # a test's name, as test frameworks write them
        "testRetryCharge",
        "TestLedger",
        "Test_ledger",
        "ledger_test",
        "LedgerTest",
        "LedgerTests",
        "LedgerSpec",
        "ledger_spec",
        "TestLedger.setUp",  # a qualified name with a test in it
        "how does test_retry_charge set up the ledger",  # a question naming a test
        "tests/test_ledger.py",  # a test file's path
        # a failing test's traceback: its outer frame is the test
        'File "/srv/app/tests/test_ledger.py", line 9, in test_total\n'
        'File "/srv/app/billing/ledger.py", line 42, in total',
    ],
)
def test_auto_keeps_test_files_for_a_query_that_asks_for_test_code(query: str) -> None:
    assert keeps_tests("auto", query) is True
    assert keeps_tests("exclude", query) is False
    assert keeps_tests("include", query) is True


@pytest.mark.parametrize(
    "query",
    [
        "retry a failed charge",  # a question
        "settle the ledger",
        "RetryPolicy",  # a name that is no test's
        "parse_config",
        "Test",  # a word alone, no test's name
        "Contest",
        "latest",
        "testing the ledger",
        "billing/ledger.py",  # a path outside the tests
        'File "/srv/app/billing/ledger.py", line 42, in total',  # a frame outside them
    ],
)
def test_auto_leaves_test_files_out_for_other_queries(query: str) -> None:
    assert keeps_tests("auto", query) is False
    assert keeps_tests("include", query) is True


def test_every_choice_is_known_and_an_unknown_one_keeps_nothing() -> None:
    assert TESTS_CHOICES == ("include", "exclude", "auto")
    assert keeps_tests("none", "test_retry_charge") is False
