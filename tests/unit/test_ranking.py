"""Ranking priors on plain data."""

from __future__ import annotations

import random

import pytest

from codesift.retrieval.fusion import FusedCandidate
from codesift.retrieval.query import analyze_query
from codesift.retrieval.ranking import (
    ChunkFeatures,
    RankingPriors,
    apply_priors,
    diversify_files,
    diversity_keys,
    file_evidence,
    header_twins,
    is_declaration_path,
    is_test_like_name,
    is_test_like_path,
    lexical_dominates,
    stem_hits,
)

ALL = RankingPriors()
NONE = RankingPriors(definition=False, tests=False, path=False, path_short=False, headers=False)


def ranked(
    features: dict[int, ChunkFeatures], scores: dict[int, float], query: str, priors: RankingPriors
) -> list[int]:
    candidates = [FusedCandidate(cid, score) for cid, score in scores.items()]
    return [c.chunk_id for c in apply_priors(candidates, features, analyze_query(query), priors)]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("tests/test_billing.py", True),
        ("pkg/test_util.py", True),
        ("net/http/server_test.go", True),
        ("src/app.spec.ts", True),
        ("vendor/golang.org/x/net/http2.go", True),
        ("examples/demo.rs", True),
        ("pkg/testing.py", False),
        ("src/contest/score.py", False),
        ("billing/charges.py", False),
        # A `test_` prefix marks a test in Python only: a Bash framework's library is code.
        ("libexec/test_functions.bash", False),
        ("src/test_and_set.c", False),
        ("conftest.py", True),
        ("library/std/src/sync/tests.rs", True),
        ("test/helpers.bats", True),
        ("spec/sidekiq/client_spec.rb", True),
        ("db/version_set_test.cc", True),
        # JVM, .NET, Swift and PHP test classes by case; Kotlin test source sets.
        ("retrofit/src/main/java/retrofit2/RetrofitTest.java", True),
        ("src/Serilog.Tests/LoggerTests.cs", True),
        ("core/src/main/kotlin/org/koin/core/ModuleSpec.kt", True),
        ("core/koin-core/src/commonTest/kotlin/Module.kt", True),
        ("core/koin-core/src/commonMain/kotlin/Module.kt", False),
        ("src/main/java/org/acme/Latest.java", False),
        ("src/main/kotlin/Manifest.kt", False),
        ("Sources/ArgumentParser/Parsing/ArgumentSet.swift", False),
    ],
)
def test_test_like_paths(path: str, expected: bool) -> None:
    assert is_test_like_path(path) is expected


def test_definition_of_a_symbol_query_leads() -> None:
    features = {
        1: ChunkFeatures("tests/test_pool.py", 0.6),
        2: ChunkFeatures("multiprocessing/pool.py", 1.5),
        3: ChunkFeatures("multiprocessing/pool.py", 0.0),
    }
    scores = {1: 0.033, 2: 0.016, 3: 0.030}
    assert ranked(features, scores, "Pool.imap_unordered", ALL)[0] == 2
    assert ranked(features, scores, "Pool.imap_unordered", NONE)[0] == 1


@pytest.mark.parametrize(
    ("query", "paths"),
    [
        # Same name, same case: the file each language names after the symbol wins.
        ("Config", ("crates/printer/src/standard.rs", "crates/regex/src/config.rs")),
        ("foo_bar", ("src/util.h", "include/foo_bar.h")),
        ("Sink", ("crates/searcher/src/lib.rs", "crates/searcher/src/sink/mod.rs")),
        ("Query", ("lib/app/repo.ex", "lib/app/query.ex")),
        ("Widget", ("src/main/java/org/Views.java", "src/main/java/org/Widget.java")),
        ("Parser", ("src/derive.rs", "src/parser/index.ts")),
    ],
)
def test_among_same_named_definitions_the_file_named_after_the_symbol_leads(
    query: str, paths: tuple[str, str]
) -> None:
    features = {1: ChunkFeatures(paths[0], 1.12), 2: ChunkFeatures(paths[1], 1.11)}
    scores = {1: 0.030, 2: 0.020}
    assert ranked(features, scores, query, ALL) == [2, 1]
    assert ranked(features, scores, query, NONE) == [1, 2]


