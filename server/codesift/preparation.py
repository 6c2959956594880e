"""Preparing one file for the store, away from the database.

`prepare_file` reads a file, parses it and computes everything the writer
needs (the rows of store/rows.py: compressed chunk text, hashes, full-text
bodies). It takes and returns plain, cheaply picklable data so a bulk build can
run it in worker processes while the one writer only inserts rows.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from codesift.config import IndexSettings
from codesift.parsing import parse_source
from codesift.parsing.generated import is_generated
from codesift.parsing.languages import refine_language
from codesift.store.rows import FileMeta, FileRows, file_rows
from codesift.workspace import ContentSkip, read_source

__all__ = ["FileJob", "PreparedFile", "prepare_file", "prepare_files"]

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
    parsed = parse_source(content.text, job.path, language, settings, job.module_path)
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
    return PreparedFile(meta, file_rows(parsed))


def prepare_files(jobs: list[FileJob]) -> list[PreparedFile | ContentSkip]:
    """`prepare_file` for a batch (one round trip to a worker process)."""
    return [prepare_file(job) for job in jobs]
