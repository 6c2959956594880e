"""The settings tree: frozen dataclasses, one per `.codesift.toml` section, whose
field defaults are the only defaults codesift has, and each field's limits
(`Limits`, in its `metadata`). codesift/config/__init__.py says more."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CONFIG_FILE_NAME",
    "DEFAULT_EXCLUDED_DIRS",
    "DEFAULT_OUTPUT_DIRS",
    "EMBEDDABLE_LAYERS",
    "EMBEDDING_MODELS",
    "RERANK_PROVIDERS",
    "CollectionSettings",
    "EmbeddingSettings",
    "GraphSettings",
    "IndexSettings",
    "Limits",
    "RerankSettings",
    "SearchSettings",
    "Settings",
    "limits",
]

CONFIG_FILE_NAME = ".codesift.toml"

# Dependency, build and tool folders: never useful search results, often huge.
DEFAULT_EXCLUDED_DIRS: tuple[str, ...] = (
    ".git",
    ".hg",
    ".svn",
    ".codesift",
    "node_modules",
    "bower_components",
    "vendor",
    ".venv",
    "venv",
    "env",
    ".env",
    "__pycache__",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".tox",
    ".nox",
    ".gradle",
    ".idea",
    ".vscode",
    ".next",
    ".nuxt",
    ".cache",
    ".terraform",
    "Pods",
    "DerivedData",
    "_build",
    "deps",
    ".stack-work",
    "dist-newstyle",
    "zig-cache",
    ".zig-cache",
    "zig-out",
)

# Build output folders. Their names are also ordinary package names (Go's
# `go/build`, a `dist` module), so they are skipped only where a build puts them:
# at the workspace root, or beside a project manifest (`package.json`,
# `Cargo.toml`, `pyproject.toml`, `Makefile`...).
DEFAULT_OUTPUT_DIRS: tuple[str, ...] = ("build", "dist", "out", "target")

# The layers embedding.layers may list (embedding/vectors.py's EMBEDDED_LAYERS; the
# bare `ast` layer is never embedded).
EMBEDDABLE_LAYERS: tuple[str, ...] = ("code", "summary", "doc")

RERANK_PROVIDERS: tuple[str, ...] = ("none", "local_cross_encoder")

# The models embedding.model may name (embedding/model.py's MODELS).
EMBEDDING_MODELS: tuple[str, ...] = ("static", "minilm")


@dataclass(frozen=True, slots=True)
class Limits:
    """What values a setting accepts beyond its type: a numeric range, a closed set
    of strings (for a string, or for each item of a list), whether a string may be
    empty. `shown` is the default as documented when it is computed (workers)."""

    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[str, ...] = ()
    empty: bool = True
    shown: str = ""


_NO_LIMITS = Limits()


def limits(
    minimum: float | None = None,
    maximum: float | None = None,
    *,
    choices: tuple[str, ...] = (),
    empty: bool = True,
    shown: str = "",
) -> dict[str, Any]:
    """A field's metadata: `field(default=10, metadata=limits(1, 200))`."""
    return {"limits": Limits(minimum, maximum, choices, empty, shown)}


INDEX_BACKENDS = ("sqlite", "postgres")
_POSITIVE = limits(1)
_NOT_NEGATIVE = limits(0)
_FRACTION = limits(0, 1)


@dataclass(frozen=True, slots=True)
class IndexSettings:
    """What gets indexed and where the index lives."""

    # Database path; relative paths are taken from the workspace root.
    db_path: str = field(default=".codesift/index.db", metadata=limits(empty=False))
    max_file_bytes: int = field(default=1024 * 1024, metadata=_POSITIVE)
    # Folder names skipped anywhere in the tree (exact names, not globs).
    excluded_dirs: tuple[str, ...] = DEFAULT_EXCLUDED_DIRS
    # Folder names skipped at the root or beside a project manifest (build output).
    output_dirs: tuple[str, ...] = DEFAULT_OUTPUT_DIRS
    # Extra gitignore-style patterns to skip, on top of .gitignore and .codesiftignore.
    exclude: tuple[str, ...] = ()
    # A line longer than this marks a file as minified / generated.
    minified_line_chars: int = field(default=2000, metadata=_POSITIVE)
    # Code chunks longer than this are split into parts that repeat the header.
    max_chunk_lines: int = field(default=80, metadata=_POSITIVE)
    max_chunk_chars: int = field(default=4000, metadata=_POSITIVE)
    # Lines per chunk for files without a grammar (YAML, SQL, ...).
    text_window_lines: int = field(default=40, metadata=_POSITIVE)
    # Processes that parse files during a large (re)index; 1 parses in-process.
    workers: int = field(
        default_factory=lambda: max(1, min(4, os.cpu_count() or 1)),
        metadata=limits(1, shown="CPU count, at most 4"),
    )
    # "postgres": besides the local index, use the shared index at `dsn`
    # (docs/postgres.md): `codesift index` writes into it, the other commands
    # and the servers read from it.
    backend: str = field(default="sqlite", metadata=limits(choices=INDEX_BACKENDS))
    # libpq connection string or URI of the shared index (passwords in ~/.pgpass).
    dsn: str = ""
    # This workspace's repository key in the shared index; empty: remote slug@branch.
    repo: str = ""