def test_the_name_case_still_decides_before_the_file_name() -> None:
    # `Instant` asked: the class in Clock.java named as typed beats a lower-case
    # `instant` method even in Instant.java.
    features = {
        1: ChunkFeatures("java/time/Clock.java", 1.11),
        2: ChunkFeatures("java/time/Instant.java", 1.01),
    }
    assert ranked(features, {1: 0.02, 2: 0.03}, "Instant", ALL) == [1, 2]


def test_a_kebab_case_query_names_a_file() -> None:
    features = {
        1: ChunkFeatures("libexec/pyenv-help", 0.0, "bash"),
        2: ChunkFeatures("libexec/pyenv-which", 0.0, "bash"),
        3: ChunkFeatures("libexec/pyenv-which-ext", 0.0, "bash"),
    }
    scores = {1: 0.05, 2: 0.01, 3: 0.04}
    assert ranked(features, scores, "pyenv-which", ALL)[0] == 2
    assert ranked(features, scores, "pyenv-which", NONE) == [1, 3, 2]
    # Words with spaces are a question, not a file's name.
    assert ranked(features, scores, "pyenv which", ALL)[0] != 2


def test_a_symbol_querys_file_evidence_is_not_its_definition_lifts() -> None:
    # `Instant`: the class is in Instant.java; Clock.java defines several `instant()`
    # methods, each an exact name match in another case. Their definition lifts
    # must not count as the file's evidence.
    features = {
        1: ChunkFeatures("java/time/Instant.java", 1.12),
        2: ChunkFeatures("java/time/Clock.java", 1.02),
        3: ChunkFeatures("java/time/Clock.java", 1.02),
        4: ChunkFeatures("java/time/Clock.java", 1.02),
    }
    candidates = [FusedCandidate(1, 0.016), *(FusedCandidate(i, 0.02) for i in (2, 3, 4))]
    analysis = analyze_query("Instant")
    rescored = apply_priors(candidates, features, analysis, ALL)
    path_of = {cid: f.path for cid, f in features.items()}
    assert file_evidence(rescored, path_of, 0.2, evidence=candidates)[0].chunk_id == 1
    # Counted in the lifted scores, the file of many look-alikes would win.
    assert file_evidence(rescored, path_of, 0.2)[0].chunk_id != 1


def test_tests_are_demoted_for_prose_but_not_when_the_query_is_about_tests() -> None:
    features = {
        1: ChunkFeatures("tests/test_charges.py", 0.0),
        2: ChunkFeatures("billing/charges.py", 0.0),
    }
    scores = {1: 0.030, 2: 0.020}
    assert ranked(features, scores, "retry a declined card", ALL) == [2, 1]
    assert ranked(features, scores, "tests that retry a declined card", ALL) == [1, 2]
    assert ranked(features, scores, "retry a declined card", NONE) == [1, 2]


def test_plain_text_files_are_demoted_for_prose_but_not_for_a_symbol_query() -> None:
    features = {
        1: ChunkFeatures("docs/manual.yml", 0.0, "text"),
        2: ChunkFeatures("src/jv_print.c", 0.0, "c"),
    }
    scores = {1: 0.030, 2: 0.020}
    assert ranked(features, scores, "terminal colours from an environment variable", ALL) == [2, 1]
    assert ranked(features, scores, "terminal colours from an environment variable", NONE) == [1, 2]
    assert ranked(features, scores, "JQ_COLORS", ALL) == [1, 2]


def test_query_words_in_the_file_stem_lift_a_result() -> None:
    features = {
        1: ChunkFeatures("urllib/request.py", 0.0),
        2: ChunkFeatures("urllib/robotparser.py", 0.0),
    }
    # A near-tie: the stem lift breaks it, it would not overturn a real gap.
    scores = {1: 0.0200, 2: 0.0190}
    # "robot" and "parser" are both parts of robotparser
    assert ranked(features, scores, "robot parser rules for crawling", ALL) == [2, 1]
    assert ranked(features, scores, "robot parser rules for crawling", NONE) == [1, 2]


def test_ties_break_on_chunk_id_and_unknown_chunks_keep_their_score() -> None:
    scores = {5: 0.02, 3: 0.02, 9: 0.01}
    assert ranked({}, scores, "anything at all", ALL) == [3, 5, 9]


def test_folder_names_lift_nothing() -> None:
    features = {
        1: ChunkFeatures("src/other.c", 0.0),
        2: ChunkFeatures("errors/root/handler.c", 0.0),
    }
    scores = {1: 0.0200, 2: 0.0199}
    assert ranked(features, scores, "root errors handling", ALL) == [1, 2]


