"""Which files of a workspace get indexed, and how their content is read.

`discover_files` lists the candidate files of one workspace folder (git or a
walk, ignore files, limits, cheap name/size checks); `read_source` reads one of
them and decides, from its content, whether it is indexable text.
"""

from __future__ import annotations

from codesift.workspace.content import ContentSkip, SourceText, read_source
from codesift.workspace.discovery import (
    BINARY_EXTENSIONS,
    CODESIFT_IGNORE_FILE,
    LOCK_FILE_NAMES,
    MINIFIED_SUFFIXES,
    Discovery,
    SkippedFile,
    SourceFile,
    discover_files,
)

__all__ = [
    "BINARY_EXTENSIONS",
    "CODESIFT_IGNORE_FILE",
    "LOCK_FILE_NAMES",
    "MINIFIED_SUFFIXES",
    "ContentSkip",
    "Discovery",
    "SkippedFile",
    "SourceFile",
    "SourceText",
    "discover_files",
    "read_source",
]
