"""Initialisation, progress, options, multi-root folders and a clean shutdown."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import cattrs
from harness import WORKSPACE, LspSession, git, make_workspace, plain, poll


def _stat_fields(pid: int) -> list[str] | None:
    """/proc/PID/stat from its third field on (state, ppid, ...), or None."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None


def children_of(pid: int) -> set[tuple[int, str]]:
    """Processes whose parent is `pid`, as (pid, start time): a pid alone may be
    reused by an unrelated process once the child is gone."""
    found = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        fields = _stat_fields(int(entry))
        if fields is not None and int(fields[1]) == pid:
            found.add((int(entry), fields[19]))
    return found


def alive(pid: int, started: str | None = None) -> bool:
    """Whether the process runs (and, given its start time, is still the same one)."""
    fields = _stat_fields(pid)
    if fields is None or fields[0] == "Z":
        return False
    return started is None or fields[19] == started


def test_initialize_progress_and_clean_exit(tmp_path: Path) -> None:
    # Enough files for worker processes (index.workers=2 parses >= 100 files in a pool).
    files = dict(WORKSPACE)
    files.update(
        {f"gen/mod{i}.py": f"def generated_{i}(x):\n    return x + {i}\n" for i in range(120)}
    )
    root = make_workspace(tmp_path / "big", files)
    lsp = LspSession(
        [root], {"embeddings": False, "index": {"workers": 2}}, log_file=tmp_path / "log"
    )
    lsp.start()
    caps = lsp.initialize_result.capabilities
    assert caps.workspace_symbol_provider and caps.hover_provider and caps.call_hierarchy_provider
    assert caps.document_symbol_provider and caps.definition_provider
    seen_children: set[tuple[int, str]] = set()
    pid = lsp.pid
    assert pid is not None

    def complete() -> bool:
        seen_children.update(children_of(pid))  # the worker processes, while they run
        return bool(lsp.request("codesift/status")["folders"][0]["complete"])

    poll(complete, bool, "the first index complete")
    lsp.wait_ready()
    progress = [p.value for m, p in lsp.notifications if m == "$/progress"]
    kinds = [v["kind"] if isinstance(v, dict) else v.kind for v in progress]
    assert kinds[0] == "begin" and "end" in kinds
    messages = [v.get("message", "") if isinstance(v, dict) else v.message for v in progress]
    assert any("scanning" in (m or "") for m in messages)
    assert any("parsing" in (m or "") and "files" in (m or "") for m in messages), messages
    statuses = lsp.messages("codesift/indexStatus")
    assert statuses and statuses[-1]["state"] == "ready" and statuses[-1]["complete"] is True
    assert lsp.request("codesift/search", {"query": "generated_77"})["results"]
    assert lsp.close() == 0
    assert not alive(pid)
    # Worker processes (and multiprocessing's helper) end with the server: at once,
    # or once they see its end of their pipes closed.
    poll(
        lambda: [c for c in seen_children if alive(*c)],
        lambda outlived: not outlived,
        "the server's child processes ended",
    )
    log = (tmp_path / "log").read_text()
    assert "Traceback" not in log, log
    assert "background work still running" not in log, log  # every thread ended


def as_dict(value: Any) -> dict[str, Any]:
    """A $/progress value as the JSON object sent (pygls gives typed or plain ones)."""
    if isinstance(value, dict):
        return value
    plain_value = plain(value)
    if isinstance(plain_value, dict):
        return plain_value
    unstructured: dict[str, Any] = cattrs.unstructure(value)
    return unstructured


def test_progress_made_while_the_client_accepts_the_token_is_not_lost(tmp_path: Path) -> None:
    # A slow editor answers the progress token requests only after the first index
    # and the git history pass are done: each phase's last report and each end made
    # meanwhile still reach it, after the token's begin.
    files = dict(WORKSPACE)
    files.update({f"gen/mod{i}.py": f"def generated_{i}(x):\n    return {i}\n" for i in range(30)})
    root = make_workspace(tmp_path / "slow", files)
    lsp = LspSession([root], {"embeddings": False})
    lsp.hold_progress_tokens()
    with lsp:
        poll(
            lambda: lsp.request("codesift/status")["folders"][0]["complete"],
            bool,
            "the first index complete",
        )
        lsp.wait_history()
        assert not lsp.messages("$/progress")  # nothing begins before the token is accepted
        lsp.release_progress_tokens()

        def by_token(notes: list[tuple[str, Any]]) -> list[list[dict[str, Any]]]:
            tokens: dict[Any, list[dict[str, Any]]] = {}
            for method, params in notes:
                if method == "$/progress":
                    tokens.setdefault(params.token, []).append(as_dict(params.value))
            return list(tokens.values())

        def ended(notes: list[tuple[str, Any]]) -> bool:
            done = [t for t in by_token(notes) if t[-1]["kind"] == "end"]
            return any("git history complete" in t[-1]["message"] for t in done)

        lsp.wait_for(ended)
        with lsp._lock:
            index, history = by_token(lsp.notifications)[:2]
        assert [v["kind"] for v in index] == ["begin", "report", "end"], index
        assert index[0]["message"] == "slow: scanning"
        assert index[1]["message"] == "slow: parsing 33/33 files", index
        assert index[2]["message"] == "slow: indexed 33 files", index
        messages = [v.get("message") for v in history]
        assert history[0]["kind"] == "begin" and history[-1]["kind"] == "end", history
        assert "slow: git history 1/1 commits" in messages, messages
        assert "slow: git times 33/33 files" in messages, messages
        assert messages[-1] == "slow: git history complete", messages


