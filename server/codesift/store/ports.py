"""The port every index backend offers the engine for definitions and the code
graph: one symbol lookup (engine/symbols.find_symbols) and one graph walk
(engine/graph.walk_graph) read through it, whatever the store.

Implemented by the local SQLite index (store/sqlite/nodes.py, `SqliteNodeStore`
over one apsw connection) and the shared index on PostgreSQL as one reader
(store/postgres/nodes.py, `PostgresNodeStore`, the reader's grants inside every
statement). A new backend implements `NodeStore` beside them (and `SearchStore`,
store/search_store.py, for the search's streams).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

from codesift.store.history import TimeRow
from codesift.store.reader import EdgeRow, NodeRow
from codesift.timespec import TimeFilter

__all__ = ["NameRow", "NodeStore"]

# (id, name, qualified_name, kind) of a definition whose name may match a typed one.
NameRow = tuple[int, str, str, str]


class NodeStore(Protocol):
    """Definitions and their edges. Edges come with their true kinds (`contains`
    from a node's parent too); `kinds` None or empty means every kind. A node the
    store may not show (another reader's repository) is never returned."""

    def nodes_named(
        self,
        name: str,
        *,
        limit: int = 50,
        include_modules: bool = False,
        times: TimeFilter | None = None,
    ) -> list[NodeRow]:
        """Definitions named `name` in any case, or whose qualified name is `name`
        or ends with it after a separator; exact case first (store/reader.named_matches
        orders them); `times` applies before the limit."""
        ...

    def similar_names(self, tail: str, times: TimeFilter | None = None) -> list[NameRow]:
        """Definitions whose name may match the one name component `tail` (by prefix,
        word initials, trigrams), unscored, never by a scan. A store may leave out
        those outside `times` already; the caller filters with `nodes_in_time`."""
        ...

    def node_rows(self, node_ids: Iterable[int]) -> dict[int, NodeRow]:
        """The nodes by id; ids not found (or not readable) are left out."""
        ...

    def edges_from(self, node_id: int, kinds: Sequence[str] | None = None) -> list[EdgeRow]:
        """Edges out of the node, in line order."""
        ...

    def edges_to(self, node_id: int, kinds: Sequence[str] | None = None) -> list[EdgeRow]:
        """Edges resolved to the node, by source then line."""
        ...

    def nodes_in_time(self, node_ids: Iterable[int], window: TimeFilter) -> set[int]:
        """The ids among `node_ids` whose node passes the git-time window."""
        ...

    def node_times(self, node_ids: Iterable[int]) -> dict[int, TimeRow]:
        """The nodes' created / last-changed times (nodes not timed yet: left out)."""
        ...
