"""OpenAPI / Swagger -> one resource per operation and per component schema.

An OpenAPI 3 or Swagger 2 document (YAML or JSON with a top-level `openapi:`
or `swagger:` key) becomes an "endpoint" resource per operation, titled
`GET /users/{id}` and spanning the operation's lines, whose text gathers what
a question about it would name: summary, description, operationId, tags,
parameters (name, where, required, description; the path's own parameters
included), the request body and each response with their descriptions and
the schemas they reference. Each `components/schemas/X` (OpenAPI 3) or
`definitions/X` (Swagger 2) entry is a "schema" resource, described like a
JSON Schema. The API itself (title, version, description, servers, tags) is
one `doc` section over its `info` block, as a markdown section would be.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from codesift.parsing.jsonschema import load_document, ref_name, schema_resource
from codesift.parsing.located import DocumentError, Located
from codesift.parsing.model import ParsedChunk, ParsedFile
from codesift.parsing.plaintext import MAX_CHUNK_CHARS, line_windows, split_lines
from codesift.parsing.resources import MAX_RESOURCE_LINES, add_resource, add_resource_text

__all__ = ["parse_openapi"]

_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_NOTHING = Located(None, 0, 0)
# How far into a request or response schema referenced names are collected.
_MAX_REF_DEPTH = 6
_MAX_REF_VISITS = 2000
_MAX_REFS = 30


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _refs(value: Located, out: list[str]) -> None:
    """Names of the schemas `value` references ($ref), in order, once each.
    A walk of bounded depth and size: YAML aliases can make a small text a
    huge tree."""
    budget = _MAX_REF_VISITS
    stack: list[tuple[Located, int]] = [(value, 0)]
    while stack and budget > 0 and len(out) < _MAX_REFS:
        item, depth = stack.pop()
        budget -= 1
        if isinstance(item.value, dict):
            ref = item.text("$ref")
            name = ref_name(ref) if ref else ""
            if name and name not in out:
                out.append(name)
            children = list(item.value.values())
        elif isinstance(item.value, list):
            children = item.value
        else:
            continue
        if depth < _MAX_REF_DEPTH:
            stack.extend((child, depth + 1) for child in reversed(children))


def _resolve(value: Located, root: Located) -> Located:
    """A local `$ref` (`#/components/parameters/Limit`) replaced by its target."""
    ref = value.text("$ref")
    if not ref.startswith("#/"):
        return value
    target: Located | None = root
    for part in ref[2:].split("/"):
        if target is None:
            break
        target = target.get(part.replace("~1", "/").replace("~0", "~"))
    return target if target is not None and isinstance(target.value, dict) else value


def _parameter_line(param: Located, root: Located) -> str:
    param = _resolve(param, root)
    name = param.text("name")
    if not name:
        return ""
    details = [param.text("in")]
    if param.text("required") == "true":
        details.append("required")
    schema = param.get("schema")
    kind = param.text("type")
    if schema is not None:
        refs: list[str] = []
        _refs(schema, refs)
        kind = kind or schema.text("type") or ", ".join(refs)
    if kind:
        details.append(kind)
    line = f"- {name} ({', '.join(d for d in details if d)})"
    description = param.text("description")
    return f"{line}: {_one_line(description)}" if description else line


def _operation_lines(op: Located, path_item: Located, root: Located) -> list[str]:
    out = _about_lines(op)
    param_lines, body_param = _parameters(op, path_item, root)
    if param_lines:
        out.append("Parameters:")
        out.extend(param_lines)
    body = op.get("requestBody")
    if body is not None or body_param is not None:
        source = _resolve(body, root) if body is not None else body_param
        assert source is not None
        line = "Request body"
        types = [*(source.get("content") or _NOTHING).mapping()]
        if types:
            line += f" ({', '.join(types)})"
        out.append(_described(line, source))
    responses = (op.get("responses") or _NOTHING).mapping()
    if responses:
        out.append("Responses:")
        for status, response in responses.items():
            out.append(_described(f"- {status}", _resolve(response, root)))
    return out


def _about_lines(op: Located) -> list[str]:
    """An operation's summary, description, operationId, tags and deprecation."""
    out: list[str] = []
    summary = op.text("summary")
    if summary:
        out.append(summary)
    description = op.text("description")
    if description:
        out.extend(line.rstrip() for line in description.strip().split("\n"))
    operation_id = op.text("operationId")
    if operation_id:
        out.append(f"operationId: {operation_id}")
    tags = [str(t.value) for t in (op.get("tags") or _NOTHING).items() if isinstance(t.value, str)]
    if tags:
        out.append(f"Tags: {', '.join(tags)}")
    if op.text("deprecated") == "true":
        out.append("Deprecated")
    return out