def test_stem_hits_count_query_words_in_the_file_name() -> None:
    words = {"filter", "events", "level", "sinks"}
    assert stem_hits(words, "src/Core/Sinks/FilteringSink.cs") == 2  # filter, sink(s)
    assert stem_hits(words, "src/Core/Sinks/Logger.cs") == 0
    assert stem_hits({"lib"}, "src/lib.rs") == 1  # short words match whole parts only
    assert stem_hits({"lib"}, "src/library.rs") == 0


def test_text_files_of_one_name_count_as_one_file_for_diversity() -> None:
    path_of = {1: "docs/v1.7/manual.yml", 2: "docs/dev/manual.yml", 3: "src/a.c", 4: "src/a.c"}
    language_of = {1: "text", 2: "text", 3: "c", 4: "c"}
    keys = diversity_keys(path_of, language_of)
    assert keys[1] == keys[2]
    assert keys[3] == keys[4] == "src/a.c"
    assert keys[1] != "manual.yml"  # never the same key as a code file's path
    candidates = [FusedCandidate(1, 0.05), FusedCandidate(2, 0.049), FusedCandidate(3, 0.03)]
    assert [c.chunk_id for c in diversify_files(candidates, keys, 0.3, 2)] == [1, 3]


def test_stem_lift_does_not_overturn_a_clear_gap() -> None:
    features = {
        1: ChunkFeatures("x509/verify.go", 0.0),
        2: ChunkFeatures("x509/root_unix.go", 0.0),
    }
    scores = {1: 0.0300, 2: 0.0250}
    assert ranked(features, scores, "verify the root certificate chain", ALL) == [1, 2]


def test_file_evidence_lifts_a_file_with_several_matching_chunks() -> None:
    # One lucky chunk in a.py against three good ones in b.py.
    candidates = [
        FusedCandidate(1, 0.030),
        FusedCandidate(2, 0.025),
        FusedCandidate(3, 0.020),
        FusedCandidate(4, 0.018),
    ]
    path_of = {1: "a.py", 2: "b.py", 3: "b.py", 4: "b.py"}
    assert [c.chunk_id for c in file_evidence(candidates, path_of, 0.0)] == [1, 2, 3, 4]
    lifted = file_evidence(candidates, path_of, 0.5)
    assert [c.chunk_id for c in lifted] == [2, 3, 4, 1]
    # chunk 2 gains half of the next best chunks of its file (0.020 + 0.018)
    assert lifted[0].score == pytest.approx(0.025 + 0.5 * 0.038)
    assert lifted[-1].score == pytest.approx(0.030)


def test_file_evidence_counts_at_most_depth_other_chunks() -> None:
    candidates = [FusedCandidate(i, 0.01) for i in range(1, 7)]
    path_of = dict.fromkeys(range(1, 7), "a.py")
    out = file_evidence(candidates, path_of, 1.0, depth=2)
    assert [c.score for c in out] == pytest.approx([0.03] * 6)


def test_diversify_files_spreads_the_page_over_files() -> None:
    candidates = [
        FusedCandidate(1, 0.05),
        FusedCandidate(2, 0.04),
        FusedCandidate(3, 0.035),
        FusedCandidate(4, 0.03),
    ]
    path_of = {1: "a.py", 2: "a.py", 3: "a.py", 4: "b.py"}
    assert [c.chunk_id for c in diversify_files(candidates, path_of, 1.0, 3)] == [1, 2, 3]
    # a.py's second chunk counts 0.02 against b.py's 0.03; its third only 0.00875
    assert [c.chunk_id for c in diversify_files(candidates, path_of, 0.5, 4)] == [1, 4, 2, 3]
    assert [c.chunk_id for c in diversify_files(candidates, path_of, 0.5, 2)] == [1, 4]
    # each result shows the score it was picked by, so the page is in score order
    assert [c.score for c in diversify_files(candidates, path_of, 0.5, 4)] == pytest.approx(
        [0.05, 0.03, 0.02, 0.00875]
    )
    assert [c.score for c in diversify_files(candidates, path_of, 1.0, 4)] == [
        0.05,
        0.04,
        0.035,
        0.03,
    ]


