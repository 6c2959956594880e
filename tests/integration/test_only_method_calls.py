"""A Python call on a receiver the file does not type (`*method::name`) resolves to
the one method of that name in the index, and to nothing when several share it,
however many calls ask for the same name."""

from __future__ import annotations

import apsw
import pytest

from conftest import IndexWorkspace, MakeRepo  # tests/conftest.py

pytestmark = pytest.mark.usefixtures("git_isolation")

FILES = {
    "caller.py": (
        "def first(x):\n    x.lonely()\n    x.shared()\n\n\n"
        "def second(y):\n    y.lonely()\n    y.shared()\n"
    ),
    "one.py": (
        "class One:\n    def lonely(self):\n        pass\n\n    def shared(self):\n        pass\n"
    ),
    "two.py": "class Two:\n    def shared(self):\n        pass\n",
}


def test_untyped_receivers_reach_the_only_method(
    make_repo: MakeRepo, index_workspace: IndexWorkspace
) -> None:
    conn: apsw.Connection
    conn, _ = index_workspace(make_repo(FILES))
    rows = conn.execute(
        "SELECT s.name, e.dst_name, d.qualified_name, e.resolution FROM edges e"
        " JOIN nodes s ON s.id = e.src_id LEFT JOIN nodes d ON d.id = e.dst_id"
        " WHERE e.kind = 'calls' ORDER BY s.name, e.dst_name"
    ).fetchall()
    assert rows == [
        ("first", "lonely", "one.One.lonely", "unique"),
        ("first", "shared", None, None),
        ("second", "lonely", "one.One.lonely", "unique"),
        ("second", "shared", None, None),
    ]
