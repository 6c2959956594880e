#!/usr/bin/env python3
"""Symbol, declaration and code questions made from the corpora's own code: measuring
sticks for the questions a developer types that are no prose, or name a symbol.

    PYTHONPATH=server python bench/symbol_questions.py
        [--family named|file|asked|declaration|line|message|all]
        [--split tuning|held-out|both] [--per-corpus 25] [--peer] [--misses]
        [--write] [--out bench/RESULTS.md]

Corpora: both dev sets' and the generated set's (bench/docset.py), each read from the
index bench/quality.py built for it (bench/.data/db/quality-<corpus>.db; a corpus
without one is skipped, so run quality.py first). `tuning`: the dev sets' corpora and
the generated set's train packages; `held-out`: the generated set's held-out
packages, which no tuning reads (bench/quality.py's split).

Families (each name or line asked once per corpus, at most `--per-corpus` of them,
sorted, then shuffled with a fixed seed):

- `named`: a symbol whose answer is the file named after it, the convention every
  language has (`Widget` in `Widget.java`, `foo_bar` in `foo_bar.h`, a Rust `Sink`
  in `sink.rs` or `sink/mod.rs`, `App.Query` in `app/query.ex`, a command
  `pyenv-which` in `libexec/pyenv-which`). Questions: the types, interfaces,
  traits, modules and namespaces defined at a file's top level or inside a module or
  namespace, whose name, without case and separators, is the file's stem (or its
  folder's name for `mod.rs`, `index.ts`, `__init__.py` and the like), and the
  extensionless scripts whose file name has a hyphen; not a package's own module
  (`__init__.py`: the question is about its folder). The question is the name as
  written; the target is the file (any result in one of the files so named counts).
- `file`: a file asked for by its base name when no other file has it
  (`smtplib.py`), else by its last two path components when no other path ends
  with them (`retrieval/ordering.py`). The target is the file.
- `asked`: a question about one function or method by its name (`what does
  parse_http_header do`), for compound names (snake_case, camelCase) defined once
  in the corpus. The target is the definition's lines.
- `declaration`: a function's or method's declaration as a developer copies it, its
  signature's first line (`public function send(string $content, array $records):
  void`, `fn type_id(&self) -> AnyValueId`, at most 120 characters), when that line
  names the definition and no other definition of the corpus starts with the same
  line (a line shared by several definitions does not say which is meant). The target
  is the definition's lines.
- `line`: a line of code pasted as it is (`params = to_native_string(params)`), from
  up to `--per-corpus` random files, one line each of 30-100 characters with three
  identifiers or more, no comment, found once in the whole corpus (read from the
  corpus's files). The target is that line.
- `message`: an error or log message asked in quotes (`"header argument is
  required"`): a string literal of 20-80 characters and four words or more, no
  escape or format placeholder, found once in the corpus, one from each of up to
  `--per-corpus` random files. The target is its line.
- `pasted`: the same messages pasted without quotes (`header argument is
  required`), as a message copied from a terminal or a log is.
- `formatted`: a message the program fills in, as it shows: a string literal with
  one or more placeholders (`%s`, `%d`, `%v`, `{}`, `{name}`, `${x}`, `#{x}`) and
  four words or more of its own, found once in the corpus, each placeholder
  replaced by a value (`config.yaml`, `42`, `user_17`...), pasted without quotes
  (`cannot open config.yaml: 42 bytes left`). The target is its line.
- `logged`: the `pasted` and `formatted` families' messages as a log line shows
  them, after a timestamp, a level and the logger's name (`2026-12-06
  15:04:05,123 ERROR app.billing: card missing for this charge`).
- `location`: a stack frame or a compiler's location, as the language's tools
  print it, for a line inside a random function or method: Python's `File
  "/srv/app/pkg/mod.py", line 42, in name`, a JVM frame `at pkg.Type.name(Type.java:42)`,
  Go's `/srv/app/pkg/file.go:42 +0x1d`, JavaScript's `at name
  (/srv/app/lib/file.js:42:13)`, Ruby's `/srv/app/lib/file.rb:42:in 'name'`,
  Rust's `at ./src/file.rs:42:5`, else `path:42:5`. The target is that line.
- `trace`: a whole trace as an agent pastes it: its header, the `location`
  family's frame innermost, a frame of a library outside the corpus, and a frame
  of another file's function outermost, in the language's order (a Python
  traceback lists the innermost frame last, the others first). The target is the
  innermost frame's line.

Scored with bench/quality.py's NDCG@10, with MRR@10 and the share answered at rank 1
(`family|system|split|language` -> those three, in bench/results/symbol-questions.json
with `--write`).
`--peer`: the same questions through semble 0.7.0 as bench/peer_baseline.py runs it
(its own file walk, BM25 and ranking, no model), cached in
bench/.data/peer-<family>/.

The definitions come from codesift's own index (its tree-sitter extraction picks
which names and lines are asked); the targets are files and line spans, which any
tool can return.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
for folder in (REPO_DIR / "server", BENCH_DIR):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

import apsw  # noqa: E402

import quality  # noqa: E402
from codesift.config import load_settings  # noqa: E402
from codesift.retrieval.request import SearchRequest  # noqa: E402
from codesift.retrieval.search import Searcher  # noqa: E402
from codesift.tokens import compact_name, module_name  # noqa: E402
from corpora import CORPUS_NAMES, DB_DIR, DEVSET2_NAMES, prepare_corpus  # noqa: E402
from docset import DOCSET_NAMES, docset_corpus, load_manifest  # noqa: E402
from runinfo import write_results  # noqa: E402

SEED = 20261206
SECTION = "symbol-questions"
FAMILIES = (
    "named",
    "file",
    "asked",
    "declaration",
    "line",
    "message",
    "pasted",
    "formatted",
    "logged",
    "location",
    "trace",
)
TYPE_KINDS = frozenset(
    "class struct interface trait enum module type protocol object record union namespace".split()
)
CALLABLE_KINDS = frozenset({"function", "method", "constructor"})
DECLARATION_CHARS = 120

Json = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Question:
    corpus: str
    language: str
    text: str
    targets: tuple[quality.Target, ...]


def _rows(db: Path, sql: str) -> list[tuple[str, ...]]:
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return [tuple(str(value) for value in row) for row in conn.execute(sql)]
    finally:
        conn.close()


def _sample(corpus: str, family: str, keys: list[str], per_corpus: int) -> list[str]:
    keys = sorted(keys)
    random.Random(f"{SEED}:{family}:{corpus}").shuffle(keys)
    return keys[:per_corpus]


def named_questions(corpus: str, db: Path, per_corpus: int) -> list[Question]:
    """Names whose answer is the file named after them."""
    rows = _rows(
        db,
        "SELECT n.name, n.kind, n.qualified_name, f.path, f.language FROM nodes n"
        " JOIN files f ON f.id = n.file_id"
        " WHERE n.parent_id IS NULL OR n.parent_id IN"
        " (SELECT p.id FROM nodes p WHERE p.kind IN ('module', 'namespace'))",
    )
    files: dict[str, set[str]] = defaultdict(set)
    language: dict[str, str] = {}
    for name, kind, qualified, path, lang in rows:
        if kind not in TYPE_KINDS:
            continue
        if qualified == path:  # a file's own node: only commands (scripts) count
            base = path.rsplit("/", 1)[-1]
            if "." in base or "-" not in base or quality.is_test_path(path):
                continue
            name = base
        elif len(name) < 3 or compact_name(name) != module_name(path):
            continue
        elif kind == "module" and module_name(path) != compact_name(
            path.split("/")[-1].split(".")[0]
        ):
            # A file that stands for its folder (`__init__.py`, `mod.rs`): the question
            # about its module is about the folder.
            continue
        files[name].add(path)
        language.setdefault(name, lang)
    return [
        Question(corpus, language[n], n, tuple(quality.Target(f) for f in sorted(files[n])))
        for n in _sample(corpus, "named", list(files), per_corpus)
    ]


def declaration_questions(corpus: str, db: Path, per_corpus: int) -> list[Question]:
    """Functions' and methods' first signature lines that name them and no other
    definition starts with."""
    rows = _rows(
        db,
        "SELECT n.name, n.kind, n.signature, f.path, f.language, n.start_line, n.end_line"
        " FROM nodes n JOIN files f ON f.id = n.file_id",
    )
    lines: dict[str, list[tuple[str, str, int, int]]] = defaultdict(list)
    seen: Counter[str] = Counter()
    for name, kind, signature, path, lang, start, end in rows:
        first = " ".join(signature.split("\n", 1)[0].split())[:DECLARATION_CHARS]
        seen[first] += 1
        if kind not in CALLABLE_KINDS or len(first) < 12 or len(name) < 2:
            continue
        if not re.search(rf"(?<![\w$]){re.escape(name)}\s*[(<\[]", first):
            continue  # the line does not name it (a macro or attribute line first)
        lines[first].append((path, lang, int(start), int(end)))
    unique = [line for line, defs in lines.items() if len(defs) == 1 and seen[line] == 1]
    out: list[Question] = []
    for line in _sample(corpus, "declaration", unique, per_corpus):
        where, lang, first_line, last_line = lines[line][0]
        out.append(Question(corpus, lang, line, (quality.Target(where, first_line, last_line),)))
    return out


_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_COMMENT_STARTS = ("#", "//", "*", "/*", "--", '"""', "'''", ";")
LINE_CHARS = (30, 100)


