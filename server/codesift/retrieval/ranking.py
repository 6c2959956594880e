"""Code-aware ranking priors applied to fused scores. Pure functions on plain data.

Plain RRF over lexical and dense streams is no better than BM25 alone on code;
these priors carry the gains (each one is switchable for the ablation in
bench/quality.py):

definition   for a symbol-shaped query, the chunk that defines the symbol (an
             exact name match from the symbol stream) ranks above every chunk that
             merely uses it; a declaration in a type-stub file (`.d.ts`, `.pyi`)
             gets half the lift, so the implementation it describes comes first;
             among definitions of the same name, the one in the file named after it
             (`Widget.java`, `foo_bar.h`, `widget/mod.rs`, `App/Query.ex`) leads;
             a one-word query in kebab case (`pyenv-which`, `body-limit`) names a
             file, a script or a command: the file of that name leads; a pasted
             line of code leads where it is written as it is (the exact stream),
             a file's name or path leads to that file (the path stream)
tests        for a prose query that is not about tests (nor a literal one: a
             pasted line, a quoted text or a file's name asks where it is), test,
             example, vendored
             and generated code is demoted (test files by each language's naming
             convention, and Rust's test modules and functions inside source files),
             and so are line windows of files without a grammar, type declarations
             and interfaces
headers      for a prose query, a C/C++ header's declaration of a function whose
             definition in a source file is also a candidate counts half (the
             header/implementation pair: the question is about the code)
path         query words that name the file (its stem's identifier parts: `Filtering`
             and `Sink` in `FilteringSink.cs`) lift the result by the share of the
             query's words they cover, so a 3-word query naming a module counts more
             than a 15-word one that mentions it in passing
"""

from __future__ import annotations

import functools
import heapq
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

from codesift.retrieval.fusion import FusedCandidate
from codesift.retrieval.query import QueryAnalysis
from codesift.tokens import compact_name, module_name, split_identifier

__all__ = [
    "ChunkFeatures",
    "RankingPriors",
    "apply_priors",
    "diversify_files",
    "diversity_keys",
    "file_evidence",
    "header_twins",
    "is_declaration_path",
    "is_test_like_name",
    "is_test_like_path",
    "lexical_dominates",
    "stem_hits",
]

# Above any RRF score (at most a few times 1/61), so definitions lead.
DEFINITION_BONUS = 1.0
# Added to the definition lift of a definition whose file is named after it: under
# the symbol stream's bonus for the name's case (0.1), above its bonus for a long
# body (at most 0.04), so the file a language's convention names after the symbol
# decides between definitions of the same name in the same case.
NAMED_FILE_BONUS = 0.06
# A query of one kebab-case word (`pyenv-which`, `body-limit`): no identifier, but the
# name of a file, a script or a command.
_KEBAB_QUERY = re.compile(r"^[A-Za-z0-9_]+(?:-[A-Za-z0-9_]+)+$")
TEST_FACTOR = 0.3
# Files without a grammar (manuals, changelogs, data and config files, indexed as line
# windows) are prose themselves: for a prose query they outscore the code it is about.
TEXT_FACTOR = 0.5
# A file whose stem names every query word scores (1 + STEM_FACTOR) times its fused
# score. Multiplicative, so it reorders close candidates and never lifts a chunk the
# streams barely found; folder names are left out (a bonus for them let generic
# words like `root` or `errors` pull whole trees up: bench/RESULTS.md).
STEM_FACTOR = 0.6
# A prose query of at most this many words (of 3 letters or more) is a search-box
# query: each word weighs more, and such queries often name the file they are about
# ("reject oversized request payload" -> body-limit). The stem lift applies to them
# even with `path` off (`path_short`); in longer questions a word that happens to be
# a file's name is mostly noise (bench/RESULTS.md).
SHORT_QUERY_WORDS = 5

