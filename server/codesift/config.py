"""Settings: one declarative options tree, one set of defaults, one validation.

The tree is `Settings`: frozen dataclasses, one per `.codesift.toml` section, whose
field defaults are the only defaults codesift has (the CLI, the language server,
the MCP server and the search request all read them from here). A field's
`metadata` holds its limits (`Limits`: a range, the allowed values, whether a
string may be empty); docs/configuration.md has a table of every setting that a
test checks against these fields.

Every front end maps its own input onto the tree as a nested mapping,
`{"search": {"top_k": 20}, ...}`: the workspace's `.codesift.toml`, the language
server's initializationOptions and didChangeConfiguration (lsp/options.py). Later
sources win: built-in defaults, `<root>/.codesift.toml`, then the overrides.

`check_settings` is the one validation pass: it checks each value on its own
(type by the cattrs converter, then its limits) and reports every invalid one with
its dotted key, leaving it at its default. The strict entry points
(`load_settings`, `merge_settings`: the CLI and the MCP server) raise one
`ConfigError` naming every problem; the lenient ones (`resolve_settings`,
`merge_settings_leniently`: the language server) return the problems for the
client to show and apply the valid values.
"""

from __future__ import annotations

import functools
import math
import os
import tomllib
import typing
from collections.abc import Iterator, Mapping
from dataclasses import MISSING, Field, dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codesift.errors import ConfigError

if TYPE_CHECKING:
    import cattrs

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
    "Problem",
    "RerankSettings",
    "SearchSettings",
    "Setting",
    "Settings",
    "check_fields",
    "check_settings",
    "check_value",
    "converter",
    "limits",
    "load_settings",
    "merge_settings",
    "merge_settings_leniently",
    "resolve_settings",
    "setting_fields",
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
    # ... fused at this weight (fitted; with vectors it does not run: bench/RESULTS.md).
    weight_feedback: float = field(default=0.9, metadata=_NOT_NEGATIVE)
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


@dataclass(frozen=True, slots=True)
class Setting:
    """One leaf of an options dataclass: its dotted key, type, default and limits."""

    key: str
    name: str
    type: Any
    default: Any
    limits: Limits


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _default(spec: Field[Any]) -> Any:
    if spec.default_factory is not MISSING:
        return spec.default_factory()
    return spec.default


def _leaves(cls: type, prefix: str) -> Iterator[Setting]:
    hints = _hints(cls)
    for spec in fields(cls):
        if spec.metadata.get("internal"):
            continue
        yield Setting(
            f"{prefix}{spec.name}",
            spec.name,
            hints[spec.name],
            _default(spec),
            spec.metadata.get("limits", _NO_LIMITS),
        )


def _section_class(name: str) -> type:
    return _LIST_SECTIONS.get(name) or _hints(Settings)[name]


def setting_fields(cls: type = Settings) -> list[Setting]:
    """Every setting of the tree rooted at `cls`, as dotted keys (`search.top_k`,
    `collections[].name`), in declaration order; the sections of `Settings` are
    walked into."""
    if cls is Settings:
        return [
            leaf
            for section in fields(Settings)
            for leaf in _leaves(
                _section_class(section.name),
                f"{section.name}[]." if section.name in _LIST_SECTIONS else f"{section.name}.",
            )
        ]
    return list(_leaves(cls, ""))


# -- the converter -----------------------------------------------------------------------
#
# cattrs structures the tree from plain mappings and unstructures it back. Its own
# hooks for primitives are lenient (int("10"), str(3), bool(1)); a setting must have
# the type it is documented with, so these hooks accept exactly that type (an int
# where a number is asked for) and say what was expected.


def _bool(value: Any, _: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"must be true or false, got {value!r}")
    return value


def _int(value: Any, _: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"must be an integer, got {value!r}")
    return value


def _float(value: Any, _: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"must be a number, got {value!r}")
    return float(value)


def _str(value: Any, _: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"must be a string, got {value!r}")
    return value


def _strings(value: Any, _: Any) -> tuple[str, ...]:
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"must be a list of strings, got {value!r}")
    return tuple(value)


@functools.cache
def converter() -> cattrs.Converter:
    """The converter of every options dataclass (imported on first use: a CLI run
    without a `.codesift.toml` or overrides never needs it)."""
    import cattrs

    conv = cattrs.Converter(forbid_extra_keys=True)
    conv.register_structure_hook(bool, _bool)
    conv.register_structure_hook(int, _int)
    conv.register_structure_hook(float, _float)
    conv.register_structure_hook(str, _str)
    conv.register_structure_hook_func(lambda t: t == tuple[str, ...], _strings)
    return conv


