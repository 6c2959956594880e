"""A mirror run leaves no entries in the pending lists of the GIN indexes a
search reads (names' trigrams, full-text vectors): every search through such an
index reads its pending list whole until autovacuum merges it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from codesift.engine.postgres import connect, index_into

pytestmark = pytest.mark.usefixtures("git_isolation")

NO_VECTORS = {"embedding": {"enabled": False}}

FILES = {
    "kinds.py": "def type_name(value):\n    return type(value).__name__\n",
    "README.md": "# Kinds\n\nNames of value types.\n",
}

PENDING = (
    "SELECT c.relname, (pgstatginindex(i.indexrelid)).pending_tuples FROM pg_index i"
    " JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam"
    " WHERE a.amname = 'gin' AND i.indrelid IN ('nodes'::regclass, 'chunks'::regclass)"
    " ORDER BY c.relname"
)


def test_mirror_runs_merge_the_pending_gin_entries(pg_dsn: str, make_repo: Any) -> None:
    root: Path = make_repo(FILES, name="kinds")
    first = index_into(pg_dsn, root, repo="acme/kinds@main", overrides=NO_VECTORS)
    assert first.shared.rows["nodes"] and first.shared.rows["chunks"]
    (root / "more.py").write_text("def retype(value, kind):\n    return kind(value)\n")
    second = index_into(pg_dsn, root, repo="acme/kinds@main", overrides=NO_VECTORS)
    assert second.shared.rows["nodes"]
    with connect(pg_dsn, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pgstattuple")
        pending = conn.execute(PENDING).fetchall()
        assert {name for name, _ in pending} >= {"nodes_repo_name_trgm", "chunks_repo_tsv_code"}
        assert all(tuples == 0 for _, tuples in pending), pending
        # The new definition is found through the merged index.
        found = conn.execute(
            "SELECT name FROM nodes WHERE lower(name) %% %s ORDER BY name", ["retype"]
        ).fetchall()
        assert ("retype",) in found