# Folders of tests, examples, benchmarks, vendored and generated code, in any language
# (files whose header says they were generated count as generated code too).
_TEST_DIR = (
    r"(^|/)(tests?|testing|testdata|__tests__|__mocks__|spec|specs|examples?|benchmarks?"
    r"|benches|fixtures?|vendor|third_party|generated)(/|$)"
)
# Test files by each language's naming convention. A bare `test_` prefix marks a test
# only in Python and Ruby (`test_*.py`, minitest's `test_*.rb`): elsewhere it names
# ordinary code (a Bash framework's `test_functions.bash`, a C `test_and_set.c`).
_TEST_FILE = (
    r"|(^|/)(test_[^/]*\.(py|rb)|conftest\.py|tests\.rs)$"  # Python, Ruby, Rust
    r"|_test\.[a-z]+$"  # Go, Python, C/C++ (gtest), Elixir (`_test.exs`), Ruby (minitest)
    r"|[._-](test|spec)\.[a-z]+$"  # JS/TS `*.test.*` / `*.spec.*`, Ruby `*_spec.rb`
    r"|\.bats$"  # Bash (bats)
)
_TEST_PATH = re.compile(_TEST_DIR + _TEST_FILE, re.IGNORECASE)
# JVM, .NET, Swift, PHP and Haskell test classes are `FooTest.java`, `FooTests.kt`,
# `FooSpec.scala`, `FooTests.swift`, `FooTest.php`, `FooSpec.hs`, and Kotlin keeps tests
# in source sets like `commonTest/`, `jvmTest/`: matched by case, so `Latest.java` or
# `Manifest.kt` stay code.
_TEST_CLASS_FILE = re.compile(
    r"[a-z0-9](Tests?|Specs?|Suite)\.(java|kt|kts|scala|groovy|cs|fs|vb|swift|php|hs|dart)$"
    r"|(^|/)[a-z][A-Za-z]*Test/"
)
# Type-declaration files that mirror an implementation kept elsewhere. Their doc
# comments describe every member in words, so for a prose query they outscore the code
# that does the work (a JavaScript framework's typings above its lib/): they count half,
# for prose as for a symbol's definition bonus.
_DECLARATION_FILE = re.compile(r"\.d\.[mc]?ts$|\.pyi$")
DECLARATION_FACTOR = 0.5
# Interfaces, by their language's naming convention (PHP's `FooInterface.php`, the
# .NET `IFoo.cs`, Java and Kotlin `FooInterface`): contracts whose doc comments say in
# words what their implementations do. Prose queries count them as declarations.
_INTERFACE_FILE = re.compile(r"Interface\.(php|java|kt)$|(^|/)I[A-Z][a-z]\w*\.cs$")
# ... but less than a type declaration: an interface's doc comment is often the only
# documentation of its methods (implementations say `{@inheritdoc}`), and a question
# in its words is about the contract as much as about the code behind it. Fitted on
# the generated set's train split (0.5 -> 0.7: NDCG@10 0.8627 / 0.7487 -> 0.8658 /
# 0.7519, PHP 0.761 -> 0.790; held-out unchanged; dev set 2's short queries lose
# 0.0015, and 0.8 fell below their floor of 0.74).
INTERFACE_FACTOR = 0.7
# Test code kept inside ordinary source files, by its language's naming convention:
# Rust's `mod tests` / `mod test` and its `test_` functions (dev set 2's short
# queries +0.0018, ripgrep's; the generated set's Rust: train -0.0003 on its short
# questions, held-out unchanged). (Haskell's QuickCheck
# properties, `prop_name` beside the code they check, were tried too: dev set 2 lost,
# its file-level targets count such a property as a hit.)
_TEST_NAME = {"rust": re.compile(r"^(tests?$|test_)")}
_TEST_WORDS = frozenset({"test", "tests", "testing", "unittest", "spec", "fixture", "mock"})


@dataclass(frozen=True, slots=True)
class RankingPriors:
    definition: bool = True
    tests: bool = True
    path: bool = True
    path_short: bool = True
    headers: bool = True


class ChunkFeatures(NamedTuple):
    """What the priors read of one candidate (a named tuple: a search builds one
    for each of its ~200 candidates, 0.5 us each against 2 us as a frozen
    dataclass)."""

    path: str
    symbol_score: float  # the symbol stream's raw score, 0 when it did not find it
    language: str = ""  # the file's language; "text" for files without a grammar
    # A line window: code-layer text with no definition, from a file without a
    # grammar, the leftovers of a SQL file around its tables, a file that failed to
    # parse. None: decided by the language ("text" is windows).
    window: bool | None = None
    # The file's header says a tool generated it (parsing/generated.py).
    generated: bool = False
    # A C/C++ header's declaration of a function defined in a source file among the
    # candidates (`header_twins`).
    header_twin: bool = False
    # A definition that is test code by its name (`is_test_like_name`).
    test_name: bool = False
    # How exactly the chunk holds a pasted line of code: the exact stream's raw score
    # (1 as written, 0.5 its words in its order), 0 when it did not find it.
    exact: float = 0.0
    # The chunk stands for a file the query names by its name or path: the path
    # stream's raw score, 0 when it did not find it.
    named_path: float = 0.0

    @property
    def is_window(self) -> bool:
        return self.language == "text" if self.window is None else self.window


@functools.lru_cache(maxsize=16_384)
def is_test_like_path(path: str) -> bool:
    return bool(_TEST_PATH.search(path) or _TEST_CLASS_FILE.search(path))


@functools.lru_cache(maxsize=16_384)
def is_test_like_name(name: str, language: str) -> bool:
    """Whether a definition of this (unqualified) name is test code kept in a source
    file: a Rust test module or test function."""
    pattern = _TEST_NAME.get(language)
    return pattern is not None and pattern.search(name) is not None


