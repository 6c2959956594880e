"""Preparing one file for the store, away from the database.

`prepare_file` reads a file, parses it and computes everything the writer
needs (the rows of store/rows.py: compressed chunk text, hashes, full-text
bodies). It takes and returns plain, cheaply picklable data so a bulk build can
run it in worker processes while the one writer only inserts rows.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from pathlib import Path

from codesift.config import IndexSettings
from codesift.embedding.texts import chunk_embedding_ids
from codesift.parsing import parse_source
from codesift.parsing.generated import is_generated
from codesift.parsing.languages import refine_language, spec_for
from codesift.parsing.model import CallSites
from codesift.store.rows import EdgeRow, FileMeta, FileRows, edge_rows, file_rows
from codesift.workspace import ContentSkip, read_source

__all__ = [
    "CallJob",
    "FileCalls",
    "FileJob",
    "PreparedFile",
    "prepare_file",
    "prepare_files",
    "resolve_file_calls",
    "resolve_files_calls",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class FileJob:
    abs_path: str
    path: str
    language: str
    size: int
    mtime_ns: int
    module_path: str | None
    settings: IndexSettings
    # Other than "resolve": the call pass (call_pass.py) writes the calls edges
    # afterwards (parsing/model.py CallSites).
    call_sites: CallSites = "resolve"
    # Layers whose chunks get their static vectors with the rows (when the run's
    # static vectors come right after it): their embedding texts' token ids, cut at
    # `vector_max_tokens`, come back with the rows (embedding/row_vectors.py).
    # Empty: none.
    vector_layers: tuple[str, ...] = ()
    vector_max_tokens: int = 256


@dataclass(frozen=True, slots=True)
class PreparedFile:
    meta: FileMeta
    rows: FileRows


def prepare_file(job: FileJob) -> PreparedFile | ContentSkip:
    """Read, parse and chunk one file. Never raises for bad content."""
    settings = job.settings
    content = read_source(Path(job.abs_path), settings.max_file_bytes, settings.minified_line_chars)
    if isinstance(content, ContentSkip):
        return content
    language = refine_language(job.path, job.language, content.text)
    parsed = parse_source(
        content.text,
        job.path,
        language,
        settings,
        job.module_path,
        call_sites=job.call_sites,
    )
    text = content.text
    line_count = text.count("\n") + (1 if text and not text.endswith("\n") else 0)
    meta = FileMeta(
        path=job.path,
        size=job.size,
        mtime_ns=job.mtime_ns,
        content_hash=content.content_hash,
        language=language,
        line_count=line_count,
        invalid_utf8=content.invalid_utf8,
        generated=is_generated(text),
    )
    rows = file_rows(parsed)
    if job.vector_layers:
        ids = chunk_embedding_ids(parsed, job.path, job.vector_layers, job.vector_max_tokens)
        rows = replace(rows, embedding_ids=ids)
    return PreparedFile(meta, rows)


def prepare_files(jobs: list[FileJob]) -> list[PreparedFile | ContentSkip]:
    """`prepare_file` for a batch (one round trip to a worker process)."""
    return [prepare_file(job) for job in jobs]


# -- the call pass: the targets of calls edges written without them -------------------


@dataclass(frozen=True, slots=True)
class CallJob:
    """A file whose calls edges wait for their targets, as the index knows it."""

    file: FileJob
    content_hash: str


@dataclass(frozen=True, slots=True)
class FileCalls:
    """A file's calls edges with their targets. `nodes` are the (kind, qualified
    name, start line) of its nodes in order, which the writer matches against the
    index's; `summaries` the (node position, text) of the summary chunks that name
    calls (parsing/chunks.py), whose text the index may have without them."""

    path: str
    nodes: list[tuple[str, str, int]]
    calls: list[EdgeRow]
    summaries: list[tuple[int, str]]


def resolve_file_calls(job: CallJob) -> FileCalls | None:
    """Parse a file again and resolve its calls; None when it changed since it was
    indexed (the next index run parses it whole) or can no longer be parsed."""
    from codesift.parsing.chunks import call_summaries
    from codesift.parsing.extractor import extract

    source = job.file
    settings = source.settings
    content = read_source(
        Path(source.abs_path), settings.max_file_bytes, settings.minified_line_chars
    )
    if isinstance(content, ContentSkip) or content.content_hash != job.content_hash:
        return None
    spec = spec_for(refine_language(source.path, source.language, content.text))
    if spec is None:
        return None
    try:
        parsed = extract(content.text, source.path, spec, module_path=source.module_path)
    except Exception:  # indexed as text when it failed before; nothing to resolve
        log.warning("parsing %s again for its calls failed", source.path, exc_info=True)
        return None
    nodes = [(n.kind, n.qualified_name, n.start_line) for n in parsed.nodes]
    return FileCalls(source.path, nodes, edge_rows(parsed, "calls"), call_summaries(parsed))


def resolve_files_calls(jobs: list[CallJob]) -> list[FileCalls | None]:
    """`resolve_file_calls` for a batch (one round trip to a worker process)."""
    return [resolve_file_calls(job) for job in jobs]
