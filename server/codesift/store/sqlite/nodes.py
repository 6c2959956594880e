"""`NodeStore` (store/ports.py) over the local SQLite index: one apsw connection
the caller owns. Names are looked up through the name and trigram indexes
(store/names.py), never by a scan."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import apsw

from codesift.store.history import TimeRow, ids_in_time, time_rows
from codesift.store.names import name_candidates, name_rows
from codesift.store.ports import NameRow
from codesift.store.reader import EdgeRow, NodeRow, edges_from, edges_to, node_rows, nodes_named
from codesift.timespec import TimeFilter

__all__ = ["SqliteNodeStore"]


class SqliteNodeStore:
    """`NodeStore` over the local SQLite index open on `conn`."""

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn

    def nodes_named(
        self,
        name: str,
        *,
        limit: int = 50,
        include_modules: bool = False,
        times: TimeFilter | None = None,
    ) -> list[NodeRow]:
        return nodes_named(
            self.conn, name, limit=limit, include_modules=include_modules, times=times
        )

    def similar_names(self, tail: str, times: TimeFilter | None = None) -> list[NameRow]:
        # The window is the caller's (nodes_in_time after scoring): the name
        # indexes hold no times.
        return name_rows(self.conn, name_candidates(self.conn, tail))

    def node_rows(self, node_ids: Iterable[int]) -> dict[int, NodeRow]:
        return node_rows(self.conn, node_ids)

    def edges_from(self, node_id: int, kinds: Sequence[str] | None = None) -> list[EdgeRow]:
        return edges_from(self.conn, node_id, kinds or None)

    def edges_to(self, node_id: int, kinds: Sequence[str] | None = None) -> list[EdgeRow]:
        return edges_to(self.conn, node_id, kinds or None)

    def nodes_in_time(self, node_ids: Iterable[int], window: TimeFilter) -> set[int]:
        return ids_in_time(self.conn, "nodes", node_ids, window)

    def node_times(self, node_ids: Iterable[int]) -> dict[int, TimeRow]:
        return time_rows(self.conn, "nodes", node_ids)
