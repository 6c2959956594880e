"""bench/docset.py: how the generated measuring stick turns doc comments into questions.

Real tree-sitter grammars parse small sources; nothing is fetched.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from types import ModuleType

from script_module import load_script

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _load_docset() -> ModuleType:
    return load_script(BENCH / "docset.py", "docset", register=True)


docset = _load_docset()


def test_comment_markers_tags_and_markup_are_removed() -> None:
    raw = "/**\n * Returns the {@link Widget} for a <b>key</b>.\n * @param key the key\n */"
    assert docset.clean_comment(raw) == "Returns the Widget for a key ."
    assert docset.clean_comment("/// Parses a [`Version`] string.") == "Parses a Version string."


def test_first_sentence_stops_at_a_period_not_at_an_abbreviation() -> None:
    doc = "Reads the header, e.g. the magic number. Then more."
    assert docset.first_sentence(doc) == "Reads the header, e.g. the magic number"


def test_question_loses_the_name_the_file_stem_and_their_parts() -> None:
    parts = [*docset.identifier_parts("parseHeaderLine"), *docset.identifier_parts("reader")]
    text = docset.question_text("Parses one header line read by the Reader", parts)
    assert text == "one read by the"


def test_short_form_keeps_the_first_content_words() -> None:
    assert docset.short_words("Return a list of completions for the value", 3) == (
        "list completions value"
    )
    assert docset.short_words("a of the", 3) == ""


def test_candidates_come_from_real_grammars() -> None:
    go = b"package p\n\n// Open opens the named file for reading today.\nfunc Open(n string) {}\n"
    names = Counter[str]()
    found = docset.file_candidates("p/open.go", go, "go", names)
    assert [(c.name, c.start_line, c.end_line) for c in found] == [("Open", 3, 4)]
    assert found[0].sentence == "Open opens the named file for reading today"
    c_header = b"/** Compresses the source buffer into dst. */\nsize_t zc(void *dst);\n"
    assert [c.name for c in docset.file_candidates("z.h", c_header, "c")] == ["zc"]
    py = b'def load(path):\n    """Load the settings file from disk."""\n'
    assert [c.sentence for c in docset.file_candidates("s.py", py, "python")] == [
        "Load the settings file from disk"
    ]


def test_questions_are_drawn_the_same_way_every_time() -> None:
    source = docset.SOURCES[0]
    candidates = [
        docset.Candidate(f"m{i}.py", f"name{i}", "function_definition", i, i + 3, s)
        for i, s in enumerate(
            ["Load every settings file from the disk", "Write the cache entries back to disk"]
        )
    ]
    first = docset.docset_questions(source, candidates, "train")
    again = docset.docset_questions(source, candidates, "train")
    assert first == again
    assert {q["style"] for q in first} == {"long", "short"}
    assert {q["category"] for q in first} == {"semantic", "symbol"}
    assert all(q["split"] == "train" for q in first)


def test_every_language_has_a_train_and_a_held_out_package() -> None:
    splits = docset.splits()
    for language in {s.language for s in docset.SOURCES}:
        mine = {splits[s.name] for s in docset.SOURCES if s.language == language}
        assert mine == {"train", "held-out"}, language