@functools.lru_cache(maxsize=16_384)
def is_declaration_path(path: str) -> bool:
    """A type declaration (`.d.ts`, `.pyi`) or an interface named as its language
    names interfaces."""
    return bool(_DECLARATION_FILE.search(path) or _INTERFACE_FILE.search(path))


_HEADER_FILE = re.compile(r"\.(h|hh|hpp|hxx|h\+\+)$", re.IGNORECASE)
_C_SOURCE_FILE = re.compile(r"\.(c|cc|cpp|cxx|c\+\+|m|mm)$", re.IGNORECASE)


@functools.lru_cache(maxsize=16_384)
def _c_file_kind(path: str) -> int:
    """1 for a C/C++ source file, 2 for a header, else 0."""
    return 1 if _C_SOURCE_FILE.search(path) else 2 if _HEADER_FILE.search(path) else 0


def header_twins(places: Sequence[tuple[int, str, str]]) -> set[int]:
    """Of (chunk id, path, node name) triples, the chunks in C/C++ headers whose name
    is also defined by a chunk of a C/C++ source file: header/implementation pairs."""
    defined = {name for _, path, name in places if name and _c_file_kind(path) == 1}
    if not defined:
        return set()
    return {cid for cid, path, name in places if name in defined and _c_file_kind(path) == 2}


@functools.lru_cache(maxsize=16_384)
def _stem_words(path: str) -> frozenset[str]:
    """The file name without its extensions, whole and split into identifier parts."""
    name = path.rsplit("/", 1)[-1]
    stem = name if name.startswith(".") else name.split(".", 1)[0]
    return frozenset(w for w in (stem.lower(), *split_identifier(stem)) if w)


def stem_hits(query_words: set[str], path: str) -> int:
    """Query words found in the file's stem: a whole part, or inside a part when the
    word has at least 4 letters (`filter` in `FilteringSink`); a plural `s` is
    ignored."""
    words = _stem_words(path)
    hits = 0
    for word in query_words:
        stem = word[:-1] if word.endswith("s") and len(word) > 4 else word
        if stem in words or (len(stem) >= 4 and any(stem in w for w in words)):
            hits += 1
    return hits


def _definition_lift(feat: ChunkFeatures, priors: RankingPriors, symbol: str) -> float:
    """A symbol query's bonus for the chunk that defines the symbol (half in a
    declaration file), a little more in the file named after `symbol`."""
    if not priors.definition or feat.symbol_score < 1.0:
        return 0.0
    lift = DEFINITION_BONUS * feat.symbol_score
    if symbol and module_name(feat.path) == symbol:
        lift += NAMED_FILE_BONUS
    if _DECLARATION_FILE.search(feat.path):
        lift *= DECLARATION_FACTOR
    return lift


def _prose_priors(
    score: float, feat: ChunkFeatures, priors: RankingPriors, about_tests: bool
) -> float:
    """A prose query's demotions: tests and generated code (unless the query is
    about tests), line windows, declarations, a header whose definition is a
    candidate too; applied one after the other."""
    if (
        priors.tests
        and not about_tests
        and (feat.generated or feat.test_name or is_test_like_path(feat.path))
    ):
        score *= TEST_FACTOR
    if priors.tests and feat.is_window:
        score *= TEXT_FACTOR
    if priors.tests and is_declaration_path(feat.path):
        score *= DECLARATION_FACTOR if _DECLARATION_FILE.search(feat.path) else INTERFACE_FACTOR
    if priors.headers and feat.header_twin:
        score *= DECLARATION_FACTOR
    return score


def apply_priors(
    candidates: Sequence[FusedCandidate],
    features: dict[int, ChunkFeatures],
    analysis: QueryAnalysis,
    priors: RankingPriors,
) -> list[FusedCandidate]:
    """Return the candidates rescored and re-sorted (ties on chunk id)."""
    about_tests = any(term in _TEST_WORDS for term in analysis.terms)
    prose = not analysis.symbol_like
    query_words = {t for t in analysis.terms if len(t) > 2}
    stem_lift = not analysis.literal and (
        priors.path or (priors.path_short and len(query_words) <= SHORT_QUERY_WORDS)
    )
    path_hits: dict[str, int] = {}  # candidates share paths: count each path once
    symbol = compact_name(analysis.symbol_tail)
    # The file a kebab-case query names leads, as a symbol's definition does.
    file_name = compact_name(analysis.text) if prose and _KEBAB_QUERY.match(analysis.text) else ""
    out: list[FusedCandidate] = []
    for cand in candidates:
        feat = features.get(cand.chunk_id)
        score = cand.score
        if feat is not None and not prose:
            score += _definition_lift(feat, priors, symbol)
        elif feat is not None and analysis.literal:
            if priors.definition:  # the line, or the file, as a definition is
                score += DEFINITION_BONUS * max(feat.exact, feat.named_path)
        elif feat is not None:
            if feat.exact and priors.definition:  # a pasted message, where it is raised
                score += DEFINITION_BONUS * feat.exact
            score = _prose_priors(score, feat, priors, about_tests)
            if file_name and priors.definition and module_name(feat.path) == file_name:
                score += DEFINITION_BONUS
            if query_words and stem_lift:
                hits = path_hits.get(feat.path)
                if hits is None:
                    hits = path_hits[feat.path] = stem_hits(query_words, feat.path)
                score *= 1.0 + STEM_FACTOR * hits / len(query_words)
        out.append(FusedCandidate(cand.chunk_id, score, cand.hits))
    out.sort(key=lambda c: (-c.score, c.chunk_id))
    return out