# -- the validation ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Problem:
    """An invalid value (or unknown key) and why; `key` is dotted (`search.top_k`)."""

    key: str
    message: str
    unknown: bool = False  # a key the tree does not have (rather than a bad value)

    def __str__(self) -> str:
        return self.message


def _number_problem(value: float, lim: Limits, integer: bool) -> str | None:
    low, high = lim.minimum, lim.maximum
    shown = [None if b is None else (int(b) if integer else b) for b in (low, high)]
    if low is not None and high is not None and not low <= value <= high:
        return f"must be between {shown[0]} and {shown[1]}, got {value}"
    if low is not None and high is None and value < low:
        if low == 1 and integer:
            return f"must be positive, got {value}"
        if low == 0:
            return f"must not be negative, got {value}"
        return f"must be at least {shown[0]}, got {value}"
    if high is not None and low is None and value > high:
        return f"must be at most {shown[1]}, got {value}"
    return None


def _limit_problem(value: Any, lim: Limits) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return _number_problem(value, lim, isinstance(value, int))
    if isinstance(value, str):
        if lim.choices and value not in lim.choices:
            return f"must be one of {', '.join(lim.choices)}, got {value!r}"
        if not value and not lim.empty:
            return "must be a non-empty string, got ''"
        return None
    if lim.choices:
        wrong = [v for v in value if v not in lim.choices]
        if wrong:
            return f"must list only {', '.join(lim.choices)}, got {list(value)!r}"
    return None


def check_value(setting: Setting, value: Any) -> tuple[Any, str | None]:
    """`value` structured to the setting's type, or a message naming its key."""
    try:
        structured = converter().structure(value, setting.type)
    except (TypeError, ValueError) as exc:
        return None, f"{setting.key} {exc}"
    problem = _limit_problem(structured, setting.limits)
    return structured, None if problem is None else f"{setting.key} {problem}"


def check_fields(
    cls: type,
    values: Mapping[str, Any],
    *,
    prefix: str = "",
    names: Mapping[str, str] | None = None,
) -> tuple[dict[str, Any], list[Problem]]:
    """The valid values among `values` for the options dataclass `cls`, by field name,
    and a problem for every unknown key and invalid value. `names` maps field names
    to the keys a front end uses instead (`quiet_ms` to the editor's `quietMs`)."""
    rename = names or {}
    by_key = {rename.get(s.name, s.name): s for s in _leaves(cls, prefix)}
    valid: dict[str, Any] = {}
    problems: list[Problem] = []
    for key, value in values.items():
        setting = by_key.get(key)
        if setting is None:
            problems.append(Problem(f"{prefix}{key}", f"unknown setting {prefix}{key}", True))
            continue
        shown = replace(setting, key=f"{prefix}{key}")
        structured, problem = check_value(shown, value)
        if problem is None:
            valid[setting.name] = structured
        else:
            problems.append(Problem(shown.key, problem))
    return valid, problems


def _check_list_section(
    section: str, cls: type, items: Any
) -> tuple[list[dict[str, Any]], list[Problem]]:
    """The valid items of an array-of-tables section (`[[collections]]`): each must be
    a table with every non-empty-required key set and a name no earlier item has."""
    if not isinstance(items, list | tuple):
        return [], [Problem(section, f"{section} must be an array of tables ([[{section}]])")]
    valid: list[dict[str, Any]] = []
    problems: list[Problem] = []
    names: set[str] = set()
    required = [s.name for s in _leaves(cls, "") if not s.limits.empty]
    for i, item in enumerate(items):
        prefix = f"{section}[{i}]."
        if not isinstance(item, Mapping):
            problems.append(Problem(f"{section}[{i}]", f"{section}[{i}] must be a table"))
            continue
        good, bad = check_fields(cls, item, prefix=prefix)
        problems.extend(bad)
        missing = [k for k in required if k not in item]
        for key in missing:
            problems.append(Problem(f"{prefix}{key}", f"{prefix}{key} is required"))
        if bad or missing:
            continue
        name = str(good.get("name", ""))
        if name in names:
            problems.append(Problem(f"{prefix}name", f"{prefix}name {name!r} is listed twice"))
            continue
        names.add(name)
        valid.append(good)
    return valid, problems


