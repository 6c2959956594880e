"""YAML and JSON documents as trees of values that know their lines.

OpenAPI and JSON Schema resources cite the lines they come from, which neither
`json.loads` nor `yaml.safe_load` report. YAML goes through PyYAML's compose
step (nodes with start and end marks); JSON through a small scanner of its own
that records where each value starts and ends (the standard library's string
scanner decodes the strings). Scalars are kept as written for YAML (`"true"`,
`"3"`) and as decoded for JSON; the resource builders only read strings.

Both loaders raise `DocumentError` for text that is not a document of that
format (or too deeply nested), never anything else.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass
from typing import Any

import yaml  # type: ignore[import-untyped]  # PyYAML ships no type hints

# libyaml's parser when PyYAML was built with it (the wheels are), ~10x faster.
_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# The standard library's JSON string decoder (C accelerated); typeshed omits it.
_scanstring: Any = getattr(json.decoder, "scanstring")  # noqa: B009

__all__ = ["DocumentError", "Located", "load_json", "load_yaml"]

# Deeper nesting is not an API description anyone wrote by hand.
MAX_DEPTH = 200

Value = dict[str, "Located"] | list["Located"] | str | int | float | bool | None


@dataclass(frozen=True, slots=True)
class Located:
    """A value and the 1-based, inclusive lines it spans. `key_line` is the line
    of the mapping key it is the value of (its own start line otherwise)."""

    value: Value
    start_line: int
    end_line: int
    key_line: int = 0

    @property
    def first_line(self) -> int:
        return self.key_line or self.start_line

    def get(self, key: str) -> Located | None:
        if isinstance(self.value, dict):
            return self.value.get(key)
        return None

    def text(self, key: str) -> str:
        """The string at `key` (numbers and booleans as text), "" for anything else."""
        found = self.get(key)
        if found is None or isinstance(found.value, dict | list) or found.value is None:
            return ""
        if isinstance(found.value, bool):
            return "true" if found.value else "false"
        return str(found.value).strip()

    def mapping(self) -> dict[str, Located]:
        return self.value if isinstance(self.value, dict) else {}

    def items(self) -> list[Located]:
        return self.value if isinstance(self.value, list) else []


class DocumentError(ValueError):
    """The text is not a YAML / JSON document this module can read."""


# -- YAML ---------------------------------------------------------------------------


def load_yaml(text: str, lines: list[str]) -> Located:
    """The first document of a YAML text; `lines` (the text's lines) let a
    block's end skip the blank and comment lines YAML counts into it."""
    try:
        node = yaml.compose(text, Loader=_LOADER)
    except yaml.YAMLError as exc:
        raise DocumentError(str(exc)) from exc
    except RecursionError as exc:
        raise DocumentError("too deeply nested") from exc
    if node is None:
        raise DocumentError("empty document")
    return _from_yaml(node, lines, {}, 0, 0)


def _yaml_end_line(node: Any, lines: list[str]) -> int:
    start = int(node.start_mark.line)
    mark = node.end_mark
    # The end mark of a block is the start of whatever follows it (the next
    # key, maybe indented): when only indentation precedes it on its line, the
    # block ended on the line before.
    end_index = int(mark.line)
    before = lines[end_index][: int(mark.column)] if end_index < len(lines) else ""
    end = end_index if end_index > start and not before.strip() else end_index + 1
    while end > start + 1:
        line = lines[end - 1].strip() if end - 1 < len(lines) else ""
        if line and not line.startswith("#"):
            break
        end -= 1
    return max(end, start + 1)


def _from_yaml(
    node: Any, lines: list[str], seen: dict[int, Located], depth: int, key_line: int
) -> Located:
    if depth > MAX_DEPTH:
        raise DocumentError("too deeply nested")
    cached = seen.get(id(node))
    if cached is not None:  # an alias: the anchor's value, converted once
        return cached
    start = int(node.start_mark.line) + 1
    end = _yaml_end_line(node, lines)
    value: Value
    if isinstance(node, yaml.MappingNode):
        entries: dict[str, Located] = {}
        merged: list[Located] = []
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                continue
            line = int(key_node.start_mark.line) + 1
            item = _from_yaml(value_node, lines, seen, depth + 1, line)
            if key_node.value == "<<" and key_node.tag.endswith(":merge"):
                merged.extend(item.items() if isinstance(item.value, list) else [item])
                continue
            entries.setdefault(str(key_node.value), item)
        for source in merged:  # `<<: *defaults`: keys written here win
            for key, item in source.mapping().items():
                entries.setdefault(key, item)
        value = entries
    elif isinstance(node, yaml.SequenceNode):
        value = [_from_yaml(item, lines, seen, depth + 1, 0) for item in node.value]
    else:
        value = str(node.value)
    located = Located(value, start, end, key_line)
    seen[id(node)] = located
    return located


# -- JSON ---------------------------------------------------------------------------

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_LITERALS: dict[str, bool | None] = {"true": True, "false": False, "null": None}


class _JsonScanner:
    def __init__(self, text: str) -> None:
        self.text = text
        self.newlines = [m.start() for m in re.finditer("\n", text)]

    def line_of(self, offset: int) -> int:
        return bisect.bisect_left(self.newlines, offset) + 1

    def skip(self, pos: int) -> int:
        match = _WHITESPACE.match(self.text, pos)
        return match.end() if match else pos

    def fail(self, pos: int, what: str) -> DocumentError:
        return DocumentError(f"{what} at line {self.line_of(pos)}")

    def value(self, pos: int, depth: int, key_line: int) -> tuple[Located, int]:
        if depth > MAX_DEPTH:
            raise self.fail(pos, "too deeply nested")
        text = self.text
        pos = self.skip(pos)
        if pos >= len(text):
            raise self.fail(pos, "unexpected end")
        ch = text[pos]
        start = pos
        if ch == "{":
            entries: dict[str, Located] = {}
            pos = self.skip(pos + 1)
            if text.startswith("}", pos):
                return Located(entries, self.line_of(start), self.line_of(pos), key_line), pos + 1
            while True:
                pos = self.skip(pos)
                if not text.startswith('"', pos):
                    raise self.fail(pos, "expected a key")
                key, after = self.string(pos)
                line = self.line_of(pos)
                pos = self.skip(after)
                if not text.startswith(":", pos):
                    raise self.fail(pos, "expected ':'")
                item, pos = self.value(pos + 1, depth + 1, line)
                entries.setdefault(key, item)
                pos = self.skip(pos)
                if text.startswith(",", pos):
                    pos += 1
                    continue
                if text.startswith("}", pos):
                    end = self.line_of(pos)
                    return Located(entries, self.line_of(start), end, key_line), pos + 1
                raise self.fail(pos, "expected ',' or '}'")
        if ch == "[":
            items: list[Located] = []
            pos = self.skip(pos + 1)
            if text.startswith("]", pos):
                return Located(items, self.line_of(start), self.line_of(pos), key_line), pos + 1
            while True:
                item, pos = self.value(pos, depth + 1, 0)
                items.append(item)
                pos = self.skip(pos)
                if text.startswith(",", pos):
                    pos += 1
                    continue
                if text.startswith("]", pos):
                    end = self.line_of(pos)
                    return Located(items, self.line_of(start), end, key_line), pos + 1
                raise self.fail(pos, "expected ',' or ']'")
        if ch == '"':
            decoded, pos = self.string(pos)
            line = self.line_of(start)
            return Located(decoded, line, self.line_of(pos - 1), key_line), pos
        for word, literal in _LITERALS.items():
            if text.startswith(word, pos):
                line = self.line_of(pos)
                return Located(literal, line, line, key_line), pos + len(word)
        match = _NUMBER.match(text, pos)
        if match is None:
            raise self.fail(pos, "unexpected character")
        raw = match.group()
        number: int | float = float(raw) if any(c in raw for c in ".eE") else int(raw)
        line = self.line_of(pos)
        return Located(number, line, line, key_line), match.end()

    def string(self, pos: int) -> tuple[str, int]:
        try:
            decoded, end = _scanstring(self.text, pos + 1)
        except json.JSONDecodeError as exc:
            raise self.fail(pos, "bad string") from exc
        return str(decoded), int(end)


def load_json(text: str) -> Located:
    """A JSON document (a byte-order mark and surrounding whitespace allowed)."""
    scanner = _JsonScanner(text.removeprefix("\ufeff"))
    try:
        root, pos = scanner.value(0, 0, 0)
    except RecursionError as exc:
        raise DocumentError("too deeply nested") from exc
    if scanner.skip(pos) != len(scanner.text):
        raise scanner.fail(pos, "trailing content")
    return root