@dataclass(frozen=True, slots=True)
class SearchSettings:
    """Defaults for a search request."""

    # The bounds a request's top_k and snippet_chars have (retrieval/request.py).
    top_k: int = field(default=10, metadata=limits(1, 200))
    # Results from document collections listed beside the code results (0: none).
    resource_top_k: int = field(default=3, metadata=limits(0, 50))
    candidate_cap: int = field(default=300, metadata=_POSITIVE)
    # Fusion constant, stream weights and the symbol threshold below were fitted on
    # the generated set's train split (bench/fit_ranking.py, bench/docset.py) and kept
    # where the held-out split gained and the dev sets held (bench/RESULTS.md,
    # ablation): rrf_k 60 -> 40, weight_symbol 1.0 -> 0.6, weight_feedback 0.6 -> 0.9,
    # symbol_threshold 0.3 -> 0.5 took held-out NDCG@10 0.706 -> 0.754 without vectors.
    rrf_k: int = field(default=40, metadata=_POSITIVE)
    snippet_chars: int = field(default=600, metadata=limits(80, 4000))
    # A name less similar than this to the query's identifiers is no symbol candidate
    # (near misses only crowded out lexical evidence for prose questions).
    symbol_threshold: float = field(default=0.5, metadata=_FRACTION)
    # A query term found in at least this share of the code chunks is left out of
    # the lexical stream's MATCH when the query has rarer terms: bm25 gives such a
    # term little weight but visits every row it occurs in, at ~0.6 us a row
    # (0.1: lexical p95 70 -> 25 ms on python-stdlib, NDCG@10 0.766 -> 0.765; 0.05:
    # lexical p50 4.2 -> 2.2 ms, NDCG@10 0.781 -> 0.780; bench/RESULTS.md).
    lexical_max_df: float = field(default=0.05, metadata=_FRACTION)
    weight_lexical: float = field(default=1.0, metadata=_NOT_NEGATIVE)
    # Markdown sections: useful, but they outrank the code a question is about
    # when weighted like code (see bench/RESULTS.md, quality ablation).
    weight_doc: float = field(default=0.3, metadata=_NOT_NEGATIVE)
    # A symbol query's definition leads through prior_definition, whatever this weight.
    weight_symbol: float = field(default=0.6, metadata=_NOT_NEGATIVE)
    # The symbol stream's weight for a question in words (not one identifier or
    # signature); 0 (the default): the stream does not run for them. Fitted on the
    # generated set's train split: its names matched single words of a sentence
    # (`Removes` -> `remove`, `Stops` -> `stop`) and took the first places from the
    # lexical stream's answer; NDCG@10 train 0.826 / 0.704 -> 0.863 / 0.749, held-out
    # 0.840 / 0.706 -> 0.866 / 0.743; on the dev sets, where the lexical stream finds
    # the identifiers a question names, even (-0.002 to +0.000; bench/RESULTS.md).
    weight_symbol_prose: float = field(default=0.0, metadata=_NOT_NEGATIVE)
    # Below the lexical stream's: at equal weight the vector stream's near misses tie
    # with lexical hits; 0.8 beat 0.7 and 1.0 on dev sets 1 and 2 with static and
    # with MiniLM vectors alike (bench/RESULTS.md).
    weight_vector: float = field(default=0.8, metadata=_NOT_NEGATIVE)
    # ... when its best match is a close one: with MiniLM's query vectors, the weight
    # goes from weight_vector at a cosine of 0.45 to this at 0.65 (a close match says
    # the stream understood the question; embedding/model.py, CLOSE_MATCH).
    weight_vector_close: float = field(default=1.0, metadata=_NOT_NEGATIVE)
    # Without vectors, the words that best characterise the first pass's best chunks
    # are searched too, this many of them (the feedback stream,
    # retrieval/feedback.py; 0: off) ...
    feedback_terms: int = field(default=5, metadata=limits(0, 50))
    # ... fused at this weight (fitted: bench/RESULTS.md).
    weight_feedback: float = field(default=0.9, metadata=_NOT_NEGATIVE)
    # The feedback stream ranks the first pass's best code chunk first: the added words
    # widen the question; they do not overrule what matched it best (a long chunk
    # that shares many of the added words would otherwise take the first place).
    # Generated set's train split without vectors 0.866 / 0.752 -> 0.877 / 0.769
    # (bench/RESULTS.md, ablation).
    feedback_keeps_first: bool = True
    # With vectors, the feedback stream runs too when the lexical stream's best match
    # scores at least `feedback_vectors_ratio` times its second (a chunk that says
    # what the question says: its words are worth widening), on an index of at most
    # `feedback_vectors_max_chunks` code chunks (0: never with vectors). It lifts the
    # generated set's train split with every kind of vectors (MiniLM 0.863 / 0.746 ->
    # 0.876 / 0.770) and keeps the dev sets; run for every question it lowered them
    # (MiniLM: set 1 0.799 -> 0.796, set 2 short 0.759 -> 0.747), and on dev set 1's
    # standard libraries (50,000-120,000 code chunks) it cost 0.01-0.04 and ~9 ms a
    # search (docs/notes/ranking-rules.md).
    feedback_vectors_ratio: float = field(default=1.05, metadata=_NOT_NEGATIVE)
    feedback_vectors_max_chunks: int = field(default=30_000, metadata=_NOT_NEGATIVE)
    # Its statement (the query's terms and the added words) leaves out the terms found
    # in at least this share of the code chunks, as lexical_max_df does for the
    # lexical stream's: the feedback stream's bm25 visits every row of every term it
    # scores. 0.05 -> 0.02: the bench's ten stdlib queries 11.7 -> 10.0 CPU-ms a search
    # in process; NDCG@10 without vectors set 1 0.7451 -> 0.7457, set 2 and the
    # generated set (train and held-out) unchanged (only large indexes have terms that
    # common: store/sqlite/search.py, COMMON_TERM_MIN_ROWS).
    feedback_max_df: float = field(default=0.02, metadata=_FRACTION)
    # Code-aware ranking priors (retrieval/ranking.py), switchable for ablation.
    prior_definition: bool = True
    prior_tests: bool = True
    # Query words in the file's stem lift it, for every prose query: off, as it costs
    # dev set 1 with vectors (static -0.014; bench/RESULTS.md) ...
    prior_path: bool = False
    # ... but for short prose queries (at most 5 words) only, it gains on both dev sets
    # (set 2 short +0.015 without vectors, +0.003 with MiniLM's; set 1 +0.002).
    prior_path_short: bool = True
    # For a prose query, a C/C++ header's prototype counts half when the function's
    # definition in a source file is a candidate too (the header/implementation pair).
    prior_headers: bool = True
    # A chunk gains this much of the scores of the next best chunks of its file: a
    # file where several chunks match is more likely what the question is about.
    file_evidence: float = field(default=0.2, metadata=_NOT_NEGATIVE)
    # ... except when the lexical stream's best match scores at least this many times
    # its second: one chunk that says what the question says outweighs a file's many
    # partial matches (0: file evidence always applies). Fitted on the generated
    # set's train split (bench/RESULTS.md); the file-name lift does not yield (set 2's
    # short queries lose 0.013 when it does).
    file_evidence_yield: float = field(default=1.3, metadata=_NOT_NEGATIVE)
    # Each further result from a file already shown counts this much less (1: off),
    # so a page covers more files (both measured in bench/RESULTS.md, quality).
    file_diversity: float = field(default=0.3, metadata=_FRACTION)


