"""`codesift embed` (the background embedder) stops when its index file is deleted
or replaced under it, as the language server notices it, instead of writing on
into a file nobody can open any more."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from codesift.engine.access import update_index
from codesift.engine.listener import EngineListener
from codesift.engine.session import embed
from codesift.engine.workspace import Workspace

pytestmark = pytest.mark.usefixtures("git_isolation")

MakeRepo = Callable[..., Path]

# Enough chunks for several write batches of the model.
MANY_FUNCTIONS = "".join(
    f'def ledger_step_{i}(entries):\n    """Step {i} of settling the ledger."""\n'
    f"    return [e * {i} for e in entries]\n\n\n"
    for i in range(400)
)


class DeleteAfterFirstBatch(EngineListener):
    """Deletes the index file (and its WAL files) once the first batch of vectors is
    written: what a person does with `rm -r .codesift` while the embedder runs."""

    def __init__(self, db_path: Path, replace: bool) -> None:
        self.db_path = db_path
        self.replace = replace
        self.total = 0
        self.done: list[int] = []
        self.warnings: list[str] = []

    def begin(self, task: str, total: int) -> None:
        if task == "embedding":
            self.total = total

    def advance(self, done: int, detail: str = "") -> None:
        self.done.append(done)
        if len(self.done) == 1:
            for suffix in ("", "-wal", "-shm"):
                path = self.db_path.with_name(self.db_path.name + suffix)
                if path.exists():
                    path.unlink()
            if self.replace:
                self.db_path.write_bytes(b"")  # another file at the same path

    def warning(self, message: str) -> None:
        self.warnings.append(message)


@pytest.mark.parametrize("replace", [False, True], ids=["deleted", "replaced"])
def test_embed_stops_when_its_index_is_deleted(make_repo: MakeRepo, replace: bool) -> None:
    root = make_repo({"ledger.py": MANY_FUNCTIONS})
    ws = Workspace.at(root, {"embedding": {"model": "minilm", "static_first": False}})
    conn, _ = update_index(ws, EngineListener())
    conn.close()
    listener = DeleteAfterFirstBatch(ws.db_path, replace)
    report = embed(ws, listener)
    assert listener.total > 2 * listener.done[0], "the fill needs several batches"
    # The batch being embedded when the file went may still be written: no more.
    assert len(listener.done) <= 2, listener.done
    assert report.embedded < listener.total
    assert any(
        str(ws.db_path) in w and ("deleted" in w or "replaced" in w) for w in listener.warnings
    ), listener.warnings
    if not replace:
        assert not ws.db_path.exists()
    else:
        assert os.path.getsize(ws.db_path) == 0  # nothing written into the new file
