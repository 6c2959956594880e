"""textDocument/hover and textDocument/definition for the identifier under the cursor."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, NamedTuple

from lsprotocol import types

from codesift.engine import GraphLink, GraphQuery, GraphResult, walk_graph
from codesift.engine.live import Cancellation
from codesift.engine.results import NodeRow
from codesift.lsp.navigation import node_location, resolve_in_document

if TYPE_CHECKING:
    from codesift.lsp.server import CodesiftServer

__all__ = ["Callers", "definition", "first_sentence", "hover", "who_calls"]

CALLERS_SHOWN = 5
# The hover's walk stops at this many definitions (and says so).
HOVER_MAX_NODES = 2000


def first_sentence(doc: str) -> str:
    """The docstring's first sentence (up to the first '. ', blank line or block
    tag such as `@param`)."""
    text = doc.strip()
    if not text:
        return ""
    paragraph = re.split(r"\n\s*\n|\n[\s*]*@[A-Za-z]", text, maxsplit=1)[0]
    paragraph = " ".join(line.strip().lstrip("*/#").strip() for line in paragraph.splitlines())
    match = re.search(r"(.+?[.!?])(\s|$)", paragraph)
    sentence = match.group(1) if match else paragraph
    return sentence[:300]


async def hover(server: CodesiftServer, params: types.HoverParams) -> types.Hover | None:
    from codesift.lsp.server import path_to_uri

    uri = params.text_document.uri
    folder, rel = server.folder_for_uri(uri)

    def run(cancel: Cancellation) -> types.Hover | None:
        conn, resolved = resolve_in_document(server, folder, rel, uri, params.position)
        if not resolved.nodes:
            return None
        node: NodeRow = resolved.nodes[0]
        graph = folder.settings.graph
        limit = min(graph.max_calls + 1, HOVER_MAX_NODES)  # the definition itself is one
        query = GraphQuery("callers", graph.hover_depth, ("calls",), limit)
        walk = walk_graph(conn, [node], query, history=False)
        parts = [f"```{node.language}\n{node.signature or node.qualified_name}\n```"]
        sentence = first_sentence(node.docstring)
        if sentence:
            parts.append(sentence)
        where = f"{node.kind} `{node.qualified_name}` in `{node.path}:{node.start_line}`"
        if len(resolved.nodes) > 1:
            where += f" (1 of {len(resolved.nodes)} definitions named `{resolved.word}`)"
        parts.append(where)
        callers = who_calls(walk, node.id, graph.guesses)

        def listed(label: str, ids: list[int]) -> str:
            links = []
            for other_id in ids[:CALLERS_SHOWN]:
                caller = walk.node(other_id)
                if caller is None:
                    continue
                row = caller.node
                target = f"{path_to_uri(folder.root / row.path)}#L{row.start_line}"
                links.append(f"[{row.qualified_name}]({target})")
            more = len(ids) - len(links)
            tail = f" and {more} more" if more > 0 else ""
            return f"{label} {len(ids)}: " + ", ".join(links) + tail

        parts.append(listed("called by", callers.sure) if callers.sure else "called by 0")
        if callers.guessed:
            parts.append(listed("maybe called by (a guess by name)", callers.guessed))
        if callers.second:
            parts.append(listed("2 hops away", callers.second))
        if walk.truncated:
            more = f"at least {walk.omitted}" if graph.hover_depth > 1 else str(walk.omitted)
            parts.append(
                f"(truncated: stopped at {limit} definitions, graph.max_calls;"
                f" {more} more not shown)"
            )
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n".join(parts))
        )

    return await server.read(run)


class Callers(NamedTuple):
    """Who calls a definition: its callers found by the language (`sure`), those
    found by the name alone (`guessed`), and their callers (`second`, 2 hops)."""

    sure: list[int]
    guessed: list[int]
    second: list[int]


def who_calls(walk: GraphResult, node_id: int, guesses: str = "apart") -> Callers:
    """Split a callers walk from `node_id` by hop and confidence; `guesses`:
    "apart" (listed on their own), "hide" (left out) or "show" (among the others)."""
    links: dict[int, list[GraphLink]] = {}
    for link in walk.edges:
        if link.target == node_id and link.source != node_id:
            links.setdefault(link.source, []).append(link)
    sure, guessed = [], []
    for caller, found in links.items():
        if guesses != "show" and all(link.guessed for link in found):
            guessed.append(caller)
        else:
            sure.append(caller)
    if guesses == "hide":
        guessed = []
    first = set(sure) | set(guessed)
    second: list[int] = []
    for link in walk.edges:
        if link.target in first and link.source not in first and link.source != node_id:
            if guesses == "hide" and link.guessed:
                continue
            if link.source not in second:
                second.append(link.source)
    return Callers(sure, guessed, second)


async def definition(
    server: CodesiftServer, params: types.DefinitionParams
) -> list[types.Location] | None:
    uri = params.text_document.uri
    folder, rel = server.folder_for_uri(uri)

    def run(cancel: Cancellation) -> list[types.Location] | None:
        _, resolved = resolve_in_document(server, folder, rel, uri, params.position)
        if not resolved.nodes:
            return None
        return [node_location(folder, node) for node in resolved.nodes[:10]]

    return await server.read(run)
