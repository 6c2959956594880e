"""LiveCollections: one live index per collection folder, shared by the workspace
folders that list it, stopped when none lists it any more."""

from __future__ import annotations

from pathlib import Path

import pytest

from codesift.engine.collections import Collection
from codesift.engine.live import FolderIndex
from codesift.engine.live_collections import LiveCollections
from codesift.engine.workspace import Workspace


class FakeIndex:
    def __init__(self, collection: Collection) -> None:
        self.name = collection.name
        self.root = collection.root
        self.db_path = collection.workspace.db_path
        self.started = False
        self.stopped = False

    def start(self) -> None:
        self.started = True

    def request_stop(self) -> None:
        self.stopped = True


def folder(tmp_path: Path, name: str, listing: str) -> Workspace:
    root = tmp_path / name
    root.mkdir()
    (root / ".codesift.toml").write_text(listing, encoding="utf-8")
    return Workspace.at(root)


def test_a_collection_listed_by_two_folders_gets_one_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    (tmp_path / "docs").mkdir()
    (tmp_path / "notes").mkdir()
    listing = '[[collections]]\nname = "prd"\npath = "../docs"\n'
    a = folder(tmp_path, "a", listing)
    b = folder(tmp_path, "b", listing + '[[collections]]\nname = "notes"\npath = "../notes"\n')
    made: list[FakeIndex] = []

    def make(collection: Collection) -> FolderIndex:
        index = FakeIndex(collection)
        made.append(index)
        return index  # type: ignore[return-value]

    live = LiveCollections(make)
    [(_, first)] = live.mount("a", a)
    mounted_b = live.mount("b", b)
    assert [c.name for c, _ in mounted_b] == ["prd", "notes"]
    assert mounted_b[0][1] is first  # shared, not a second index of the same folder
    assert len(made) == 2 and all(i.started for i in made)
    assert [c.name for c, _ in live.distinct(["a", "b"])] == ["prd", "notes"]

    assert [i.name for i in live.unmount("b")] == ["notes"]  # prd is still a's
    assert not made[0].stopped and made[1].stopped
    assert [i.name for i in live.unmount("a")] == ["prd"]
    assert made[0].stopped and live.indexes() == []
