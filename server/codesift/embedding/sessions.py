"""onnxruntime session options shared by codesift's models."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import onnxruntime as ort

__all__ = ["sleeping_session_options"]


def sleeping_session_options(threads: int | None) -> ort.SessionOptions:
    """Full graph optimisation, `threads` threads (onnxruntime's choice for None),
    and threads that sleep between runs instead of spinning: a search runs its
    model next to its other streams on the same cores (embedding/model.py)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if threads is not None:
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = threads
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    return options
