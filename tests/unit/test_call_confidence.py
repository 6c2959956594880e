"""Confidence of call edges: the split of a callers walk the hover shows (by hop,
guesses apart or hidden), and where a path hint (`<place>::<qualified name>`)
lands among same-named definitions."""

from __future__ import annotations

from codesift.engine import GraphLink, GraphResult
from codesift.lsp.hover import who_calls
from codesift.store.path_hints import _parse, _pick


def link(source: int, target: int, confidence: str) -> GraphLink:
    return GraphLink(source, target, "f", "calls", 1, confidence, confidence)


def test_guesses_are_apart_hidden_or_shown() -> None:
    # 2 and 3 call 1 (3 only by a guessed name); 4 calls 2, 5 calls 3 (a guess too).
    walk = GraphResult(
        roots=(1,),
        nodes=(),
        edges=(
            link(2, 1, "import"),
            link(3, 1, "unique"),
            link(4, 2, "type"),
            link(5, 3, "guess"),
            link(1, 1, "scope"),  # recursion is no caller
        ),
    )
    apart = who_calls(walk, 1, "apart")
    assert (apart.sure, apart.guessed, apart.second) == ([2], [3], [4, 5])
    hidden = who_calls(walk, 1, "hide")
    assert (hidden.sure, hidden.guessed, hidden.second) == ([2], [], [4])
    shown = who_calls(walk, 1, "show")
    assert (shown.sure, shown.guessed) == ([2, 3], [])
    assert link(2, 1, "unique").guessed and not link(2, 1, "import").guessed


def test_a_module_path_hint_reaches_the_file_with_any_script_extension() -> None:
    hint = _parse("src/util/format::slugify")
    assert hint is not None and hint.tail == "slugify"
    candidates = [(10, "src/util/format.ts"), (11, "lib/util/format.ts")]
    assert _pick(hint, candidates) == 10
    index = _parse("src/util::slugify")
    assert index is not None and _pick(index, [(12, "src/util/index.ts")]) == 12
    # Overloads: the implementation, written after the signatures.
    assert _pick(hint, [(20, "src/util/format.ts"), (21, "src/util/format.ts")]) == 21


def test_a_go_import_hint_reaches_the_folder_its_path_names() -> None:
    hint = _parse("*example.com/shop/store/::store.Total")
    assert hint is not None
    candidates = [(1, "store/store.go"), (2, "legacy/store/store.go"), (3, "other/x.go")]
    assert _pick(hint, candidates) == 1
    # The standard library is only ever its very folder: no project `http` package.
    stdlib = _parse("*net/http/::http.Error")
    assert stdlib is not None and _pick(stdlib, [(4, "http/errors.go")]) is None
    # A module rooted at the workspace: its root package.
    root = _parse("*github.com/acme/chi/v5/::chi.NewRouter")
    assert root is not None and _pick(root, [(5, "chi.go")]) == 5


def test_globals_builtins_and_conversions_never_resolve() -> None:
    for hint in ("*global::setTimeout", "*builtin/::len", "*conversion::Duration"):
        assert _parse(hint) is None