def lexical_dominates(lexical: Sequence[tuple[int, float]], ratio: float) -> bool:
    """Whether the lexical stream's best match scores `ratio` times its second or
    more (a chunk that says what the question says): file evidence then stands
    aside. False with `ratio` 0, or fewer than two matches."""
    if ratio <= 0 or len(lexical) < 2:
        return False
    best, second = lexical[0][1], lexical[1][1]
    return second > 0 and best >= ratio * second


def file_evidence(
    candidates: Sequence[FusedCandidate],
    path_of: dict[int, str],
    weight: float,
    depth: int = 3,
    evidence: Sequence[FusedCandidate] | None = None,
) -> list[FusedCandidate]:
    """Lift each candidate by the evidence of the other candidates of its file.

    A file where several chunks match a question is more likely what it is about
    than a file with one lucky chunk: each chunk gains `weight` times the scores of
    the next `depth` best chunks of its file (the best one's score is its own).
    `evidence` gives the scores the files' evidence is counted in, when not the
    candidates' own (a symbol query's definition lifts are no evidence: a file with
    several methods of the name would outrank the type the question names).
    Returns the candidates re-sorted (ties on chunk id).
    """
    if weight <= 0:
        return list(candidates)
    by_file: dict[str, list[float]] = {}
    for cand in candidates if evidence is None else evidence:
        by_file.setdefault(path_of.get(cand.chunk_id, ""), []).append(cand.score)
    support: dict[str, float] = {}
    for path, scores in by_file.items():
        scores.sort(reverse=True)
        support[path] = sum(scores[1 : depth + 1])
    out = [
        FusedCandidate(
            c.chunk_id, c.score + weight * support.get(path_of.get(c.chunk_id, ""), 0.0), c.hits
        )
        for c in candidates
    ]
    out.sort(key=lambda c: (-c.score, c.chunk_id))
    return out


def diversity_keys(path_of: dict[int, str], language_of: dict[int, str]) -> dict[int, str]:
    """What counts as one file for `diversify_files`: its path; for a file without a
    grammar, its name. Versioned copies of a manual or changelog
    (`docs/v1.7/manual.yml`, `docs/dev/manual.yml`) would otherwise fill a page with
    the same text."""
    return {
        cid: "\0" + path.rsplit("/", 1)[-1] if language_of.get(cid) == "text" else path
        for cid, path in path_of.items()
    }


def diversify_files(
    candidates: Sequence[FusedCandidate], path_of: dict[int, str], factor: float, limit: int
) -> list[FusedCandidate]:
    """Pick `limit` candidates greedily, each later result from an already chosen
    file counting `factor` times less per earlier one (1.0: plain score order).

    Each picked candidate carries the score it was picked by (its own times `factor`
    per earlier result of its file), so the page is in the order of the scores it
    shows: a result below a higher-scored one of another file says why.
    """
    if factor >= 1.0:
        return list(candidates[:limit])
    # Greedy choice with a lazy heap: an entry's key is its score discounted by the
    # file's count when it was pushed; a popped entry whose file gained results since
    # is pushed back with its new key (discounts only grow, so the first entry popped
    # with a current key is the best), ties on the lower chunk id as before.
    heap: list[tuple[float, int, int, int]] = [
        (-c.score, c.chunk_id, i, 0) for i, c in enumerate(candidates)
    ]
    heapq.heapify(heap)
    seen: dict[str, int] = {}
    out: list[FusedCandidate] = []
    while heap and len(out) < limit:
        key, chunk_id, i, count = heapq.heappop(heap)
        path = path_of.get(chunk_id, "")
        current = seen.get(path, 0)
        if current != count:
            score = candidates[i].score * factor**current
            heapq.heappush(heap, (-score, chunk_id, i, current))
            continue
        seen[path] = current + 1
        cand = candidates[i]
        out.append(cand if current == 0 else FusedCandidate(chunk_id, -key, cand.hits))
    return out
