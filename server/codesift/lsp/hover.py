"""textDocument/hover and textDocument/definition for the identifier under the cursor."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from lsprotocol import types

from codesift.engine import GraphQuery, walk_graph
from codesift.engine.live import Cancellation
from codesift.engine.results import NodeRow
from codesift.lsp.navigation import node_location, resolve_in_document

if TYPE_CHECKING:
    from codesift.lsp.server import CodesiftServer

__all__ = ["definition", "first_sentence", "hover"]

CALLERS_SHOWN = 5


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
        walk = walk_graph(conn, [node], GraphQuery("callers", 1, ("calls",), 2000), history=False)
        callers = [s.node for s in walk.nodes if s.node.id != node.id]
        parts = [f"```{node.language}\n{node.signature or node.qualified_name}\n```"]
        sentence = first_sentence(node.docstring)
        if sentence:
            parts.append(sentence)
        where = f"{node.kind} `{node.qualified_name}` in `{node.path}:{node.start_line}`"
        if len(resolved.nodes) > 1:
            where += f" (1 of {len(resolved.nodes)} definitions named `{resolved.word}`)"
        parts.append(where)
        if callers:
            links = []
            for caller in callers[:CALLERS_SHOWN]:
                target = f"{path_to_uri(folder.root / caller.path)}#L{caller.start_line}"
                links.append(f"[{caller.qualified_name}]({target})")
            more = len(callers) - len(links)
            tail = f" and {more} more" if more > 0 else ""
            parts.append(f"called by {len(callers)}: " + ", ".join(links) + tail)
        else:
            parts.append("called by 0")
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n".join(parts))
        )

    return await server.read(run)


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
