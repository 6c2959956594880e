"""Source text -> nodes, edges and chunks.

`parse_source` picks the path by language: a tree-sitter grammar and query for
code, heading sections for markdown, line windows for every other text file.
"""

from __future__ import annotations

import logging

from codesift.config import IndexSettings
from codesift.parsing.chunks import build_chunks
from codesift.parsing.extractor import extract
from codesift.parsing.languages import detect_language, spec_for
from codesift.parsing.markdown import parse_markdown
from codesift.parsing.model import ParsedChunk, ParsedEdge, ParsedFile, ParsedNode
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
) -> ParsedFile:
    """Parse one file. Never raises for bad content: a grammar failure falls back
    to line windows so the file stays searchable."""
    spec = spec_for(language)
    if language == "markdown":
        return parse_markdown(text, rel_path)
    if spec is None:
        return parse_text(text, rel_path, settings.text_window_lines)
    try:
        parsed = extract(text, rel_path, spec, module_path=module_path)
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