def corpus_root(corpus: str) -> Path:
    source = (
        docset_corpus(corpus) if corpus in DOCSET_NAMES else prepare_corpus(corpus, quality.log)
    )
    return Path(source.root)


def _code_file_lines(corpus: str, db: Path) -> tuple[list[tuple[str, ...]], dict[str, list[str]]]:
    """The corpus's (path, language) rows of files with a language, and each one's
    lines (files that cannot be read left out)."""
    root = corpus_root(corpus)
    rows = _rows(db, "SELECT path, language FROM files WHERE language NOT IN ('text', 'markdown')")
    texts: dict[str, list[str]] = {}
    for path, _ in rows:
        try:
            texts[path] = (root / path).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
    return rows, texts


def _one_per_file(
    corpus: str,
    family: str,
    rows: list[tuple[str, ...]],
    candidates: dict[str, list[tuple[int, str]]],
    per_corpus: int,
) -> list[tuple[str, str, int, str]]:
    """(path, language, line number, text) of one candidate from each of up to
    `per_corpus` files that have one (files sorted, then shuffled; the candidate
    drawn with the same seed)."""
    order = sorted(rows)
    rng = random.Random(f"{SEED}:{family}:{corpus}")
    rng.shuffle(order)
    out: list[tuple[str, str, int, str]] = []
    for path, language in order:
        if len(out) >= per_corpus:
            break
        found = candidates.get(path)
        if found:
            number, text = rng.choice(found)
            out.append((path, language, number, text))
    return out


