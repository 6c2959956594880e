"""Stack frames and compilers' locations read as a place in the code
(retrieval/locations.py), and such a query's analysis."""

from __future__ import annotations

import pytest

from codesift.retrieval.locations import (
    MAX_FRAMES,
    Location,
    location_query,
    path_suffixes,
    trace_locations,
)
from codesift.retrieval.query import analyze_query


@pytest.mark.parametrize(
    ("text", "place"),
    [
        (
            'File "/srv/app/billing/retry.py", line 42, in charge',
            Location("srv/app/billing/retry.py", 42, "charge"),
        ),
        (
            '  File "billing/retry.py", line 7, in <module>',
            Location("billing/retry.py", 7, "module"),
        ),
        (
            "\tat com.acme.billing.Retry.charge(Retry.java:42)",
            Location("com/acme/billing/Retry.java", 42, "charge"),
        ),
        (
            "at com.acme.Retry$Inner.run(Retry.kt:9)",
            Location("com/acme/Retry.kt", 9, "run"),
        ),
        ("/srv/app/billing/retry.go:42 +0x1d", Location("srv/app/billing/retry.go", 42)),
        (
            "    at charge (/srv/app/lib/retry.js:42:13)",
            Location("srv/app/lib/retry.js", 42, "charge"),
        ),
        (
            "/srv/app/lib/retry.rb:42:in 'charge'",
            Location("srv/app/lib/retry.rb", 42, "charge"),
        ),
        ("   at ./src/retry.rs:42:5", Location("src/retry.rs", 42)),
        ("  --> src/retry.rs:42:5", Location("src/retry.rs", 42)),
        ("src/retry.c:42:5: error: expected ';'", Location("src/retry.c", 42)),
        ("retrieval/ordering.py:80", Location("retrieval/ordering.py", 80)),
        ("libexec/pyenv-help:126", Location("libexec/pyenv-help", 126)),  # a script
        ("C:\\work\\app\\Main.cs(42)", Location("work/app/Main.cs", 42)),
        ("Cargo.toml:3", Location("Cargo.toml", 3)),
    ],
)
def test_frames_and_locations_name_a_file_and_a_line(text: str, place: Location) -> None:
    assert location_query(text) == place


@pytest.mark.parametrize(
    "text",
    [
        "how does billing retry a failed charge",
        "cannot open config.yaml:42 bytes left",  # a message naming a file further on
        "python 3.11 release notes",
        "note:3",
        "striptests:18",  # one word, no folder, no extension
        "retry.py",  # a file, no line: a path query
        "billing.py:0",
    ],
)
def test_other_text_is_no_location(text: str) -> None:
    assert location_query(text) is None


def test_a_location_query_asks_for_its_file_and_line_and_searches_the_function() -> None:
    analysis = analyze_query('File "/srv/app/billing/retry.py", line 42, in charge_card')
    assert (analysis.path, analysis.line) == ("srv/app/billing/retry.py", 42)
    assert analysis.literal and not analysis.symbol_like
    assert {"charge_card", "charge", "card", "retry"} <= set(analysis.terms)
    assert analyze_query("retry.py").line == 0


def test_a_paths_ends_are_tried_longest_first() -> None:
    assert path_suffixes("srv/app/billing/retry.py") == [
        "srv/app/billing/retry.py",
        "app/billing/retry.py",
        "billing/retry.py",
        "retry.py",
    ]
    assert len(path_suffixes("/".join("abcdefghijkl") + "/x.py")) == 8


def test_a_python_traceback_is_read_innermost_frame_first() -> None:
    trace = (
        "Traceback (most recent call last):\n"
        '  File "/srv/app/main.py", line 9, in <module>\n'
        "    run()\n"
        '  File "/usr/lib/python3.11/json/decoder.py", line 337, in decode\n'
        '  File "/srv/app/billing/retry.py", line 42, in charge\n'
        "ValueError: card declined\n"
    )
    assert trace_locations(trace) == [
        Location("srv/app/billing/retry.py", 42, "charge"),
        Location("usr/lib/python3.11/json/decoder.py", 337, "decode"),
        Location("srv/app/main.py", 9, "module"),
    ]
    analysis = analyze_query(trace)
    assert (analysis.path, analysis.line) == ("srv/app/billing/retry.py", 42)
    assert len(analysis.frames) == 3


@pytest.mark.parametrize(
    "trace",
    [
        (
            'Exception in thread "main" java.lang.IllegalStateException: declined\n'
            "\tat com.acme.billing.Retry.charge(Retry.java:42)\n"
            "\tat com.acme.Main.main(Main.java:9)\n"
        ),
        (
            "panic: declined\n\ngoroutine 1 [running]:\n"
            "acme/billing.charge(...)\n\t/srv/app/billing/retry.go:42 +0x1d\n"
            "main.main()\n\t/srv/app/main.go:9 +0x25\n"
        ),
        (
            "Error: declined\n    at charge (/srv/app/billing/retry.js:42:13)\n"
            "    at main (/srv/app/main.js:9:3)\n"
        ),
    ],
)
def test_other_traces_list_the_innermost_frame_first(trace: str) -> None:
    frames = trace_locations(trace)
    assert [frame.line for frame in frames] == [42, 9]
    assert "billing/retry" in frames[0].path.lower()


def test_a_trace_is_read_up_to_its_tenth_frame() -> None:
    trace = "\n".join(f"/srv/app/f{i}.go:{i + 1} +0x1d" for i in range(30))
    assert len(trace_locations(trace)) == MAX_FRAMES