def check_settings(raw: Mapping[str, Any]) -> tuple[dict[str, Any], list[Problem]]:
    """The one validation pass over a nested mapping like `.codesift.toml`'s
    (`{"search": {"top_k": 20}}`): its valid values, by section, and a problem for
    every unknown section or key and every invalid value (each checked on its own).
    A list section (`collections`) maps to its list of valid items."""
    sections = {s.name: _hints(Settings)[s.name] for s in fields(Settings)}
    valid: dict[str, Any] = {}
    problems: list[Problem] = []
    for section, values in raw.items():
        cls = sections.get(section)
        if section in _LIST_SECTIONS:
            items, bad = _check_list_section(section, _LIST_SECTIONS[section], values)
            if items or not bad:
                valid[section] = items
            problems.extend(bad)
        elif cls is None:
            problems.append(Problem(str(section), f"unknown setting section {section!r}", True))
        elif not isinstance(values, Mapping):
            problems.append(Problem(section, f"setting section {section!r} must be a table"))
        else:
            good, bad = check_fields(cls, values, prefix=f"{section}.")
            if good:
                valid[section] = good
            problems.extend(bad)
    return valid, problems


def merge_settings_leniently(
    settings: Settings, overrides: Mapping[str, Any]
) -> tuple[Settings, list[Problem]]:
    """`settings` with the valid values of `overrides` applied, and the problems of
    the others (which keep the value they had)."""
    valid, problems = check_settings(overrides)
    if not valid:
        return settings, problems
    conv = converter()
    tree: dict[str, Any] = conv.unstructure(settings)
    for section, values in valid.items():
        if section in _LIST_SECTIONS:
            # Items of a later source replace the earlier ones of the same name.
            by_name = {item["name"]: item for item in tree[section]}
            by_name.update({item["name"]: {**_defaults_of(section), **item} for item in values})
            tree[section] = list(by_name.values())
        else:
            tree[section] = {**tree[section], **values}
    return conv.structure(tree, Settings), problems


def _defaults_of(section: str) -> dict[str, Any]:
    defaults: dict[str, Any] = converter().unstructure(_LIST_SECTIONS[section]())
    return defaults


def merge_settings(settings: Settings, overrides: Mapping[str, Any]) -> Settings:
    """Apply a nested mapping like {"index": {"max_file_bytes": 10}} to `settings`;
    ConfigError naming every invalid value."""
    merged, problems = merge_settings_leniently(settings, overrides)
    if problems:
        raise ConfigError("; ".join(p.message for p in problems))
    return merged


def _read_file(root: Path) -> dict[str, Any] | None:
    """`<root>/.codesift.toml` as a mapping, None without one; ConfigError (one line,
    naming the file) when it is not valid TOML."""
    config_file = root / CONFIG_FILE_NAME
    if not config_file.is_file():
        return None
    try:
        return tomllib.loads(config_file.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{config_file}: {exc}") from exc


def load_settings(root: Path, overrides: Mapping[str, Any] | None = None) -> Settings:
    """Defaults, then `<root>/.codesift.toml`, then `overrides`; ConfigError for a
    malformed file or any invalid value (the CLI's exit 2)."""
    settings = Settings()
    data = _read_file(root)
    if data:
        try:
            settings = merge_settings(settings, data)
        except ConfigError as exc:
            raise ConfigError(f"{root / CONFIG_FILE_NAME}: {exc}") from exc
    if overrides:
        settings = merge_settings(settings, overrides)
    return settings


def resolve_settings(
    root: Path, overrides: Mapping[str, Any] | None = None
) -> tuple[Settings, list[str]]:
    """As `load_settings`, but nothing fails: a malformed `.codesift.toml` is skipped
    and an invalid value keeps its default; each is reported in the messages."""
    settings = Settings()
    messages: list[str] = []
    try:
        data = _read_file(root)
    except ConfigError as exc:
        messages.append(f"{exc}; using the defaults")
        data = None
    if data:
        settings, problems = merge_settings_leniently(settings, data)
        file = root / CONFIG_FILE_NAME
        messages.extend(f"{file}: {p.message}; using the default" for p in problems)
    if overrides:
        settings, problems = merge_settings_leniently(settings, overrides)
        messages.extend(f"{p.message}; using the default" for p in problems)
    return settings, messages
