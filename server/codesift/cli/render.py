"""The commands' output: JSON documents, and the pages for people of the commands
a server does not answer (rich markup); the reading commands' pages are drawn from
their JSON by render_json.py."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from codesift.cli.invocation import Invocation
from codesift.engine.results import GraphLink, GraphResult, IndexStatus, Symbol, result_json
from codesift.engine.results import symbol_json as engine_symbol_json

if TYPE_CHECKING:
    from codesift.engine.folder_search import FoldersResponse
    from codesift.retrieval import SearchResponse
    from codesift.store.postgres.status import RepoStatus


def response_json(response: SearchResponse) -> dict[str, Any]:
    data = asdict(response)
    data["results"] = [result_json(result) for result in response.results]
    data["resources"] = [
        {**result_json(resource), "title": resource.qualified_name or resource.path}
        for resource in response.resources
    ]
    return data


def folders_json(found: FoldersResponse) -> dict[str, Any]:
    """`search --json` over several folders: a single folder's fields, each result
    with its `folder` and `root`, and what the router chose."""
    from codesift.retrieval.request import SearchResponse

    data = response_json(
        SearchResponse(
            query=found.query,
            results=[hit.result for hit in found.results],
            took_ms=found.took_ms,
            tokens=found.tokens,
            truncated_by_budget=found.truncated_by_budget,
            resources=found.resources,
        )
    )
    for hit, result in zip(found.results, data["results"], strict=True):
        result["folder"] = hit.folder
        result["root"] = str(hit.root)
    data["streams"] = [{**asdict(s), "folder": name} for name, s in found.streams]
    data["searched"] = found.searched
    data["routed"] = found.routed
    data["folder_order"] = found.folder_order or None
    del data["stages"], data["rerank"]
    return data


def print_route(inv: Invocation, data: Mapping[str, Any]) -> None:
    from rich.markup import escape  # rich only when a page is drawn

    lines: list[str] = []
    for pool in ("repositories", "collections"):
        lines.append(f"[bold]{pool}[/]")
        matches = data[pool]
        if not matches:
            lines.append("  [dim](none)[/]")
        for match in matches:
            lines.append(
                f"  [bold]{match['confidence']:.2f}[/]  [cyan]{escape(match['name'])}[/]"
                f"  [dim]{escape(match.get('path') or '')}[/]"
            )
            lines.append(f"        [dim]{escape(match['rationale'])}[/]")
    inv.console().print("\n".join(lines))


def symbol_json(symbol: Symbol | None) -> dict[str, Any] | None:
    return None if symbol is None else engine_symbol_json(symbol)


def neighbours(
    walk: GraphResult, direction: str
) -> list[tuple[int, list[tuple[GraphLink, Symbol | None]]]]:
    """Each starting definition with its edges in `direction` and the other end."""
    groups: list[tuple[int, list[tuple[GraphLink, Symbol | None]]]] = []
    for root in dict.fromkeys(walk.roots):
        pairs: list[tuple[GraphLink, Symbol | None]] = []
        for link in walk.edges:
            if direction == "callers" and link.target == root:
                pairs.append((link, walk.node(link.source)))
            elif direction == "callees" and link.source == root:
                pairs.append((link, None if link.target is None else walk.node(link.target)))
        groups.append((root, pairs))
    return groups


_QUERY_PATHS = {
    "static": 'embedded by the static model (embedding.model = "static")',
    "int8": "embedded by the int8 query encoder",
    "pending": "embedded by the int8 query encoder, built on the first search",
    "batch": "embedded by the batch model (embedding.quantized_queries = false)",
    "off": "not embedded (embeddings are off)",
}


def _local_time(seconds: float | None) -> str:
    if seconds is None:
        return "never"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(seconds))


def print_repo_status(inv: Invocation, repo: RepoStatus) -> None:
    embeddable = max(repo.chunks, 1)
    models = f" ({repo.models})" if repo.models else ""
    inv.print(f"repository  {repo.repo}")
    if repo.root:
        inv.print(f"root        {repo.root}")
    inv.print(f"files       {repo.files}")
    inv.print(f"nodes       {repo.nodes}")
    inv.print(f"edges       {repo.edges}")
    inv.print(f"chunks      {repo.chunks}")
    inv.print(f"vectors     {repo.vectors} ({repo.vectors / embeddable:.0%} of chunks){models}")
    inv.print(f"indexed     {_local_time(repo.indexed_at)}")
    if repo.state in ("indexing", "interrupted"):
        since = _local_time(repo.job_started_at)
        if repo.state == "indexing":
            inv.print(f"job         running since {since}")
        else:
            inv.print(
                f"job         interrupted (started {since}): its committed files are in;"
                " the next indexing job of this key writes the rest"
            )
    if repo.commit:
        day = time.strftime("%Y-%m-%d", time.gmtime(repo.commit_time or 0))
        inv.print(f"commit      {repo.commit[:10]} {day} {(repo.subject or '')[:60]}")
    elif repo.state != "indexed":
        inv.print("commit      none yet")
    else:
        inv.print("commit      none (not a git repository)")
    inv.print("languages   " + ", ".join(f"{k} {v}" for k, v in repo.languages.items()))


def print_status(inv: Invocation, status: IndexStatus) -> None:
    when = (
        time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(status.last_update))
        if status.last_update
        else "never"
    )
    vectors, history, rerank = status.vectors, status.history, status.rerank
    assert vectors is not None and history is not None and rerank is not None
    ratio = vectors.embedded / vectors.embeddable if vectors.embeddable else 1.0
    inv.print(f"root        {status.root}")
    access = ", read-only for this user" if status.read_only else ""
    inv.print(f"database    {status.database} ({status.database_bytes / 1e6:.1f} MB{access})")
    inv.print(f"files       {status.files}")
    inv.print(f"nodes       {status.nodes}")
    inv.print(f"edges       {status.edges}")
    if status.calls_pending:
        inv.print(
            f"calls       being resolved: {status.calls_pending:,} files left"
            " (codesift resolve waits for it)"
        )
    inv.print(f"chunks      {status.chunks}")
    inv.print(f"vectors     {vectors.embedded} of {vectors.embeddable} chunks ({ratio:.0%})")
    if vectors.usable > vectors.embedded:
        usable = vectors.usable / vectors.embeddable if vectors.embeddable else 1.0
        models = ", ".join(f"{name} {count}" for name, count in sorted(vectors.models.items()))
        inv.print(f"searchable  {vectors.usable} chunks ({usable:.0%}) with a vector: {models}")
    if vectors.queries_error:
        inv.print(
            "queries     embedded by the batch model: the query model failed:"
            f" {vectors.queries_error}"
        )
    else:
        inv.print(f"queries     {_QUERY_PATHS[vectors.queries]}")
    inv.print(f"updated     {when}")
    if not history.available:
        at = f" at {history.head[:10]}" if history.head else ""
        inv.print(
            f"history     unavailable{at}: {history.error}"
            f" ({history.mtime_files} files dated by modification time)"
        )
    elif history.pending:
        walk = ""
        if history.commits_done < history.commits_total:
            walk = f"{history.commits_done:,} of {history.commits_total:,} commits walked, "
        inv.print(
            f"history     git, being computed: {walk}{history.files_pending:,} files to time"
            " (codesift history waits for it)"
        )
    else:
        inv.print(f"history     {'git' if history.source == 'git' else 'file modification times'}")
    inv.print("languages   " + ", ".join(f"{k} {v}" for k, v in status.languages.items()))
    if not rerank.enabled:
        inv.print("rerank      off")
    elif rerank.active:
        inv.print(f"rerank      {rerank.provider} ({rerank.model_path})")
    else:
        inv.print(f"rerank      off: {rerank.warning}")
