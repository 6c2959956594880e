"""Index worker processes: spawned with a clean import path, light to start.

A bulk of files is prepared (read, parsed, chunked: codesift.preparation) in
worker processes while the indexer, the one writer, inserts rows. A worker
imports only what preparing a file needs (this module and codesift.preparation:
no git, no numpy, not the parent's main module), refuses to run with other code
than the indexer's, and never outlives it.
"""

from __future__ import annotations

import ctypes
import gc
import io
import os
import signal
import sys
from multiprocessing import get_context, reduction, spawn, util
from multiprocessing import process as mp_process
from multiprocessing.context import BaseContext, SpawnContext, SpawnProcess
from multiprocessing.process import BaseProcess
from pathlib import Path

__all__ = [
    "WORKER_GC_THRESHOLD",
    "StaleWorkerCode",
    "code_changed_on_disk",
    "code_stamp",
    "init_worker",
    "note_workspace_root",
    "start_worker",
    "tune_worker_gc",
    "worker_context",
]

_PACKAGE_DIR = Path(__file__).resolve().parent


def _stamp_of_package() -> str:
    parts = sorted(
        f"{p.relative_to(_PACKAGE_DIR)}:{st.st_size}:{st.st_mtime_ns}"
        for p in _PACKAGE_DIR.rglob("*.py")
        for st in (p.stat(),)
    )
    return "\n".join(parts)


# Taken when this process imported codesift: a worker started after the package
# changed on disk (an upgrade under a running server) would unpickle jobs and
# settings with another code's field layout, so workers compare stamps first.
_CODE_STAMP = _stamp_of_package()


def code_stamp() -> str:
    """Names, sizes and modification times of the codesift modules this process
    imported."""
    return _CODE_STAMP


def code_changed_on_disk() -> bool:
    """Whether the codesift modules on disk are no longer the ones this process
    imported (an upgrade under a running server): its workers would refuse them."""
    try:
        return _stamp_of_package() != _CODE_STAMP
    except OSError:  # a module removed while being listed: changed
        return True


class StaleWorkerCode(RuntimeError):
    """A worker process imported a different codesift than the indexer runs."""


def start_worker(parent_pid: int, stamp: str) -> None:
    """The pool's initializer: `init_worker`, and on other code one line on stderr
    and a quiet exit (the pool breaks and the indexer prepares the files itself;
    an initializer's exception would print a traceback)."""
    try:
        init_worker(parent_pid, stamp)
    except StaleWorkerCode as exc:
        print(f"codesift index worker: {exc}; not started", file=sys.stderr, flush=True)
        os._exit(1)


def init_worker(parent_pid: int, stamp: str) -> None:
    """Worker initializer: refuse to work with different code than the indexer's
    (the pool then breaks and the indexer prepares files itself), and never
    outlive an indexer that was killed."""
    if code_stamp() != stamp:
        raise StaleWorkerCode("codesift changed on disk since the indexer started")
    _die_with_parent(parent_pid)
    tune_worker_gc()


# Young-generation size between collections in a worker (CPython's default: 700).
WORKER_GC_THRESHOLD = 10_000


def tune_worker_gc() -> None:
    """A worker makes millions of short-lived objects (tree-sitter nodes, rows) and
    keeps none of them between batches: collected every 700 allocations, and with
    the modules it imported looked at again by each full collection, the collector
    took ~0.2 CPU-s of the ~12 a process spends preparing the stdlib copy
    (~0.04 s so)."""
    gc.freeze()
    gc.set_threshold(WORKER_GC_THRESHOLD, 10, 10)


def _die_with_parent(parent_pid: int) -> None:
    """A worker must not outlive an indexer that was killed (SIGKILL gives the pool
    no chance to stop it). Linux delivers SIGTERM to the worker when its parent
    dies; elsewhere workers exit when their queue closes."""
    if sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            pr_set_pdeathsig = 1
            libc.prctl(pr_set_pdeathsig, signal.SIGTERM, 0, 0, 0)
        except (OSError, AttributeError):
            return
    if os.getppid() != parent_pid:  # the parent died before the signal was armed
        os._exit(1)


# Workspace folders this process indexes: never on a worker's import path.
_WORKSPACE_ROOTS: set[str] = set()


def note_workspace_root(root: Path) -> None:
    """Keep `root`, a folder this process indexes, off its workers' import path."""
    _WORKSPACE_ROOTS.add(os.path.realpath(root))