def line_questions(corpus: str, db: Path, per_corpus: int) -> list[Question]:
    """Lines of code pasted as they are: from up to `per_corpus` files, one line each
    of 30-100 characters with at least three identifiers, no comment, found once in
    the whole corpus."""
    rows, texts = _code_file_lines(corpus, db)
    counts = Counter(line.strip() for lines in texts.values() for line in lines)
    candidates = {
        path: [
            (number, line.strip())
            for number, line in enumerate(lines, start=1)
            if LINE_CHARS[0] <= len(line.strip()) <= LINE_CHARS[1]
            and counts[line.strip()] == 1
            and len(_IDENTIFIER.findall(line)) >= 3
            and not line.strip().startswith(_COMMENT_STARTS)
        ]
        for path, lines in texts.items()
    }
    return [
        Question(corpus, language, line, (quality.Target(path, number, number),))
        for path, language, number, line in _one_per_file(
            corpus, "line", rows, candidates, per_corpus
        )
    ]


# A string literal of 20-80 characters that starts with a letter and holds no
# escape or format placeholder: a message, as a log or an error shows it.
_MESSAGE = re.compile(r'"([A-Za-z][^"\\{}%$]{19,79})"|' + r"'([A-Za-z][^'\\{}%$]{19,79})'")


def _literals_once(
    corpus: str, db: Path, pattern: re.Pattern[str], keep: Callable[[str], bool]
) -> tuple[list[tuple[str, ...]], dict[str, list[tuple[int, str]]]]:
    """The corpus's (path, language) rows and, per file, the (line, literal) of the
    string literals `pattern` finds (its first or second group) that `keep` keeps
    and that are found once in the whole corpus."""
    rows, texts = _code_file_lines(corpus, db)
    counts: Counter[str] = Counter()
    found: dict[str, list[tuple[int, str]]] = {}
    for path, lines in texts.items():
        here = found[path] = []
        for number, line in enumerate(lines, start=1):
            for match in pattern.finditer(line):
                literal = match.group(1) or match.group(2)
                counts[literal] += 1
                if keep(literal):
                    here.append((number, literal))
    return rows, {
        path: [(n, literal) for n, literal in here if counts[literal] == 1]
        for path, here in found.items()
    }


