"""Row ids that survive a re-index: a node keeps its id while its kind, qualified
name and position among namesakes stay; a chunk while its owner, layer, part and
position stay (so vectors and history rows keep pointing at it). The writer
(store/writer.py) allocates ids with these keys."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeVar

__all__ = ["ChunkKey", "NodeKey", "allocate_ids", "keys_of_chunks", "keys_of_nodes"]

NodeKey = tuple[str, str, int]  # kind, qualified name, position among namesakes
ChunkKey = tuple[object, str, int, int]  # owner, layer, part, position among equals
K = TypeVar("K", NodeKey, ChunkKey)


def keys_of_nodes(nodes: Iterable[tuple[str, str]]) -> list[NodeKey]:
    """Each (kind, qualified name) with its position among its namesakes."""
    seen: dict[tuple[str, str], int] = {}
    keys: list[NodeKey] = []
    for kind, qualified_name in nodes:
        ordinal = seen.get((kind, qualified_name), 0)
        seen[(kind, qualified_name)] = ordinal + 1
        keys.append((kind, qualified_name, ordinal))
    return keys


def keys_of_chunks(chunks: Iterable[tuple[object, str, int]]) -> list[ChunkKey]:
    """Each (owner, layer, part) with its position among its equals."""
    seen: dict[tuple[object, str, int], int] = {}
    keys: list[ChunkKey] = []
    for owner, layer, part in chunks:
        ordinal = seen.get((owner, layer, part), 0)
        seen[(owner, layer, part)] = ordinal + 1
        keys.append((owner, layer, part, ordinal))
    return keys


def allocate_ids(keys: Sequence[K], old: dict[K, int], next_id: int) -> list[int]:
    """Ids for `keys`: the old id of a key that existed before, else the next free one."""
    ids: list[int] = []
    for key in keys:
        known = old.get(key)
        if known is None:
            known = next_id
            next_id += 1
        ids.append(known)
    return ids
