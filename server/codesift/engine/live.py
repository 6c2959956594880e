"""A live index: one workspace folder's writer thread, watcher and reader
connections, the engine's long-running side shared by every server front end.

The parts, by role:

- engine/live_folder.py: `FolderIndex` (the folder, its work queue, its writer
  thread and watcher, its life cycle) and `FolderListener` (what it tells the
  server);
- engine/live_work.py: the writer's work (opening the index, failures, locks,
  indexing, the git history pass, vectors);
- engine/live_progress.py: `FolderProgress`, what a folder reports;
- engine/live_reader.py: `LiveReader` (reads on reader threads, with freshness) and
  `Embedders`;
- engine/live_threads.py: `ReaderPool` and `Cancellation`.

This module is their face: import from here.
"""

from __future__ import annotations

from codesift.engine.live_folder import FolderIndex, FolderListener
from codesift.engine.live_progress import FolderProgress
from codesift.engine.live_reader import Embedders, LiveReader
from codesift.engine.live_threads import Cancellation, ReaderPool

__all__ = [
    "Cancellation",
    "Embedders",
    "FolderIndex",
    "FolderListener",
    "FolderProgress",
    "LiveReader",
    "ReaderPool",
]
