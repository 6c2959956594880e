"""workspace/symbol (fuzzy over names and qualified names) and textDocument/documentSymbol.

workspace/symbol finds candidates without scanning: the exact and prefix name
indexes (nodes_name_ci) and the trigram index over names (names_fts: every
trigram of the query's last component must occur in the name). When those give
few candidates (a typo), names sharing the most trigrams are added (bm25 over
the trigrams). Candidates are then scored in Python:

  exact name > name prefix > substring > camel-case/word initials > subsequence
  > trigram overlap, plus a bonus when the qualified name matches the typed
  qualifier (`Pool.imap`, `http::Server`), minus a little for long names.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import apsw
from lsprotocol import types

from codesift.lsp.folders import Cancellation, FolderIndex
from codesift.lsp.navigation import (
    document_lines,
    node_range,
    selection_range,
    symbol_kind,
)
from codesift.retrieval.query import fts_quote, trigrams
from codesift.store.reader import NodeRow, node_rows

if TYPE_CHECKING:
    from codesift.lsp.server import CodesiftServer

__all__ = ["document_symbols", "score_name", "symbol_candidates", "workspace_symbols"]

MAX_SYMBOLS = 100
_SEPARATORS = re.compile(r"::|\.|#|->|\\|/|\s+")
_CANDIDATE_LIMIT = 800


def _initials(name: str) -> str:
    """`TimedRotatingFileHandler` -> `trfh`, `parse_http_header` -> `phh`."""
    parts = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+", name)
    return "".join(p[0] for p in parts).lower()


def _subsequence(query: str, name: str) -> bool:
    it = iter(name)
    return all(ch in it for ch in query)


def score_name(query: str, name: str) -> float:
    """How well `name` matches the typed `query` (both one component), 0 for no match."""
    if not query:
        return 0.0
    q, n = query.lower(), name.lower()
    if name == query:
        score = 100.0
    elif n == q:
        score = 95.0
    elif n.startswith(q):
        score = 80.0 - min(len(n) - len(q), 30) * 0.2
    elif q in n:
        at = n.index(q)
        boundary = at > 0 and (name[at - 1] in "_$" or name[at].isupper())
        score = (65.0 if boundary else 55.0) - min(len(n) - len(q), 30) * 0.2
    elif len(q) >= 2 and _initials(name).startswith(q):
        score = 50.0
    elif len(q) >= 3 and _subsequence(q, n):
        score = 35.0 - min(len(n) - len(q), 30) * 0.3
    else:
        qt, nt = set(trigrams(q)), set(trigrams(n))
        if not qt or not nt:
            return 0.0
        # How much of what was typed the name contains (a typo costs a few trigrams).
        overlap = len(qt & nt) / len(qt)
        if overlap < 0.5:
            return 0.0
        score = 30.0 * overlap - min(len(n) - len(q), 30) * 0.2
    return score


def symbol_candidates(conn: apsw.Connection, tail: str) -> set[int]:
    """Node ids that may match `tail`: exact/prefix names, then names holding every
    trigram of it, then (few so far) names sharing the most trigrams."""
    ids: set[int] = set()
    escaped = tail.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    ids.update(
        int(r[0])
        for r in conn.execute(
            "SELECT id FROM nodes WHERE name LIKE ? ESCAPE '\\' LIMIT 300", (escaped + "%",)
        )
    )
    if 2 <= len(tail) <= 6 and tail.isalpha():
        # Word initials (`trfh` for TimedRotatingFileHandler) share no trigram with the
        # name; such names start with the query's first letter.
        first = tail[0].replace("_", "\\_")
        ids.update(
            int(r[0])
            for r in conn.execute(
                "SELECT id FROM nodes WHERE name LIKE ? ESCAPE '\\' LIMIT 500", (first + "%",)
            )
        )
    tris = trigrams(tail)
    if tris:
        match = " AND ".join(fts_quote(t) for t in tris)
        ids.update(
            int(r[0])
            for r in conn.execute(
                "SELECT rowid FROM names_fts WHERE names_fts MATCH ? LIMIT ?",
                (match, _CANDIDATE_LIMIT),
            )
        )
        if len(ids) < 20 and len(tris) >= 4:
            # A typo breaks the trigrams around it: the part before it or the part
            # after it still matches in full.
            ordered = [tail[i : i + 3].lower() for i in range(len(tail) - 2)]
            half = len(ordered) // 2
            for part in (ordered[:half], ordered[half:]):
                match = " AND ".join(fts_quote(t) for t in dict.fromkeys(part))
                ids.update(
                    int(r[0])
                    for r in conn.execute(
                        "SELECT rowid FROM names_fts WHERE names_fts MATCH ? LIMIT 300",
                        (match,),
                    )
                )
    return ids


def find_symbols(conn: apsw.Connection, query: str, limit: int) -> list[tuple[float, NodeRow]]:
    parts = [p for p in _SEPARATORS.split(query.strip()) if p]
    if not parts:
        return []
    tail = parts[-1]
    qualifier = [p.lower() for p in parts[:-1]]
    ids = list(symbol_candidates(conn, tail))
    if not ids:
        return []
    scored: list[tuple[float, int]] = []
    for start in range(0, len(ids), 900):
        batch = ids[start : start + 900]
        for node_id, name, qname, kind in conn.execute(
            "SELECT id, name, qualified_name, kind FROM nodes"
            f" WHERE id IN ({','.join('?' * len(batch))})",
            batch,
        ):
            score = score_name(tail, str(name))
            if score <= 0:
                continue
            if qualifier:
                qparts = [p.lower() for p in _SEPARATORS.split(str(qname)) if p][:-1]
                joined = ".".join(qparts)
                wanted = ".".join(qualifier)
                if joined.endswith(wanted):
                    score += 20
                elif all(any(w in p for p in qparts) for w in qualifier):
                    score += 8
                else:
                    score -= 15
            if kind == "module":
                score -= 5
            scored.append((score, int(node_id)))
    scored.sort(key=lambda item: (-item[0], item[1]))
    top = scored[:limit]
    rows = node_rows(conn, [node_id for _, node_id in top])
    out = [(score, rows[node_id]) for score, node_id in top if node_id in rows]
    out.sort(key=lambda item: (-item[0], len(item[1].qualified_name), item[1].path))
    return out


async def workspace_symbols(
    server: CodesiftServer, params: types.WorkspaceSymbolParams
) -> list[types.SymbolInformation]:
    query = params.query.strip()
    if not query:
        return []
    if len(query) > 500:
        from codesift.lsp.params import invalid

        raise invalid(f"the symbol query is {len(query)} characters long; the limit is 500")
    folders = server.folder_list()

    def run(cancel: Cancellation) -> list[types.SymbolInformation]:
        found: list[tuple[float, FolderIndex, NodeRow]] = []
        for folder in folders:
            if cancel.cancelled:
                break
            try:
                folder.wait_open(timeout=5)
            except Exception:
                continue
            conn = server.readers.connection(folder.db_path)
            cancel.attach(conn)
            try:
                found.extend((s, folder, n) for s, n in find_symbols(conn, query, MAX_SYMBOLS))
            finally:
                cancel.detach(conn)
        found.sort(key=lambda item: (-item[0], len(item[2].qualified_name)))
        from codesift.lsp.navigation import node_location

        return [
            types.SymbolInformation(
                name=node.name,
                kind=symbol_kind(node.kind),
                location=node_location(folder, node),
                container_name=_container(node),
            )
            for _, folder, node in found[:MAX_SYMBOLS]
        ]

    return await server.read(run)


def _container(node: NodeRow) -> str | None:
    qname = node.qualified_name
    if qname.endswith(node.name) and len(qname) > len(node.name):
        container = qname[: -len(node.name)].rstrip(".:#/\\")
        return container or None
    return None


async def document_symbols(
    server: CodesiftServer, params: types.DocumentSymbolParams
) -> list[types.DocumentSymbol]:
    uri = params.text_document.uri
    folder, rel = server.folder_for_uri(uri)

    def run(cancel: Cancellation) -> list[types.DocumentSymbol]:
        folder.wait_open()
        conn = server.readers.connection(folder.db_path)
        rows: list[Any] = conn.execute(
            "SELECT n.id FROM nodes n JOIN files f ON f.id = n.file_id WHERE f.path = ?"
            " ORDER BY n.start_line, n.end_line DESC",
            (rel,),
        ).fetchall()
        nodes = node_rows(conn, [int(r[0]) for r in rows])
        if not nodes:
            return []
        lines = document_lines(server, uri, folder.root / rel)
        symbols: dict[int, types.DocumentSymbol] = {}
        top: list[types.DocumentSymbol] = []
        for row in rows:
            node = nodes[int(row[0])]
            if node.kind == "module" and node.parent_id is None and node.start_line <= 1:
                continue  # the file itself
            symbol = types.DocumentSymbol(
                name=node.name,
                kind=symbol_kind(node.kind),
                range=node_range(node, lines),
                selection_range=selection_range(node, lines),
                detail=node.signature[:200] or None,
                children=[],
            )
            symbols[node.id] = symbol
            parent = symbols.get(node.parent_id) if node.parent_id is not None else None
            if parent is not None:
                parent.children = [*(parent.children or []), symbol]
            else:
                top.append(symbol)
        return top

    return await server.read(run)
