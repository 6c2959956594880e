"""JSON Schema -> one resource for the schema and one per definition.

A schema file (`.json` / `.yaml` with a `$schema` key naming json-schema.org,
or any `*.schema.json`) becomes a "schema" resource for its root and one for
each entry of `$defs` / `definitions`. The text describes it: title,
description, type, and each property with its type and description (nested
object properties as `parent.child`, a few levels deep), which is what a
question about a schema ("which field holds the billing address") finds.
OpenAPI component schemas are described the same way (`describe_schema`).
"""

from __future__ import annotations

from pathlib import PurePosixPath

from codesift.parsing.located import DocumentError, Located, load_json, load_yaml
from codesift.parsing.model import ParsedFile
from codesift.parsing.plaintext import split_lines
from codesift.parsing.resources import add_resource, add_resource_text

__all__ = ["describe_schema", "load_document", "parse_json_schema", "ref_name"]

_MAX_PROPERTY_DEPTH = 3
_MAX_PROPERTIES = 400
_DEFINITION_KEYS = ("$defs", "definitions")


def load_document(text: str, path: str, lines: list[str]) -> Located:
    """A YAML or JSON document by the file's extension (JSON first when unsure)."""
    suffix = PurePosixPath(path).suffix.lower()
    if suffix in (".yaml", ".yml"):
        return load_yaml(text, lines)
    try:
        return load_json(text)
    except DocumentError:
        if suffix == ".json":
            raise
        return load_yaml(text, lines)


def ref_name(ref: str) -> str:
    """`#/components/schemas/User` -> `User`; `common.yaml#/Pet` -> `Pet`."""
    return ref.rstrip("/").rsplit("/", 1)[-1].split("#")[-1]


def _one_line(text: str, limit: int = 400) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _type_of(schema: Located, with_format: bool = True) -> str:
    """A short type: `string`, `integer[]`, `Address`, `string | null`, `enum(a, b)`."""
    ref = schema.text("$ref")
    if ref:
        return ref_name(ref)
    names = _type_names(schema)
    if not names:
        composed = _composed_type(schema)
        if composed:
            return composed
    enum = schema.get("enum")
    if enum is not None and enum.items():
        values = ", ".join(str(item.value) for item in enum.items()[:8])
        return f"enum({values})" if not names else f"{' | '.join(names)} enum({values})"
    fmt = schema.text("format") if with_format else ""
    text = " | ".join(names)
    return f"{text} ({fmt})" if text and fmt else text


def _type_names(schema: Located) -> list[str]:
    """The names of a schema's `type` (one or a list), an array's as `item[]`."""
    kind = schema.get("type")
    names: list[str] = []
    if kind is not None:
        if isinstance(kind.value, list):
            names = [str(item.value) for item in kind.items() if isinstance(item.value, str)]
        elif isinstance(kind.value, str):
            names = [kind.value]
    if "array" in names:
        items = schema.get("items")
        inner = _type_of(items, with_format=False) if items is not None else ""
        if inner:
            names = [f"{inner}[]" if name == "array" else name for name in names]
    return names


def _composed_type(schema: Located) -> str:
    """`A | B` of the first of oneOf / anyOf (`A & B` of allOf) that names a
    type, "" when none does."""
    for key in ("oneOf", "anyOf", "allOf"):
        options = [_type_of(item) for item in (schema.get(key) or Located(None, 0, 0)).items()]
        options = [option for option in options if option]
        if options:
            return (" & " if key == "allOf" else " | ").join(options)
    return ""


def _property_lines(schema: Located, prefix: str, depth: int, out: list[str]) -> None:
    required = {str(item.value) for item in (schema.get("required") or Located(None, 0, 0)).items()}
    for name, prop in schema.mapping().get("properties", Located(None, 0, 0)).mapping().items():
        if len(out) >= _MAX_PROPERTIES:
            return
        full = f"{prefix}{name}"
        kind = _type_of(prop)
        line = f"- {full}"
        details = ", ".join(part for part in (kind, "required" if name in required else "") if part)
        if details:
            line += f" ({details})"
        described = prop.text("description") or prop.text("title")
        if described:
            line += f": {_one_line(described)}"
        out.append(line)
        if depth < _MAX_PROPERTY_DEPTH:
            nested = prop
            items = prop.get("items")
            if prop.get("properties") is None and items is not None:
                nested = items
            if nested.get("properties") is not None:
                _property_lines(nested, f"{full}.", depth + 1, out)


def describe_schema(schema: Located) -> list[str]:
    """Lines describing a schema: description, type, properties, composition."""
    out: list[str] = []
    title = schema.text("title")
    if title:
        out.append(f"Title: {title}")
    description = schema.text("description")
    if description:
        out.extend(line.rstrip() for line in description.strip().split("\n"))
    kind = _type_of(schema)
    if kind:
        out.append(f"Type: {kind}")
    properties: list[str] = []
    _property_lines(schema, "", 1, properties)
    for key in ("allOf", "oneOf", "anyOf"):
        for part in (schema.get(key) or Located(None, 0, 0)).items():
            _property_lines(part, "", 1, properties)
    if properties:
        out.append("Properties:")
        out.extend(properties)
    example = schema.get("example") or schema.get("examples")
    if example is not None and isinstance(example.value, str):
        out.append(f"Example: {_one_line(example.value)}")
    return out


def schema_resource(
    parsed: ParsedFile, schema: Located, name: str, qualified_name: str, label: str = "Schema"
) -> None:
    """One "schema" resource for `schema` (its lines, its description)."""
    title = f"{label} {name}"
    description = schema.text("description")
    node = add_resource(
        parsed,
        kind="schema",
        name=name,
        qualified_name=qualified_name,
        start_line=schema.first_line,
        end_line=schema.end_line,
        signature=title,
        docstring=_one_line(description, 1000),
    )
    add_resource_text(parsed, node, title, describe_schema(schema), None)


def parse_json_schema(text: str, path: str) -> ParsedFile:
    """Resources for a JSON Schema file; raises DocumentError when it is not one."""
    parsed = ParsedFile(language="jsonschema")
    lines = split_lines(text)
    root = load_document(text, path, lines)
    if not isinstance(root.value, dict):
        raise DocumentError("not a schema object")
    stem = PurePosixPath(path).name
    for suffix in (".json", ".yaml", ".yml"):
        stem = stem.removesuffix(suffix)
    stem = stem.removesuffix(".schema")
    name = root.text("title") or stem or path
    schema_resource(parsed, root, name, name)
    for key in _DEFINITION_KEYS:
        for def_name, definition in (root.get(key) or Located(None, 0, 0)).mapping().items():
            if isinstance(definition.value, dict):
                schema_resource(parsed, definition, def_name, f"{key}/{def_name}")
    return parsed