def message_questions(corpus: str, db: Path, per_corpus: int) -> list[Question]:
    """Messages (string literals of four words or more) found once in the corpus,
    asked in quotes: from up to `per_corpus` files, one each."""
    rows, candidates = _literals_once(
        corpus, db, _MESSAGE, lambda message: len(message.split()) >= 4
    )
    return [
        Question(corpus, language, f'"{message}"', (quality.Target(path, number, number),))
        for path, language, number, message in _one_per_file(
            corpus, "message", rows, candidates, per_corpus
        )
    ]


def pasted_questions(corpus: str, db: Path, per_corpus: int) -> list[Question]:
    """The `message` family's messages without their quotes."""
    return [
        Question(q.corpus, q.language, q.text[1:-1], q.targets)
        for q in message_questions(corpus, db, per_corpus)
    ]


# What a log line shows before the message.
_LOG_PREFIX = "2026-12-06 15:04:05,123 ERROR app.{}: "


def logged_questions(corpus: str, db: Path, per_corpus: int) -> list[Question]:
    """The `pasted` and `formatted` families' messages as log lines (every other
    one of each, so as many as either)."""
    pasted = pasted_questions(corpus, db, per_corpus)[::2]
    filled = formatted_questions(corpus, db, per_corpus)[1::2]
    return [
        Question(q.corpus, q.language, _LOG_PREFIX.format(q.language) + q.text, q.targets)
        for q in (*pasted, *filled)
    ]


# A string literal of 20-100 characters holding a placeholder: printf's `%s`/`%d`/
# `%v`..., `{}`/`{0}`/`{name}`/`{:?}`, `${x}` and `#{x}`.
_TEMPLATE = re.compile(r'"([A-Za-z][^"\\]{19,99})"|' + r"'([A-Za-z][^'\\]{19,99})'")
_PLACEHOLDER = re.compile(r"%[-+ #0]*\d*(?:\.\d+)?[sdifuxXvqeEgGc]|[$#]?\{[^{}\s]{0,20}\}")
# What the program fills the placeholders with (one after the other).
_VALUES = ("config.yaml", "42", "user_17", "/var/lib/app", "3.5", "timeout", "0x1f", "main")


def _fill(template: str) -> str:
    """`template` with its placeholders replaced by _VALUES, one after the other."""
    values = iter(_VALUES * 8)
    return _PLACEHOLDER.sub(lambda _: next(values), template)


