"""onnxruntime session options shared by codesift's models."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import onnxruntime as ort

__all__ = ["BATCH_DISABLED_OPTIMIZERS", "batch_session_options", "sleeping_session_options"]

# The shipped model keeps its weights as int8 and casts them to float32 in the graph.
# Constant folding does those casts once at load and keeps the float32 copies beside
# the int8 ones; without it each batch casts them again, into arena memory that is
# reused. A batch of 8 texts of 256 tokens then peaked at ~300 MB instead of ~385 MB,
# no slower (the casts are small beside a batch's matrix products); vectors differ
# by ~1e-6.
BATCH_DISABLED_OPTIMIZERS: tuple[str, ...] = ("ConstantFolding",)


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


def batch_session_options(threads: int | None) -> ort.SessionOptions:
    """The sleeping options for the model that embeds chunk batches, without the
    memory pattern: onnxruntime then plans one block per input shape and keeps
    it, and batches come in every shape (a batch of 8 texts of 256 tokens took
    ~490 MB with it, ~360 MB without). Create the session with
    `disabled_optimizers=BATCH_DISABLED_OPTIMIZERS`."""
    options = sleeping_session_options(threads)
    options.enable_mem_pattern = False
    return options