def _greedy_reference(
    candidates: list[FusedCandidate], path_of: dict[int, str], factor: float, limit: int
) -> list[int]:
    """The definition: repeatedly take the best discounted score, ties on lower id."""
    remaining = list(candidates)
    seen: dict[str, int] = {}
    out: list[int] = []
    while remaining and len(out) < limit:
        best = max(
            remaining,
            key=lambda c: (c.score * factor ** seen.get(path_of[c.chunk_id], 0), -c.chunk_id),
        )
        remaining.remove(best)
        seen[path_of[best.chunk_id]] = seen.get(path_of[best.chunk_id], 0) + 1
        out.append(best.chunk_id)
    return out


@pytest.mark.parametrize("seed", range(20))
def test_diversify_files_is_the_greedy_choice(seed: int) -> None:
    rng = random.Random(seed)
    candidates = [
        # Coarse scores so ties (broken on the lower chunk id) are common.
        FusedCandidate(cid, rng.randint(1, 12) / 100)
        for cid in rng.sample(range(1, 500), 60)
    ]
    path_of = {c.chunk_id: f"f{rng.randint(0, 7)}.py" for c in candidates}
    for factor in (0.0, 0.3, 0.5, 0.9):
        page = diversify_files(candidates, path_of, factor, 25)
        assert [c.chunk_id for c in page] == _greedy_reference(candidates, path_of, factor, 25)
        assert [c.score for c in page] == sorted((c.score for c in page), reverse=True)


def test_an_implementation_leads_its_type_declaration_for_a_symbol_query() -> None:
    features = {
        1: ChunkFeatures("typings/index.d.ts", 1.0),
        2: ChunkFeatures("lib/command.js", 1.0),
        3: ChunkFeatures("lib/other.js", 0.0),
    }
    # The declaration was found higher by the lexical stream; the implementation wins.
    order = ranked(features, {1: 0.03, 2: 0.02, 3: 0.025}, "Command.parseOptions", ALL)
    assert order == [2, 1, 3]
    # A declaration alone still ranks above the uses of the name.
    assert ranked({1: features[1], 3: features[3]}, {1: 0.01, 3: 0.03}, "parseOptions", ALL) == [
        1,
        3,
    ]


def test_type_declarations_are_demoted_for_prose_but_kept_for_a_symbol_query() -> None:
    features = {
        1: ChunkFeatures("lib/types/request.d.ts", 0.0, "typescript"),
        2: ChunkFeatures("lib/request.js", 0.0, "javascript"),
        3: ChunkFeatures("stubs/http.pyi", 0.0, "python"),
    }
    scores = {1: 0.030, 3: 0.029, 2: 0.020}
    assert ranked(features, scores, "order of the request lifecycle steps", ALL) == [2, 1, 3]
    assert ranked(features, scores, "order of the request lifecycle steps", NONE) == [1, 3, 2]
    assert ranked(features, scores, "lifecycle", ALL)[0] == 1  # a symbol-like word


def test_an_interface_counts_less_for_prose_but_more_than_a_type_declaration() -> None:
    features = {
        1: ChunkFeatures("Slim/Interfaces/RouteInterface.php", 0.0, "php"),
        2: ChunkFeatures("lib/types/route.d.ts", 0.0, "typescript"),
        3: ChunkFeatures("Slim/Routing/Route.php", 0.0, "php"),
    }
    # The interface and the typings were found a little higher than the implementation.
    scores = {1: 0.030, 2: 0.030, 3: 0.020}
    assert ranked(features, scores, "run the route callback", ALL) == [1, 3, 2]
    # With a wider gap the implementation still leads its interface.
    assert ranked(features, {1: 0.025, 2: 0.025, 3: 0.020}, "run the route callback", ALL) == [
        3,
        1,
        2,
    ]
    assert ranked(features, scores, "run the route callback", NONE) == [1, 2, 3]


@pytest.mark.parametrize(
    ("name", "language", "expected"),
    [
        ("tests", "rust", True),
        ("test", "rust", True),
        ("test_files_with_matches", "rust", True),
        ("matches_all", "rust", False),
        ("tests_helper_in_name", "rust", False),
        ("testing", "rust", False),
        # Only Rust keeps its tests in the files they test by name.
        ("test_util", "python", False),
        ("tests", "go", False),
        ("prop_checkShebang", "haskell", False),
    ],
)
def test_test_like_names(name: str, language: str, expected: bool) -> None:
    assert is_test_like_name(name, language) is expected


