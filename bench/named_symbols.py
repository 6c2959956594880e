#!/usr/bin/env python3
"""Symbol questions whose answer is the file named after the symbol: a measuring
stick for the convention every language has (`Widget` in `Widget.java`, `foo_bar`
in `foo_bar.h`, a Rust `Sink` in `sink.rs` or `sink/mod.rs`, `App.Query` in
`app/query.ex`, a command `pyenv-which` in `libexec/pyenv-which`).

    PYTHONPATH=server python bench/named_symbols.py [--split tuning|held-out|both]
        [--per-corpus 25] [--peer] [--write] [--out bench/RESULTS.md]

1. Corpora: both dev sets' and the generated set's (bench/docset.py), each read from
   the index bench/quality.py built for it (bench/.data/db/quality-<corpus>.db; a
   corpus without one is skipped, so run quality.py first). `tuning`: the dev sets'
   corpora and the generated set's train packages; `held-out`: the generated set's
   held-out packages, which no tuning reads (as bench/quality.py's split).
2. Questions: the types, interfaces, traits, modules and namespaces defined at a
   file's top level or inside a module or namespace, whose name, without case and
   separators, is the file's stem (or its folder's name for `mod.rs`, `index.ts`,
   `__init__.py` and the like), and the extensionless scripts whose file name has
   a hyphen (commands); not a package's own module (`__init__.py`: the question is
   about its folder). The question
   is the name as written; each name is asked once per corpus, at most
   `--per-corpus` names (sorted, then shuffled with a fixed seed).
3. Target: the file (any result in one of the files so named counts), scored with
   bench/quality.py's NDCG@10, with MRR@10 and the share answered at rank 1.
4. `--peer`: the same questions through semble 0.7.0 as bench/peer_baseline.py runs
   it (its own file walk, BM25 and ranking, no model), cached in
   bench/.data/peer-named/.

The definitions come from codesift's own index (its tree-sitter extraction picks
which names are asked); the target is a file, which any tool can return.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
from collections import defaultdict
from collections.abc import Sequence
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
from corpora import CORPUS_NAMES, DB_DIR, DEVSET2_NAMES, prepare_corpus  # noqa: E402
from docset import DOCSET_NAMES, docset_corpus, load_manifest  # noqa: E402

SEED = 20261206
SECTION = "named-symbols"
STYLE = "named"
PEER_DIR = DB_DIR.parent / "peer-named"
TYPE_KINDS = frozenset(
    "class struct interface trait enum module type protocol object record union namespace".split()
)
# File names that stand for their folder.
FOLDER_STEMS = frozenset({"mod", "index", "__init__", "init", "main", "lib", "package"})

Json = dict[str, Any]


@dataclass(frozen=True, slots=True)
class NamedQuestion:
    corpus: str
    language: str
    name: str
    files: tuple[str, ...]


def compact(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def module_name(path: str) -> str:
    """The file's stem, or its folder's name for a file that stands for it, compacted."""
    parts = path.split("/")
    stem = parts[-1] if parts[-1].startswith(".") else parts[-1].split(".", 1)[0]
    if stem.lower() in FOLDER_STEMS and len(parts) > 1:
        stem = parts[-2]
    return compact(stem)


def questions_of(corpus: str, db: Path, per_corpus: int) -> list[NamedQuestion]:
    """The corpus's named-file questions, read from its index."""
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        rows = conn.execute(
            "SELECT n.name, n.kind, n.qualified_name, f.path, f.language FROM nodes n"
            " JOIN files f ON f.id = n.file_id"
            " WHERE n.parent_id IS NULL OR n.parent_id IN"
            " (SELECT p.id FROM nodes p WHERE p.kind IN ('module', 'namespace'))"
        ).fetchall()
    finally:
        conn.close()
    files: dict[str, set[str]] = defaultdict(set)
    language: dict[str, str] = {}
    for row in rows:
        name, kind, qualified, path, lang = (str(value) for value in row)
        if kind not in TYPE_KINDS:
            continue
        if qualified == path:  # a file's own node: only commands (scripts) count
            base = path.rsplit("/", 1)[-1]
            if "." in base or "-" not in base or quality.is_test_path(path):
                continue
            name = base
        elif len(name) < 3 or compact(name) != module_name(path):
            continue
        elif kind == "module" and path.rsplit("/", 1)[-1].split(".", 1)[0] in FOLDER_STEMS:
            continue  # a package's `__init__.py`: the question is about its folder
        files[name].add(path)
        language.setdefault(name, lang)
    names = sorted(files)
    random.Random(f"{SEED}:{corpus}").shuffle(names)
    return [
        NamedQuestion(corpus, language[n], n, tuple(sorted(files[n]))) for n in names[:per_corpus]
    ]


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