@dataclass(frozen=True, slots=True)
class EmbeddingSettings:
    """On-device embeddings for the vector stream."""

    enabled: bool = True
    # What computes the vectors: `static`, a token table fitted to all-MiniLM-L6-v2
    # (thousands of chunks a second, embedding/static_model.py), or `minilm`, the
    # transformer itself (~30-70 chunks a second on 2 cores).
    model: str = field(default="minilm", metadata=limits(choices=EMBEDDING_MODELS))
    # With model = "minilm": chunks without a vector first get a static one (the whole
    # index within seconds of its lexical index), which MiniLM's then replace.
    static_first: bool = True
    # Layers that get vectors. Summaries (name, signature, doc sentence, calls) are
    # short and cheap to embed; code bodies cost ~5x more per chunk on a CPU.
    layers: tuple[str, ...] = field(
        default=("summary", "doc"), metadata=limits(choices=EMBEDDABLE_LAYERS)
    )
    # Tokens the model reads per chunk; longer text is truncated.
    max_tokens: int = field(default=256, metadata=_POSITIVE)
    batch_size: int = field(default=32, metadata=_POSITIVE)
    # Where the assembled model folder lives (empty: ~/.cache/codesift).
    cache_dir: str = ""
    # The language server keeps a copy of the vectors in memory (~440 bytes each) and
    # searches it instead of sqlite-vec (retrieval/vector_index.py); one-shot CLI
    # searches always ask sqlite-vec.
    in_memory: bool = True
    # Queries are embedded by an int8 copy of the model on one thread (~4 ms instead
    # of ~6-7 ms, built once in the model folder; embedding/query_model.py); false
    # embeds them with the batch model, as the chunks are.
    quantized_queries: bool = True

    @property
    def static_tier(self) -> bool:
        """Whether the static model computes vectors first (as the model, or as
        MiniLM's first tier): they then come right after an index run."""
        return self.enabled and (self.model == "static" or self.static_first)