def test_rust_test_modules_in_source_files_are_demoted_for_prose() -> None:
    features = {
        1: ChunkFeatures("crates/core/flags/defs.rs", 0.0, "rust", test_name=True),
        2: ChunkFeatures("crates/core/flags/hiargs.rs", 0.0, "rust"),
    }
    scores = {1: 0.030, 2: 0.020}
    assert ranked(features, scores, "raw args to search config", ALL) == [2, 1]
    assert ranked(features, scores, "tests of raw args to search config", ALL) == [1, 2]
    assert ranked(features, scores, "raw args to search config", NONE) == [1, 2]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("lib/types/request.d.ts", True),
        ("stubs/http.pyi", True),
        ("Slim/Interfaces/RouteInterface.php", True),
        ("src/Serilog/Core/ILogEventSink.cs", True),
        ("ILogger.cs", True),
        ("src/main/java/org/acme/ConverterInterface.java", True),
        ("Slim/Routing/Route.php", False),
        ("src/Serilog/Core/Logger.cs", False),
        ("src/IO/IOStream.cs", False),  # `IO`, not an interface's `I`
        ("src/Item.cs", False),
        ("lib/request.ts", False),
    ],
)
def test_declaration_paths(path: str, expected: bool) -> None:
    assert is_declaration_path(path) is expected


def test_generated_files_are_demoted_for_prose_like_vendored_code() -> None:
    features = {
        1: ChunkFeatures("src/parser.c", 0.0, "c", generated=True),
        2: ChunkFeatures("src/compile.c", 0.0, "c"),
    }
    scores = {1: 0.030, 2: 0.020}
    assert ranked(features, scores, "report a syntax error with its column", ALL) == [2, 1]
    assert ranked(features, scores, "report a syntax error with its column", NONE) == [1, 2]
    assert ranked(features, scores, "yyparse", ALL) == [1, 2]  # a symbol query: as found


def test_short_prose_queries_lift_the_file_their_words_name() -> None:
    features = {
        1: ChunkFeatures("billing/ledger.py", 0.0, "python"),
        2: ChunkFeatures("billing/charges.py", 0.0, "python"),
    }
    scores = {1: 0.030, 2: 0.027}
    short = "retry a failed charge"
    long = "how does billing retry a failed charge after the card was declined by the bank"
    assert ranked(features, scores, short, ALL) == [2, 1]
    assert ranked(features, scores, short, RankingPriors(path=False, path_short=False)) == [1, 2]
    # A long question lifts nothing unless `path` asks for every query.
    assert ranked(features, scores, long, RankingPriors(path=False)) == [1, 2]
    assert ranked(features, scores, long, RankingPriors(path=True)) == [1, 2]  # 1 word of 7


def test_header_twins_are_header_declarations_of_functions_defined_in_sources() -> None:
    places = [
        (1, "src/builtin.h", "builtins_bind"),
        (2, "src/builtin.c", "builtins_bind"),
        (3, "include/api.h", "only_declared"),
        (4, "src/ring.hpp", "push"),
        (5, "src/ring.cc", "push"),
        (6, "src/notes.txt", ""),
    ]
    assert header_twins(places) == {1, 4}


def test_a_header_twin_counts_half_for_prose_only() -> None:
    features = {
        1: ChunkFeatures("src/builtin.h", 0.0, "c", header_twin=True),
        2: ChunkFeatures("src/builtin.c", 0.0, "c"),
    }
    scores = {1: 1.0, 2: 0.8}
    assert ranked(features, scores, "bind the builtin functions", ALL) == [2, 1]
    assert ranked(features, scores, "bind the builtin functions", NONE) == [1, 2]
    off = RankingPriors(headers=False)
    assert ranked(features, scores, "bind the builtin functions", off) == [1, 2]
    assert ranked(features, scores, "builtins_bind", ALL) == [1, 2]


def test_lexical_dominates_when_the_best_match_outscores_the_second_by_the_ratio() -> None:
    assert lexical_dominates([(1, 13.0), (2, 10.0)], 1.3)
    assert not lexical_dominates([(1, 12.9), (2, 10.0)], 1.3)


def test_lexical_dominance_is_off_at_ratio_zero_and_with_fewer_than_two_matches() -> None:
    assert not lexical_dominates([(1, 50.0), (2, 1.0)], 0.0)
    assert not lexical_dominates([(1, 50.0)], 1.3)
    assert not lexical_dominates([], 1.3)
    assert not lexical_dominates([(1, 5.0), (2, 0.0)], 1.3)  # no second score to compare