def _worker_sys_path() -> list[str]:
    """This process's `sys.path` without the entries a workspace's own modules
    would be imported from: '' and the current folder (`python -m` and `-c` put
    them first) and the workspace folders. A workspace's `types.py` or `json.py`
    there would shadow the standard library in a worker. The entry codesift
    itself comes from stays, or the worker could not import it."""
    own = os.path.realpath(_PACKAGE_DIR.parent)
    unsafe = {os.path.realpath(os.getcwd()), *frozenset(_WORKSPACE_ROOTS)}
    # Where this process started (spawn hands it to children as a fallback).
    original_dir = getattr(mp_process, "ORIGINAL_DIR", None)
    if isinstance(original_dir, str):
        unsafe.add(os.path.realpath(original_dir))
    kept: list[str] = []
    for entry in sys.path:
        if entry in ("", "."):
            continue
        real = os.path.realpath(entry)
        if real in unsafe and real != own:
            continue
        kept.append(entry)
    return kept


if sys.platform != "win32":
    from multiprocessing import popen_spawn_posix, resource_tracker

    class _WorkerPopen(popen_spawn_posix.Popen):
        """Spawn's launcher (CPython's `popen_spawn_posix.Popen._launch`) with two
        changes: the child starts with `-P`, so `python -c` does not put the
        current folder first on its path before it even imports multiprocessing,
        and the path the child adopts is `_worker_sys_path()`."""

        def _launch(self, process_obj: BaseProcess) -> None:
            fds: list[int] = self._fds  # type: ignore[attr-defined]
            tracker_fd = resource_tracker.getfd()
            if tracker_fd is not None:  # always set once the tracker runs
                fds.append(tracker_fd)
            prep_data = spawn.get_preparation_data(process_obj.name)
            prep_data["sys_path"] = _worker_sys_path()
            # A worker runs codesift's functions only: it does not run the parent's
            # main module again (the console script, a test runner, a bench driver).
            prep_data.pop("init_main_from_path", None)
            prep_data.pop("init_main_from_name", None)
            fp = io.BytesIO()
            popen_spawn_posix.set_spawning_popen(self)  # type: ignore[attr-defined]
            try:
                reduction.dump(prep_data, fp)
                reduction.dump(process_obj, fp)
            finally:
                popen_spawn_posix.set_spawning_popen(None)  # type: ignore[attr-defined]
            parent_r = child_w = child_r = parent_w = None
            try:
                parent_r, child_w = os.pipe()
                child_r, parent_w = os.pipe()
                cmd = spawn.get_command_line(tracker_fd=tracker_fd, pipe_handle=child_r)
                # (A frozen executable takes no interpreter options, and has no '' entry.)
                if not getattr(sys, "frozen", False) and "-P" not in cmd and "-I" not in cmd:
                    cmd.insert(1, "-P")
                fds.extend([child_r, child_w])
                self.pid = util.spawnv_passfds(os.fsencode(spawn.get_executable()), cmd, fds)
                self.sentinel = parent_r
                with open(parent_w, "wb", closefd=False) as f:
                    f.write(fp.getbuffer())
            finally:
                to_close = [fd for fd in (parent_r, parent_w) if fd is not None]
                self.finalizer = util.Finalize(self, _close_fds, to_close)
                for fd in (child_r, child_w):
                    if fd is not None:
                        os.close(fd)

    def _close_fds(*fds: int) -> None:
        for fd in fds:
            os.close(fd)

    class _WorkerProcess(SpawnProcess):
        @staticmethod
        def _Popen(process_obj: BaseProcess) -> popen_spawn_posix.Popen:
            return _WorkerPopen(process_obj)

    class _WorkerContext(SpawnContext):
        """Spawned processes with a clean import path (see `_WorkerPopen`)."""

        Process = _WorkerProcess


def worker_context() -> BaseContext:
    """The context index workers are spawned with: never one that imports the
    workspace's own modules."""
    # multiprocessing's resource tracker is started by `python -c` too, outside
    # our launcher, and so would import the current folder's `types.py` and die
    # (and be restarted, and die...). Python children of this process never need
    # the current folder on their path: PYTHONSAFEPATH (-P) leaves it off.
    if not os.environ.get("PYTHONSAFEPATH"):
        os.environ["PYTHONSAFEPATH"] = "1"
    if sys.platform != "win32":
        return _WorkerContext()
    return get_context("spawn")
