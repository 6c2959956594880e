"""The resident kNN's prefilter cut (`_closest`) on plain arrays."""

from __future__ import annotations

import numpy as np

from codesift.retrieval.vector_index import _FAR, _closest


def test_closest_keeps_the_smallest_distances_and_ties_in_position_order() -> None:
    distance = np.array([7, 3, 3, 9, 1, 3, 0, 3], dtype=np.uint16)
    picked = _closest(distance, 4)
    # 0 and 1 are below the cut (3); of the four 3s the first two by position.
    assert sorted(picked.tolist()) == [1, 2, 4, 6]
    assert sorted(_closest(distance, 1).tolist()) == [6]
    assert sorted(_closest(distance, 8).tolist()) == list(range(8))


def test_closest_never_picks_excluded_vectors() -> None:
    distance = np.array([_FAR, 5, _FAR, 2, _FAR], dtype=np.uint16)
    assert sorted(_closest(distance, 2).tolist()) == [1, 3]
    # Asked for more than the vectors not excluded: those alone.
    assert sorted(_closest(distance, 4).tolist()) == [1, 3]


def test_closest_agrees_with_a_full_sort_on_random_distances() -> None:
    rng = np.random.default_rng(3)
    distance = rng.integers(0, 385, size=5000).astype(np.uint16)
    distance[rng.random(5000) < 0.3] = _FAR
    picked = _closest(distance, 700)
    assert len(picked) == 700 == len(set(picked.tolist()))
    order = np.lexsort((np.arange(5000), distance))[:700]  # by distance, then position
    assert sorted(picked.tolist()) == sorted(order.tolist())
