"""What a walk along the code graph reads from an index: the interface every
storage backend offers engine/graph.py, and its SQLite implementation.

The walk (engine/graph.walk_graph) asks for a node's edges in one direction, of
some kinds, for the rows of the nodes at their other ends, for which of those
pass a git-time window, and for the times of the nodes it shows. The SQLite
index answers from one apsw connection (`SqliteGraphStore`); the shared index
on PostgreSQL answers as one reader, its grants inside every statement
(store/postgres/graph.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

import apsw

from codesift.store.history import TimeRow, ids_in_time, time_rows
from codesift.store.reader import EdgeRow, NodeRow, edges_from, edges_to, node_rows
from codesift.timespec import TimeFilter

__all__ = ["GraphStore", "SqliteGraphStore"]


class GraphStore(Protocol):
    """A graph walk's reads. Edges come with their true kinds (`contains` from a
    node's parent too); `kinds` None or empty means every kind."""

    def edges_from(self, node_id: int, kinds: Sequence[str] | None = None) -> list[EdgeRow]:
        """Edges out of the node, in line order."""
        ...

    def edges_to(self, node_id: int, kinds: Sequence[str] | None = None) -> list[EdgeRow]:
        """Edges resolved to the node, by source then line."""
        ...

    def node_rows(self, node_ids: Iterable[int]) -> dict[int, NodeRow]:
        """The nodes by id; ids not found (or not readable) are left out."""
        ...

    def nodes_in_time(self, node_ids: Iterable[int], window: TimeFilter) -> set[int]:
        """The ids among `node_ids` whose node passes the git-time window."""
        ...

    def node_times(self, node_ids: Iterable[int]) -> dict[int, TimeRow]:
        """The nodes' created / last-changed times (nodes not timed yet: left out)."""
        ...


class SqliteGraphStore:
    """`GraphStore` over the local SQLite index open on `conn` (the caller owns it)."""

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn

    def edges_from(self, node_id: int, kinds: Sequence[str] | None = None) -> list[EdgeRow]:
        return edges_from(self.conn, node_id, kinds or None)

    def edges_to(self, node_id: int, kinds: Sequence[str] | None = None) -> list[EdgeRow]:
        return edges_to(self.conn, node_id, kinds or None)

    def node_rows(self, node_ids: Iterable[int]) -> dict[int, NodeRow]:
        return node_rows(self.conn, node_ids)

    def nodes_in_time(self, node_ids: Iterable[int], window: TimeFilter) -> set[int]:
        return ids_in_time(self.conn, "nodes", node_ids, window)

    def node_times(self, node_ids: Iterable[int]) -> dict[int, TimeRow]:
        return time_rows(self.conn, "nodes", node_ids)
