"""The index database: connection and migrations, the one writer, read helpers."""

from __future__ import annotations

from codesift.store.database import move_aside, open_database
from codesift.store.writer import IndexWriter

__all__ = ["IndexWriter", "move_aside", "open_database"]