def codesift_pages(db: Path, questions: Sequence[NamedQuestion], k: int) -> list[list[str]]:
    """The paths of codesift's first `k` results for each question."""
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        searcher = Searcher(conn, load_settings(db.parent).search, None)
        return [
            [r.path for r in searcher.search(SearchRequest(query=q.name, top_k=k)).results]
            for q in questions
        ]
    finally:
        conn.close()


def peer_pages(corpus: str, questions: Sequence[NamedQuestion], k: int) -> list[list[str]]:
    """semble's first `k` result paths for each question (computed once, cached)."""
    import peer_baseline

    peer_baseline.RESULT_DIRS["semble"] = PEER_DIR
    source = (
        docset_corpus(corpus) if corpus in DOCSET_NAMES else prepare_corpus(corpus, quality.log)
    )
    asked = [
        quality.DevQuery(
            corpus, q.name, "symbol", tuple(quality.Target(f) for f in q.files), style=STYLE
        )
        for q in questions
    ]
    result = peer_baseline.peer_results(quality, source, asked, k, "semble", rerun=False)
    assert result is not None
    by_query = {item["query"]: item["results"] for item in result["queries"]}
    return [[r["path"] for r in by_query.get(q.name, [])] for q in questions]


@dataclass(slots=True)
class Tally:
    n: int = 0
    ndcg: float = 0.0
    rr: float = 0.0
    first: int = 0

    def add(self, paths: Sequence[str], files: Sequence[str], k: int) -> None:
        results = [quality.RankedChunk(p, 1, 1) for p in paths]
        score = quality.score_results(results, [quality.Target(f) for f in files], k)
        self.n += 1
        self.ndcg += score.ndcg
        self.rr += score.rr
        self.first += score.first_hit == 1

    def cells(self) -> list[str]:
        if not self.n:
            return ["-", "-", "-"]
        return [f"{value / self.n:.3f}" for value in (self.ndcg, self.rr, self.first)]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
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
    systems = ["codesift", *(["peer"] if args.peer else [])]
    tallies: dict[tuple[str, str, str], Tally] = defaultdict(Tally)  # (system, split, language)
    counted: dict[str, int] = {}
    for corpus, split in corpus_names(args.split):
        db = DB_DIR / f"quality-{corpus}.db"
        if not db.is_file():
            quality.log(f"{corpus}: no index at {db} (run bench/quality.py first); skipped")
            continue
        questions = questions_of(corpus, db, args.per_corpus)
        if not questions:
            continue
        counted[corpus] = len(questions)
        pages = {"codesift": codesift_pages(db, questions, args.top_k)}
        if args.peer:
            pages["peer"] = peer_pages(corpus, questions, args.top_k)
        for system in systems:
            for q, paths in zip(questions, pages[system], strict=True):
                for key in ((system, split, q.language), (system, split, "all")):
                    tallies[key].add(paths, q.files, args.top_k)
                if args.misses and system == "codesift" and not set(paths[:1]) & set(q.files):
                    quality.log(f"  miss {corpus}: {q.name!r} -> {paths[:3]} (want {q.files})")
        quality.log(f"{corpus} ({split}): {len(questions)} questions")
    splits = [s for s in ("tuning", "held-out") if any(k[1] == s for k in tallies)]
    header = ["language"]
    for split in splits:
        for system in systems:
            header += [f"{split}: {system} NDCG@10", "MRR@10", "@1"]
    languages = sorted({k[2] for k in tallies if k[2] != "all"})
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for language in ["all", *languages]:
        row = [f"**{language}**" if language == "all" else language]
        for split in splits:
            for system in systems:
                tally = tallies.get((system, split, language), Tally())
                row += tally.cells() if tally.n else ["-", "-", "-"]
        lines.append("| " + " | ".join(row) + " |")
    counts = {s: tallies[("codesift", s, "all")].n for s in splits}
    machine = quality.machine_info()
    section = [
        f"<!-- {SECTION}:begin -->",
        "## Symbols named like their file (`bench/named_symbols.py`)",
        "",
        f"Run {machine['date']} at commit `{machine['commit']}`: "
        + ", ".join(f"{split} {n} questions" for split, n in counts.items())
        + f" over {len(counted)} corpora. Each question is a type's (or a command's) name;"
        " the target is the file named after it (any result in it counts). `tuning`: both"
        " dev sets' corpora and the generated set's train packages; `held-out`: the"
        " generated set's held-out packages."
        + (" `peer`: semble 0.7.0 as bench/peer_baseline.py runs it." if args.peer else ""),
        "",
        *lines,
        f"<!-- {SECTION}:end -->",
        "",
    ]
    print("\n".join(section))
    if args.write:
        quality.SECTION = SECTION
        quality.write_section(args.out, "\n".join(section))
    (DB_DIR.parent / "named_symbols-last.json").write_text(
        json.dumps({f"{s}|{sp}|{lang}": t.cells() for (s, sp, lang), t in tallies.items()}) + "\n",
        encoding="utf-8",
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