def _parameters(op: Located, path_item: Located, root: Located) -> tuple[list[str], Located | None]:
    """One line per parameter of the path and the operation (once each), and
    Swagger 2's body parameter (its request body) if there is one."""
    params = [*(path_item.get("parameters") or _NOTHING).items()]
    params += (op.get("parameters") or _NOTHING).items()
    param_lines: list[str] = []
    body_param: Located | None = None
    for param in params:
        resolved = _resolve(param, root)
        if resolved.text("in") == "body":  # Swagger 2: the request body is a parameter
            body_param = resolved
            continue
        line = _parameter_line(param, root)
        if line and line not in param_lines:
            param_lines.append(line)
    return param_lines, body_param


def _described(line: str, source: Located) -> str:
    """`line` with the description of `source` and the schemas it references."""
    refs: list[str] = []
    _refs(source, refs)
    described = source.text("description")
    if described:
        line += f": {_one_line(described)}"
    if refs:
        line += f" [schemas: {', '.join(refs)}]"
    return line


def _overview(parsed: ParsedFile, root: Located, path: str) -> None:
    """A `doc` section for the API as a whole (no node, like a markdown
    section): its title, version, description, servers and tags, over the
    lines of its `info` block."""
    info = root.get("info") or _NOTHING
    title = info.text("title") or PurePosixPath(path).name or path
    out: list[str] = []
    version = info.text("version")
    if version:
        out.append(f"Version {version}")
    description = info.text("description")
    if description:
        out.extend(line.rstrip() for line in description.strip().split("\n"))
    servers = [s.text("url") for s in (root.get("servers") or _NOTHING).items()]
    servers += [root.text("host")] if root.text("host") else []
    if any(servers):
        out.append(f"Servers: {', '.join(s for s in servers if s)}")
    tags: list[str] = []
    for tag in (root.get("tags") or _NOTHING).items():
        name = tag.text("name")
        if name:
            described = tag.text("description")
            tags.append(f"- {name}: {_one_line(described)}" if described else f"- {name}")
    if tags:
        out.append("Tags:")
        out.extend(tags)
    if not out:
        return
    start, end = (info.first_line, info.end_line) if info.value else (1, 1)
    header = title + "\n\n"
    budget = MAX_CHUNK_CHARS - len(header)
    for part, span in enumerate(line_windows(out, 1, MAX_RESOURCE_LINES, budget)):
        parsed.chunks.append(
            ParsedChunk(
                layer="doc",
                node=None,
                start_line=start,
                end_line=end,
                text=header + span.text,
                part=part,
                title=title,
            )
        )


def parse_openapi(text: str, path: str) -> ParsedFile:
    """Resources for an OpenAPI / Swagger document; raises DocumentError when
    the text is not one."""
    parsed = ParsedFile(language="openapi")
    lines = split_lines(text)
    root = load_document(text, path, lines)
    if root.get("openapi") is None and root.get("swagger") is None:
        raise DocumentError("no openapi or swagger key")
    _overview(parsed, root, path)
    base = root.text("basePath").rstrip("/")
    for api_path, path_item in (root.get("paths") or _NOTHING).mapping().items():
        path_item = _resolve(path_item, root)
        for method, op in path_item.mapping().items():
            if method.lower() not in _METHODS or not isinstance(op.value, dict):
                continue
            title = f"{method.upper()} {base}{api_path}"
            node = add_resource(
                parsed,
                kind="endpoint",
                name=op.text("operationId") or title,
                qualified_name=title,
                start_line=op.first_line,
                end_line=op.end_line,
                signature=title,
                docstring=_one_line(op.text("summary") or op.text("description")),
            )
            body = _operation_lines(op, path_item, root)
            add_resource_text(parsed, node, title, body, None)
    schemas = (
        ("components/schemas", (root.get("components") or _NOTHING).get("schemas") or _NOTHING),
        ("definitions", root.get("definitions") or _NOTHING),
    )
    for prefix, entries in schemas:
        for name, schema in entries.mapping().items():
            if isinstance(schema.value, dict):
                schema_resource(parsed, schema, name, f"{prefix}/{name}")
    return parsed
