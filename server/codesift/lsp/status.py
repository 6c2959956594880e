"""codesift/status (per folder: counts, vectors, pending work, warnings; the live
indexes of the document collections the folders list; the shared index, when
the settings name one: reachable or not, and its repositories in view) and codesift/reindex (the
whole workspace, some folders, or some paths)."""

from __future__ import annotations

import asyncio
import posixpath
import time
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from codesift.engine.live import Cancellation, FolderIndex
from codesift.lsp.params import invalid, opt_bool, opt_int, opt_str_list

if TYPE_CHECKING:
    from codesift.lsp.server import CodesiftServer

__all__ = ["REINDEX", "STATUS", "reindex", "status"]

STATUS = "codesift/status"
REINDEX = "codesift/reindex"


def _iso(stamp: float | None) -> str | None:
    if stamp is None:
        return None
    return datetime.fromtimestamp(stamp, UTC).isoformat(timespec="seconds")


async def status(server: CodesiftServer, params: Any) -> dict[str, Any]:
    data = params if isinstance(params, dict) else {}
    if params is not None and not isinstance(params, dict):
        raise invalid(f"{STATUS} params must be an object or absent")
    folders = server.select_folders(opt_str_list(data, "folders"))

    def run(cancel: Cancellation) -> dict[str, Any]:
        out = []
        for folder in folders:
            try:  # first: an index deleted under the server is noticed (and rebuilt) here
                folder.wait_open(timeout=5)
                opened: Exception | None = None
            except Exception as exc:
                opened = exc
            entry: dict[str, Any] = {
                "name": folder.name,
                "uri": folder.uri,
                "root": str(folder.root),
                "database": str(folder.db_path),
                "state": folder.progress.state,
                "pending": folder.pending_work(),
                "rerank": folder.rerank_status(),  # may add a warning: read them after
            }
            entry["warnings"] = list(folder.progress.warnings)
            socket = server.sockets.get(folder.uri)
            entry["local_socket"] = socket.status() if socket is not None else None
            entry["error"] = folder.progress.error
            entry["waiting_for"] = folder.progress.waiting_for
            completeness = folder.completeness()
            entry["complete"] = completeness["complete"]
            entry["vectors"] = completeness["vectors"]
            entry["history"] = completeness["history"]
            try:
                if opened is not None:
                    raise opened
                counts = server.live.status(folder, cancel, details=False, open_timeout=None)
                entry.update(
                    files=counts.files,
                    nodes=counts.nodes,
                    edges=counts.edges,
                    chunks=counts.chunks,
                    languages=counts.languages,
                    calls_pending=counts.calls_pending,
                    last_update=_iso(counts.last_update),
                    database_bytes=counts.database_bytes,
                )
            except Exception as exc:  # report, do not fail the whole status
                entry["warnings"].append(f"cannot read the index: {exc}")
            if not folder.settings.embedding.enabled:
                entry["warnings"].append("embeddings are off: searches are lexical and symbol only")
            else:
                embedder = server.embedder(folder.settings.embedding)
                entry["vectors"]["queries"] = embedder.query_path
                if embedder.query_encoder_error:
                    entry["warnings"].append(
                        f"queries are embedded by the batch model: {embedder.query_encoder_error}"
                    )
            out.append(entry)
        collections = [
            {
                "name": collection.name,
                "root": str(collection.root),
                "database": str(index.db_path),
                "listed_by": [
                    f.name for f in folders if index in (i for _, i in server.collections.of(f.uri))
                ],
                **{k: v for k, v in index.completeness().items() if k not in ("folder", "uri")},
                "warnings": list(index.progress.warnings),
            }
            for collection, index in server.mounted(folders)
        ]
        shared = server.shared_index()
        shared_status = None
        if shared is not None:
            shared_status = shared.status(set(server.open_repo_keys().values())).as_json()
        return {
            "folders": out,
            "collections": collections,
            "shared": shared_status,
            "time": _iso(time.time()),
        }

    return await server.read(run)


def _inside(item: str, folder: FolderIndex) -> str:
    """A folder-relative path, normalised; InvalidParams when `..` leads out of it."""
    rel = posixpath.normpath(item.strip("/") or ".")
    if rel == ".." or rel.startswith("../"):
        raise invalid(f"{item!r} is outside the workspace folder {folder.name}")
    return "" if rel == "." else rel


async def reindex(server: CodesiftServer, params: Any) -> dict[str, Any]:
    """Queue work; with `wait: true`, answer when it is indexed (vectors excluded)."""
    if params is not None and not isinstance(params, dict):
        raise invalid(f"{REINDEX} params must be an object or absent")
    data = params or {}
    paths = opt_str_list(data, "paths")
    wait = opt_bool(data, "wait", False)
    timeout = opt_int(data, "timeout_ms", 60_000, 1, 3_600_000) or 60_000
    queued: list[dict[str, Any]] = []
    touched: list[FolderIndex] = []
    if paths:
        by_folder: dict[str, tuple[FolderIndex, list[str]]] = {}
        for item in paths:
            if item.startswith("file:") or item.startswith("/"):
                folder, rel = server.folder_for_uri(item)
            else:
                folders = server.select_folders(opt_str_list(data, "folders"))
                if len(folders) != 1:
                    raise invalid(
                        f"relative path {item!r} is ambiguous with {len(folders)} folders;"
                        " give a file URI or one folder"
                    )
                folder, rel = folders[0], _inside(item, folders[0])
            by_folder.setdefault(folder.uri, (folder, []))[1].append(rel)
        for folder, rels in by_folder.values():
            if "" in rels:
                folder.request_rescan()
                queued.append({"folder": folder.name, "rescan": True})
            else:
                folder.add_paths(rels)
                queued.append({"folder": folder.name, "paths": sorted(rels)})
            touched.append(folder)
    else:
        for folder in server.select_folders(opt_str_list(data, "folders")):
            folder.request_rescan()
            queued.append({"folder": folder.name, "rescan": True})
            touched.append(folder)
    done = True
    if wait:
        loop = asyncio.get_running_loop()
        deadline = timeout / 1000
        results = await asyncio.gather(
            *(loop.run_in_executor(None, f.wait_idle, deadline) for f in touched)
        )
        done = all(results)
    return {"queued": queued, "done": done if wait else None}