def formatted_questions(corpus: str, db: Path, per_corpus: int) -> list[Question]:
    """Messages with placeholders (four words or more besides them) found once in
    the corpus, filled in with values and asked without quotes: from up to
    `per_corpus` files, one each."""
    rows, candidates = _literals_once(
        corpus,
        db,
        _TEMPLATE,
        lambda template: (
            bool(_PLACEHOLDER.search(template))
            and len(re.findall(r"[A-Za-z]{2,}", _PLACEHOLDER.sub(" ", template))) >= 4
        ),
    )
    out: list[Question] = []
    for path, language, number, template in _one_per_file(
        corpus, "formatted", rows, candidates, per_corpus
    ):
        message = _fill(template)
        out.append(Question(corpus, language, message, (quality.Target(path, number, number),)))
    return out


# Where a deployed copy of the corpus runs from, as a trace shows its paths.
_DEPLOYED = "/srv/app"


def _frame(language: str, path: str, line: int, name: str) -> str:
    """A stack frame (or a compiler's location) for `line` of `path`, in `name`, as
    the language's tools print it."""
    file_name = path.rsplit("/", 1)[-1]
    if language == "python":
        return f'File "{_DEPLOYED}/{path}", line {line}, in {name}'
    if language in ("java", "kotlin", "scala"):
        # The package: the folders under the source root (`src/main/java/`), if any.
        folders = path.rsplit("/", 1)[0] if "/" in path else "app"
        for root in ("/java/", "/kotlin/", "/scala/"):
            folders = folders.rsplit(root, 1)[-1] if root in f"/{folders}/" else folders
        package = folders.strip("/").replace("/", ".")
        owner = file_name.rsplit(".", 1)[0]
        return f"at {package}.{owner}.{name}({file_name}:{line})"
    if language == "go":
        return f"{_DEPLOYED}/{path}:{line} +0x1d"
    if language in ("javascript", "typescript", "tsx"):
        return f"at {name} ({_DEPLOYED}/{path}:{line}:13)"
    if language == "ruby":
        return f"{_DEPLOYED}/{path}:{line}:in '{name}'"
    if language == "rust":
        return f"at ./{path}:{line}:5"
    return f"{path}:{line}:5"


