"""A place in the code as tools print it: a stack frame or a compiler's location.

A developer pastes a line of a trace or of a build's output to go where it points:
Python's `File "/srv/app/billing/retry.py", line 42, in charge`, a JVM frame `at
com.acme.billing.Retry.charge(Retry.java:42)`, Go's `/srv/app/billing/retry.go:42
+0x1d`, JavaScript's `at charge (/srv/app/lib/retry.js:42:13)`, Ruby's
`/srv/app/lib/retry.rb:42:in 'charge'`, Rust's `at ./src/retry.rs:42:5`, a
compiler's `src/retry.c:42:5: error: ...`. `location_query` reads the file, the line
and, when the frame names it, the function; the path stream (streams.py) finds the
file by the longest end of that path the index has (a trace's paths are where the
program ran, not where the workspace is) and its chunk holding the line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from codesift.parsing.languages import detect_language

__all__ = ["Location", "location_query", "names_a_file", "path_suffixes", "trace_locations"]


@dataclass(frozen=True, slots=True)
class Location:
    path: str  # as the trace has it, without a leading `/`, `./` or drive
    line: int
    name: str = ""  # the function the frame names, "" for none


_PYTHON = re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+)(?:, in (?P<name>[\w<>.]+))?')
# `at pkg.Type.method(Type.java:42)`: the package's folders are the path's.
_JVM = re.compile(
    r"\bat (?P<owner>[\w$.]+)\.(?P<name>[\w$<>]+)"
    r"\((?P<file>[\w$-]+\.(?:java|kt|kts|scala|groovy)):(?P<line>\d+)\)"
)
_RUBY = re.compile(r"(?P<path>[^\s:'\"]+\.rb):(?P<line>\d+):in [`'](?P<name>[^'`]+)'")
_JS = re.compile(r"\bat (?P<name>[\w$.<>]+) \((?:file://)?(?P<path>[^\s()]+?):(?P<line>\d+):\d+\)")
# `path:42`, `path:42:5`, `path(42)`, `path, line 42`, `path line 42`, opening the
# text as compilers, linters and grep print it (`at`, rustc's `-->` before it): a
# message that names a file and a number further on is a message.
_ANY = re.compile(
    r"\s*(?:at\s+|-->\s*)?(?P<path>(?:[A-Za-z]:)?[\w./\\@+~-]*[\w-](?:\.[A-Za-z]\w{0,6})?)"
    r"(?::(?P<line>\d+)(?::\d+)?\b|\((?P<paren>\d+)\)|,? line (?P<word>\d+))"
)
# Extensions of files that have no language of their own but are named (asked for
# by name, or in a location).
_FILE_EXTENSIONS = frozenset(
    """
    txt toml cfg ini conf json yaml yml lock xml html htm css scss less mk cmake gradle
    properties env csv tsv proto graphql sh bash zsh bat ps1 dockerfile tf hcl nix in inc
    """.split()
)
# The most ends of a path tried, longest first.
MAX_SUFFIXES = 8


# The most frames of a pasted trace looked up.
MAX_FRAMES = 10


def location_query(text: str) -> Location | None:
    """The place `text` points to when it is a stack frame or a compiler's location
    (module docstring), else None: a trace's innermost frame."""
    frames = trace_locations(text)
    return frames[0] if frames else None


def trace_locations(text: str) -> list[Location]:
    """The places a pasted trace's frames point to, innermost first (a Python
    traceback lists it last, the others first), at most MAX_FRAMES; one for a
    single frame or location, none for other text."""
    if len(text) > 4000:
        return []
    found: list[Location | None] = [
        _location(m["path"], m["line"], m["name"] or "") for m in _PYTHON.finditer(text)
    ][::-1]
    if not found:
        found = [_jvm_location(m) for m in _JVM.finditer(text)]
    for pattern in (_RUBY, _JS):
        if not found:
            found = [_location(m["path"], m["line"], m["name"]) for m in pattern.finditer(text)]
    if not found:
        found = [_line_location(line) for line in text.splitlines()]
    return list(dict.fromkeys(place for place in found if place is not None))[:MAX_FRAMES]


def _jvm_location(match: re.Match[str]) -> Location | None:
    package = [part for part in match["owner"].split(".") if part[:1].islower()]
    return _location("/".join([*package, match["file"]]), match["line"], match["name"])


def _line_location(text: str) -> Location | None:
    """A location opening a line (`path:42:5: error`, Go's `path:42 +0x1d`)."""
    match = _ANY.match(text)
    if match is None:
        return None
    path = match["path"].replace("\\", "/")
    name = path.rsplit("/", 1)[-1]
    if "." in name:
        if not names_a_file(name):
            return None
    elif "/" not in path.strip("/") or match["line"] is None:
        return None  # a script without extension: a folder and `:line` say it is a path
    return _location(match["path"], match["line"] or match["paren"] or match["word"], "")


def _location(path: str, line: str, name: str) -> Location | None:
    path = path.replace("\\", "/").removeprefix("file://")
    path = re.sub(r"^(?:[A-Za-z]:)?(?:\.?/)+", "", path)
    number = int(line)
    if not path or number <= 0:
        return None
    return Location(path, number, name.rsplit(".", 1)[-1].strip("<>"))


def names_a_file(name: str) -> bool:
    """Whether a file name's extension is a language codesift reads or a common
    text file's (`retry.py`, `Cargo.toml`), not a version or a sentence's dot."""
    stem, dot, extension = name.rpartition(".")
    return bool(dot and stem) and (
        extension.lower() in _FILE_EXTENSIONS or detect_language(name) != "text"
    )


def path_suffixes(path: str) -> list[str]:
    """The ends of `path` to look a file up by, longest first (at most MAX_SUFFIXES):
    `srv/app/billing/retry.py`, `app/billing/retry.py`, `billing/retry.py`,
    `retry.py`."""
    parts = [part for part in path.split("/") if part and part != "."]
    start = max(0, len(parts) - MAX_SUFFIXES)
    return ["/".join(parts[i:]) for i in range(start, len(parts))]
