"""Which files of a workspace get indexed, and how their content is read.

`discover_files` lists the candidate files of one workspace folder (git or a
walk, ignore files, limits, cheap name/size checks); `discover_paths` gives the
same verdict for a few given paths without listing the whole folder;
`discover_stamps` gives the listed files' (size, mtime) alone, for a freshness
check; `read_source` reads one of them and decides, from its content, whether it
is indexable text.
"""

from __future__ import annotations

from codesift.workspace.content import ContentSkip, SourceText, read_source
from codesift.workspace.discovery import (
    BINARY_EXTENSIONS,
    CODESIFT_IGNORE_FILE,
    LOCK_FILE_NAMES,
    MINIFIED_SUFFIXES,
    Discovery,
    FileStamps,
    SkippedFile,
    SourceFile,
    discover_files,
    discover_paths,
    discover_stamps,
    discover_stamps_listed,
)

__all__ = [
    "BINARY_EXTENSIONS",
    "CODESIFT_IGNORE_FILE",
    "LOCK_FILE_NAMES",
    "MINIFIED_SUFFIXES",
    "ContentSkip",
    "Discovery",
    "FileStamps",
    "SkippedFile",
    "SourceFile",
    "SourceText",
    "discover_files",
    "discover_paths",
    "discover_stamps",
    "discover_stamps_listed",
    "read_source",
]