def location_questions(corpus: str, db: Path, per_corpus: int) -> list[Question]:
    """Frames for a line inside a function or method of several lines, one from
    each of up to `per_corpus` files."""
    rows = _rows(
        db,
        "SELECT f.path, f.language, n.name, n.start_line, n.end_line FROM nodes n"
        " JOIN files f ON f.id = n.file_id WHERE n.kind IN ('function', 'method')"
        " AND n.end_line - n.start_line >= 2 AND f.language NOT IN ('text', 'markdown')",
    )
    files: dict[str, list[tuple[int, str]]] = defaultdict(list)
    language: dict[str, str] = {}
    for path, lang, name, start, end in rows:
        language[path] = lang
        if re.fullmatch(r"[A-Za-z_]\w*", name):
            files[path].append((int(start) + (int(end) - int(start)) // 2, name))
    out: list[Question] = []
    for path, lang, number, name in _one_per_file(
        corpus, "location", sorted(language.items()), files, per_corpus
    ):
        frame = _frame(lang, path, number, name)
        out.append(Question(corpus, lang, frame, (quality.Target(path, number, number),)))
    return out


def _trace(language: str, frames: list[tuple[str, int, str]]) -> str:
    """A trace of `frames` (path, line, name), innermost first, as the language's
    runtime prints it."""
    lines = [_frame(language, path, line, name) for path, line, name in frames]
    if language == "python":
        return "\n".join(
            ["Traceback (most recent call last):", *lines[::-1], "ValueError: bad value"]
        )
    return "\n".join(["Error: bad value", *lines])


def trace_questions(corpus: str, db: Path, per_corpus: int) -> list[Question]:
    """The `location` family's frames as the innermost of a trace, with a library's
    frame and another file's function outside them."""
    located = location_questions(corpus, db, per_corpus * 2)
    out: list[Question] = []
    for inner, outer in zip(located[::2], located[1::2], strict=False):
        (target,) = inner.targets
        library = ("opt/lib/runtime/core" + _EXTENSION.get(inner.language, ".c"), 88, "dispatch")
        frames = [
            (target.path, target.start_line or 1, _frame_name(inner.text)),
            library,
            (outer.targets[0].path, outer.targets[0].start_line or 1, _frame_name(outer.text)),
        ]
        out.append(Question(corpus, inner.language, _trace(inner.language, frames), inner.targets))
    return out


_EXTENSION = {"python": ".py", "java": ".java", "go": ".go", "javascript": ".js", "ruby": ".rb"}


def _frame_name(frame: str) -> str:
    """The function a `location` family's frame names ("f" when it names none)."""
    match = re.search(r"in (\w+)$|\.(\w+)\(|at (\w+) \(|in '(\w+)'", frame)
    return next((group for group in match.groups() if group), "f") if match else "f"


ASKED = "what does {} do"


def asked_questions(corpus: str, db: Path, per_corpus: int) -> list[Question]:
    """A question about one function or method by its name ("what does
    parse_http_header do"), for names that are compound (snake_case, camelCase) and
    defined once in the corpus; the target is the definition's lines."""
    rows = _rows(
        db,
        "SELECT n.name, f.path, f.language, n.start_line, n.end_line FROM nodes n"
        " JOIN files f ON f.id = n.file_id WHERE n.kind IN ('function', 'method')"
        " AND n.name IN (SELECT name FROM nodes GROUP BY name HAVING count(*) = 1)",
    )
    compound = re.compile(r"[a-z][A-Z]|[A-Za-z0-9]_[A-Za-z0-9]")
    found = {
        name: (path, lang, int(start), int(end))
        for name, path, lang, start, end in rows
        if len(name) >= 6 and compound.search(name) and re.fullmatch(r"[A-Za-z_]\w*", name)
    }
    out: list[Question] = []
    for name in _sample(corpus, "asked", list(found), per_corpus):
        path, lang, start, end = found[name]
        out.append(Question(corpus, lang, ASKED.format(name), (quality.Target(path, start, end),)))
    return out


def file_questions(corpus: str, db: Path, per_corpus: int) -> list[Question]:
    """Files asked for by name: a random file's base name when no other file has
    it (`smtplib.py`), else its last two path components when no other path ends
    with them (`retrieval/ordering.py`); the target is the file."""
    paths = [path for (path,) in _rows(db, "SELECT path FROM files WHERE language != 'text'")]
    language = {row[0]: row[1] for row in _rows(db, "SELECT path, language FROM files")}
    names = Counter(path.rsplit("/", 1)[-1] for path in paths)
    tails = Counter("/".join(path.split("/")[-2:]) for path in paths if "/" in path)
    out: list[Question] = []
    for path in _sample(corpus, "file", paths, len(paths)):
        if len(out) >= per_corpus:
            break
        name = path.rsplit("/", 1)[-1]
        tail = "/".join(path.split("/")[-2:])
        if "." in name.strip(".") and names[name] == 1:
            asked = name
        elif "/" in path and tails[tail] == 1:
            asked = tail
        else:
            continue
        out.append(Question(corpus, language[path], asked, (quality.Target(path),)))
    return out


QUESTIONS = {
    "named": named_questions,
    "file": file_questions,
    "asked": asked_questions,
    "declaration": declaration_questions,
    "line": line_questions,
    "message": message_questions,
    "pasted": pasted_questions,
    "formatted": formatted_questions,
    "logged": logged_questions,
    "location": location_questions,
    "trace": trace_questions,
}


def corpus_names(split: str) -> list[tuple[str, str]]:
    """(corpus, split) for the corpora of the split(s) asked for."""
    gen_split = {str(p["name"]): str(p["split"]) for p in load_manifest()["packages"]}
    out: list[tuple[str, str]] = []
    if split in ("tuning", "both"):
        out += [(n, "tuning") for n in (*CORPUS_NAMES, *DEVSET2_NAMES)]
        out += [(n, "tuning") for n in DOCSET_NAMES if gen_split.get(n) == "train"]
    if split in ("held-out", "both"):
        out += [(n, "held-out") for n in DOCSET_NAMES if gen_split.get(n) == "held-out"]
    return out


Page = list[quality.RankedChunk]


def codesift_pages(db: Path, questions: Sequence[Question], k: int) -> list[Page]:
    """codesift's first `k` results for each question."""
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        searcher = Searcher(conn, load_settings(db.parent).search, None)
        return [
            [
                quality.RankedChunk(r.path, r.start_line, r.end_line)
                for r in searcher.search(SearchRequest(query=q.text, top_k=k)).results
            ]
            for q in questions
        ]
    finally:
        conn.close()


def peer_pages(corpus: str, family: str, questions: Sequence[Question], k: int) -> list[Page]:
    """semble's first `k` results for each question (computed once, cached)."""
    import peer_baseline

    peer_baseline.RESULT_DIRS["semble"] = DB_DIR.parent / f"peer-{family}"
    source = (
        docset_corpus(corpus) if corpus in DOCSET_NAMES else prepare_corpus(corpus, quality.log)
    )
    asked = [quality.DevQuery(corpus, q.text, "symbol", q.targets, style=family) for q in questions]
    result = peer_baseline.peer_results(quality, source, asked, k, "semble", rerun=False)
    assert result is not None
    by_query = {item["query"]: item["results"] for item in result["queries"]}
    return [
        [
            quality.RankedChunk(str(r["path"]), int(r["start_line"]), int(r["end_line"]))
            for r in by_query.get(q.text, [])
        ]
        for q in questions
    ]


@dataclass(slots=True)
class Tally:
    n: int = 0
    ndcg: float = 0.0
    rr: float = 0.0
    first: int = 0

    def add(self, page: Page, targets: Sequence[quality.Target], k: int) -> None:
        score = quality.score_results(page, targets, k)
        self.n += 1
        self.ndcg += score.ndcg
        self.rr += score.rr
        self.first += score.first_hit == 1

    def cells(self) -> list[str]:
        if not self.n:
            return ["-", "-", "-"]
        return [f"{value / self.n:.3f}" for value in (self.ndcg, self.rr, self.first)]


Tallies = dict[tuple[str, str, str, str], Tally]  # (family, system, split, language)


def family_table(tallies: Tallies, family: str, systems: Sequence[str]) -> list[str]:
    splits = [
        s for s in ("tuning", "held-out") if any(k[0] == family and k[2] == s for k in tallies)
    ]
    header = ["language"]
    for split in splits:
        for system in systems:
            header += [f"{split}: {system} NDCG@10", "MRR@10", "@1"]
    languages = sorted({k[3] for k in tallies if k[0] == family and k[3] != "all"})
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for language in ["all", *languages]:
        row = [f"**{language}**" if language == "all" else language]
        for split in splits:
            for system in systems:
                row += tallies.get((family, system, split, language), Tally()).cells()
        lines.append("| " + " | ".join(row) + " |")
    counts = ", ".join(
        f"{split} {tallies[(family, 'codesift', split, 'all')].n}" for split in splits
    )
    return [f"{counts} questions.", "", *lines]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--family", choices=(*FAMILIES, "all"), default="all")
    parser.add_argument("--split", choices=("tuning", "held-out", "both"), default="tuning")
    parser.add_argument("--per-corpus", type=int, default=25)
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--peer", action="store_true", help="also score semble 0.7.0")
    parser.add_argument("--misses", action="store_true", help="print codesift's misses")
    parser.add_argument("--write", action="store_true", help="write the section of --out")
    parser.add_argument("--out", type=Path, default=quality.DEFAULT_OUT)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    families = FAMILIES if args.family == "all" else (args.family,)
    systems = ["codesift", *(["peer"] if args.peer else [])]
    tallies: Tallies = defaultdict(Tally)
    corpora: set[str] = set()
    for corpus, split in corpus_names(args.split):
        db = DB_DIR / f"quality-{corpus}.db"
        if not db.is_file():
            quality.log(f"{corpus}: no index at {db} (run bench/quality.py first); skipped")
            continue
        for family in families:
            questions = QUESTIONS[family](corpus, db, args.per_corpus)
            if not questions:
                continue
            corpora.add(corpus)
            pages = {"codesift": codesift_pages(db, questions, args.top_k)}
            if args.peer:
                pages["peer"] = peer_pages(corpus, family, questions, args.top_k)
            for system in systems:
                for q, page in zip(questions, pages[system], strict=True):
                    for language in (q.language, "all"):
                        tallies[(family, system, split, language)].add(page, q.targets, args.top_k)
                    hit = quality.score_results(page, q.targets, args.top_k).first_hit
                    if args.misses and system == "codesift" and hit != 1:
                        quality.log(
                            f"  miss {corpus} ({family}): {q.text!r} at {hit}; want "
                            f"{[t.label() for t in q.targets]}, first "
                            f"{[f'{r.path}:{r.start_line}' for r in page[:2]]}"
                        )
            quality.log(f"{corpus} ({split}, {family}): {len(questions)} questions")
    machine = quality.machine_info()
    section = [
        f"<!-- {SECTION}:begin -->",
        "## Symbol and declaration questions (`bench/symbol_questions.py`)",
        "",
        f"Run {machine['date']} at commit `{machine['commit']}`, over {len(corpora)} corpora"
        " (`tuning`: both dev sets' corpora and the generated set's train packages;"
        " `held-out`: the generated set's held-out packages). NDCG@10, MRR@10 and the share"
        " answered first."
        + (" `peer`: semble 0.7.0 as bench/peer_baseline.py runs it." if args.peer else ""),
    ]
    titles = {
        "named": "Symbols named like their file: the question is a type's (or a command's)"
        " name, the target the file named after it (any result in it counts).",
        "file": "Files asked for by name: a file's base name when no other file has it,"
        " else its last two path components; the target is the file.",
        "asked": 'Names asked about: the question is "what does NAME do" for a function'
        " or method whose compound name is defined once in its corpus; the target is its"
        " lines.",
        "declaration": "Declarations: the question is a function's or method's first"
        " signature line, found once in its corpus; the target is its lines.",
        "line": "Lines of code: the question is a line pasted as it is (30-100 characters,"
        " three identifiers or more, no comment, found once in its corpus); the target"
        " is that line.",
        "message": "Messages: the question is a string literal of four words or more"
        " (20-80 characters, no escape or placeholder, found once in its corpus), asked"
        " in quotes as an error or log message is; the target is its line.",
        "pasted": "Pasted messages: the `message` family's messages without their quotes,"
        " as a message copied from a terminal or a log is.",
        "formatted": "Filled-in messages: a string literal with placeholders (`%s`, `{}`,"
        " `${x}`...) and four words or more of its own, found once in its corpus, its"
        " placeholders filled with values and pasted without quotes; the target is its"
        " line.",
        "logged": "Log lines: the `pasted` and `formatted` families' messages after a"
        " timestamp, a level and a logger's name, as a log shows them; the target is the"
        " message's line.",
        "location": "Stack frames: a line inside a function or method, as the"
        " language's tools print its location (Python's `File ..., line N, in name`, a"
        " JVM frame, Go's `path:N +0x1d`, JavaScript's `at name (path:N:13)`...); the"
        " target is that line.",
        "trace": "Traces: the `location` family's frame as the innermost of a whole trace"
        " (its header, a library's frame outside the corpus, another file's function"
        " outermost), in the language's order; the target is the innermost frame's"
        " line.",
    }
    for family in families:
        section += [
            "",
            f"### {family}",
            "",
            titles[family],
            "",
            *family_table(tallies, family, systems),
        ]
    section += [f"<!-- {SECTION}:end -->", ""]
    print("\n".join(section))
    figures = {"|".join(key): t.cells() for key, t in sorted(tallies.items())}
    if args.write:
        quality.SECTION = SECTION
        quality.write_section(args.out, "\n".join(section))
        write_results(SECTION, figures, machine_info=machine)
    (DB_DIR.parent / "symbol_questions-last.json").write_text(
        json.dumps(figures, indent=1) + "\n", encoding="utf-8"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