def test_invalid_options_are_reported_and_replaced(workspace: Path) -> None:
    options = {
        "embeddings": "yes",
        "quietMs": -5,
        "colour": "blue",
        "search": {"top_k": "ten", "rrf_k": 30},
    }
    with LspSession([workspace], options) as lsp:
        lsp.wait_ready()
        lsp.wait_for(lambda n: sum(m == "window/showMessage" for m, _ in n) >= 4)
        shown = " | ".join(p.message for p in lsp.messages("window/showMessage"))
        assert "embeddings must be true or false" in shown
        assert "quietMs" in shown and "unknown codesift option 'colour'" in shown
        assert "search.top_k must be an integer" in shown
        # the valid parts apply; the server works
        assert lsp.request("codesift/search", {"query": "submit"})["results"]
        lsp.notify("workspace/didChangeConfiguration", {"settings": {"codesift": {"watch": 3}}})
        lsp.wait_for(
            lambda n: any("watch must be" in str(p) for m, p in n if m == "window/showMessage")
        )
    assert lsp.returncode == 0


def test_multi_root_folders_added_and_removed(tmp_path: Path) -> None:
    one = make_workspace(tmp_path / "one", {"alpha.py": "def alpha_handler():\n    return 1\n"})
    two = make_workspace(tmp_path / "two", {"beta.py": "def beta_handler():\n    return 2\n"})
    three = make_workspace(tmp_path / "three", {"gamma.py": "def gamma_handler():\n    return 3\n"})
    with LspSession([one, two], {"embeddings": False}) as lsp:
        lsp.wait_ready()
        reply = lsp.request("codesift/search", {"query": "handler"})
        assert {r["folder"] for r in reply["results"]} == {"one", "two"}
        assert {i["folder"] for i in reply["index"]} == {"one", "two"}
        only = lsp.request("codesift/search", {"query": "handler", "folders": ["two"]})
        assert {r["folder"] for r in only["results"]} == {"two"}
        lsp.notify(
            "workspace/didChangeWorkspaceFolders",
            {
                "event": {
                    "added": [{"uri": three.as_uri(), "name": "three"}],
                    "removed": [{"uri": one.as_uri(), "name": "one"}],
                }
            },
        )
        poll(
            lambda: {f["name"] for f in lsp.request("codesift/status")["folders"]},
            lambda folders: folders == {"two", "three"},
            "folders two and three",
        )
        lsp.wait_ready()
        reply = lsp.request("codesift/search", {"query": "handler"})
        assert {r["folder"] for r in reply["results"]} == {"two", "three"}
        assert (one / ".codesift" / "index.db").exists()  # each folder has its own index
    assert lsp.returncode == 0


def test_git_checkout_triggers_a_rescan(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "repo", {"main.py": "def on_main_branch():\n    pass\n"})
    git(root, "checkout", "-q", "-b", "feature")
    (root / "main.py").write_text("def on_feature_branch():\n    pass\n")
    git(root, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qam", "feature")
    git(root, "checkout", "-q", "master") if (
        root / ".git" / "refs" / "heads" / "master"
    ).exists() else git(root, "checkout", "-q", "main")
    with LspSession([root], {"embeddings": False}) as lsp:
        lsp.wait_ready()
        assert lsp.request("codesift/search", {"query": "on_main_branch"})["results"]
        git(root, "checkout", "-q", "feature")
        poll(
            lambda: [
                r["qualified_name"]
                for r in lsp.request("codesift/search", {"query": "on_feature_branch"})["results"]
            ],
            lambda names: "main.on_feature_branch" in names,
            "the feature branch's function found after the checkout",
        )
