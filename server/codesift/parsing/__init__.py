"""Source text -> nodes, edges and chunks.

`parse_source` picks the path by language: a tree-sitter grammar and query for
code, heading sections for markdown and reStructuredText, resources (one node
and its doc chunks per table, view, endpoint or schema) for SQL DDL, OpenAPI
and JSON Schema files, line windows for every other text file.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from codesift.config import IndexSettings
from codesift.parsing.chunks import build_chunks
from codesift.parsing.languages import detect_language, spec_for
from codesift.parsing.model import CallSites, ParsedChunk, ParsedEdge, ParsedFile, ParsedNode
from codesift.parsing.plaintext import parse_text

__all__ = [
    "ParsedChunk",
    "ParsedEdge",
    "ParsedFile",
    "ParsedNode",
    "detect_language",
    "parse_source",
]

log = logging.getLogger(__name__)


def parse_source(
    text: str,
    rel_path: str,
    language: str,
    settings: IndexSettings,
    module_path: str | None = None,
    *,
    call_sites: CallSites = "resolve",
) -> ParsedFile:
    """Parse one file. Never raises for bad content: a grammar failure falls back
    to line windows so the file stays searchable. `call_sites` other than
    "resolve" leaves the calls to the call pass (model.CallSites, call_pass.py)."""
    # Imported on first parse: a search that parses nothing (it reads this package's
    # languages and model) need not load the tree-sitter grammars.
    from codesift.parsing.extractor import extract
    from codesift.parsing.markdown import parse_markdown

    spec = spec_for(language)
    if language == "markdown":
        return parse_markdown(text, rel_path)
    document_parser = _document_parser(language)
    if document_parser is not None:
        return _parse_document(document_parser, text, rel_path, language, settings)
    if spec is None:
        return parse_text(text, rel_path, settings.text_window_lines)
    try:
        parsed = extract(text, rel_path, spec, module_path=module_path, call_sites=call_sites)
    except Exception:  # a grammar or query bug must not lose the file
        log.warning(
            "parsing %s as %s failed; indexing it as text", rel_path, language, exc_info=True
        )
        fallback = parse_text(text, rel_path, settings.text_window_lines)
        fallback.language = language
        return fallback
    parsed.chunks = build_chunks(
        parsed, text.split("\n"), settings.max_chunk_lines, settings.max_chunk_chars
    )
    return parsed


def _document_parser(language: str) -> Callable[[str, str, int], ParsedFile] | None:
    """The parser of a document language (imported on first use: a search that
    parses nothing need not compile their patterns or load PyYAML)."""
    if language == "rst":
        from codesift.parsing.rst import parse_rst

        return lambda text, path, _window_lines: parse_rst(text, path)
    if language == "sql":
        from codesift.parsing.sql import parse_sql

        return parse_sql
    if language == "openapi":
        from codesift.parsing.openapi import parse_openapi

        return lambda text, path, _window_lines: parse_openapi(text, path)
    if language == "jsonschema":
        from codesift.parsing.jsonschema import parse_json_schema

        return lambda text, path, _window_lines: parse_json_schema(text, path)
    return None


def _parse_document(
    parser: Callable[[str, str, int], ParsedFile],
    text: str,
    rel_path: str,
    language: str,
    settings: IndexSettings,
) -> ParsedFile:
    """Sections or resources of a document; line windows when it does not parse
    (YAML with a syntax error, a `.schema.json` that is not JSON)."""
    try:
        return parser(text, rel_path, settings.text_window_lines)
    except Exception:  # a malformed document must not lose the file
        log.debug("parsing %s as %s failed; indexing it as text", rel_path, language, exc_info=True)
        fallback = parse_text(text, rel_path, settings.text_window_lines)
        fallback.language = language
        return fallback