@dataclass(frozen=True, slots=True)
class RerankSettings:
    """The optional cross-encoder stage after fusion (retrieval/rerank.py)."""

    enabled: bool = False
    provider: str = field(default="local_cross_encoder", metadata=limits(choices=RERANK_PROVIDERS))
    # A folder with model.onnx and its tokenizer files, or the .onnx file itself.
    model_path: str = ""
    # Skip the stage when fusion found fewer candidates than this.
    threshold: int = field(default=50, metadata=_POSITIVE)
    # How many of the best fused results the cross-encoder rescores.
    candidates: int = field(default=50, metadata=_POSITIVE)


@dataclass(frozen=True, slots=True)
class CollectionSettings:
    """A document collection (`[[collections]]`): a folder of documents searched beside
    the code, with its own index shared by every workspace that lists it."""

    name: str = field(default="", metadata=limits(empty=False))
    # A folder; `~` is expanded, a relative path is relative to the workspace root.
    path: str = field(default="", metadata=limits(empty=False))
    description: str = ""
    labels: tuple[str, ...] = ()


GRAPH_GUESSES = ("apart", "hide", "show")


@dataclass(frozen=True, slots=True)
class GraphSettings:
    """How the editor shows callers and callees."""

    # Edges found by the name alone (confidence unique or guess): listed apart
    # from the others, hidden, or shown among them.
    guesses: str = field(default="apart", metadata=limits(choices=GRAPH_GUESSES))
    # Hover "who calls this": the callers' callers too (2) or only the callers (1).
    hover_depth: int = field(default=2, metadata=limits(1, 2))
    # The most callers or callees the call hierarchy and hover list for one
    # definition; past it they say how many more were left out.
    max_calls: int = field(default=1000, metadata=limits(1, 1999))


@dataclass(frozen=True, slots=True)
class Settings:
    """The options tree: one section per `.codesift.toml` table, and the list of
    document collections (`[[collections]]` array of tables)."""

    index: IndexSettings = field(default_factory=IndexSettings)
    search: SearchSettings = field(default_factory=SearchSettings)
    embedding: EmbeddingSettings = field(default_factory=EmbeddingSettings)
    rerank: RerankSettings = field(default_factory=RerankSettings)
    graph: GraphSettings = field(default_factory=GraphSettings)
    collections: tuple[CollectionSettings, ...] = ()


# The list sections of `Settings`: an array of tables, each item one dataclass; their
# keys are documented as `collections[].name`.
_LIST_SECTIONS: dict[str, type] = {"collections": CollectionSettings}


# -- the tree, walked -------------------------------------------------------------------
