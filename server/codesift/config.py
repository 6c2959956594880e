"""Settings: dataclasses with defaults, loaded from a workspace file and overridden
by the CLI or the editor.

Sources, later ones win: built-in defaults, `<root>/.codesift.toml`, explicit
overrides (CLI flags, LSP initializationOptions). An invalid value raises
`ConfigError` naming the key, so callers can report it and fall back.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from codesift.errors import ConfigError

__all__ = [
    "CONFIG_FILE_NAME",
    "DEFAULT_EXCLUDED_DIRS",
    "DEFAULT_OUTPUT_DIRS",
    "RERANK_PROVIDERS",
    "EmbeddingSettings",
    "IndexSettings",
    "RerankSettings",
    "SearchSettings",
    "Settings",
    "load_settings",
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


@dataclass(frozen=True, slots=True)
class IndexSettings:
    """What gets indexed and where the index lives."""

    # Database path; relative paths are taken from the workspace root.
    db_path: str = ".codesift/index.db"
    max_file_bytes: int = 1024 * 1024
    # Folder names skipped anywhere in the tree (exact names, not globs).
    excluded_dirs: tuple[str, ...] = DEFAULT_EXCLUDED_DIRS
    # Folder names skipped at the root or beside a project manifest (build output).
    output_dirs: tuple[str, ...] = DEFAULT_OUTPUT_DIRS
    # Extra gitignore-style patterns to skip, on top of .gitignore and .codesiftignore.
    exclude: tuple[str, ...] = ()
    # A line longer than this marks a file as minified / generated.
    minified_line_chars: int = 2000
    # Code chunks longer than this are split into parts that repeat the header.
    max_chunk_lines: int = 80
    max_chunk_chars: int = 4000
    # Lines per chunk for files without a grammar (YAML, SQL, ...).
    text_window_lines: int = 40
    # Processes that parse files during a large (re)index; 1 parses in-process.
    workers: int = field(default_factory=lambda: max(1, min(4, os.cpu_count() or 1)))


@dataclass(frozen=True, slots=True)
class SearchSettings:
    """Defaults for a search request."""

    top_k: int = 10
    candidate_cap: int = 300
    rrf_k: int = 60
    snippet_chars: int = 600
    symbol_threshold: float = 0.3
    # A query term found in at least this share of the code chunks is left out of
    # the lexical stream's MATCH when the query has rarer terms: bm25 gives such a
    # term little weight but visits every row it occurs in, at ~0.6 us a row
    # (0.1: lexical p95 70 -> 25 ms on python-stdlib, NDCG@10 0.766 -> 0.765; 0.05:
    # lexical p50 4.2 -> 2.2 ms, NDCG@10 0.781 -> 0.780; bench/RESULTS.md).
    lexical_max_df: float = 0.05
    weight_lexical: float = 1.0
    # Markdown sections: useful, but they outrank the code a question is about
    # when weighted like code (see bench/RESULTS.md, quality ablation).
    weight_doc: float = 0.3
    weight_symbol: float = 1.0
    weight_vector: float = 1.0
    # Code-aware ranking priors (retrieval/ranking.py), switchable for ablation.
    prior_definition: bool = True
    prior_tests: bool = True
    # Off: with the vector stream it cost NDCG on four of five corpora (0.766 overall
    # without it, 0.755 with it; bench/RESULTS.md, quality ablation).
    prior_path: bool = False
    # A chunk gains this much of the scores of the next best chunks of its file: a
    # file where several chunks match is more likely what the question is about.
    file_evidence: float = 0.2
    # Each further result from a file already shown counts this much less (1: off),
    # so a page covers more files (both measured in bench/RESULTS.md, quality).
    file_diversity: float = 0.3


@dataclass(frozen=True, slots=True)
class EmbeddingSettings:
    """On-device embeddings for the vector stream."""

    enabled: bool = True
    # Layers that get vectors. Summaries (name, signature, doc sentence, calls) are
    # short and cheap to embed; code bodies cost ~5x more per chunk on a CPU.
    layers: tuple[str, ...] = ("summary", "doc")
    # Tokens the model reads per chunk; longer text is truncated.
    max_tokens: int = 256
    batch_size: int = 32
    # Where the assembled model folder lives (default: ~/.cache/codesift).
    cache_dir: str = ""
    # The language server keeps a copy of the vectors in memory (~440 bytes each) and
    # searches it instead of sqlite-vec (retrieval/vector_index.py); one-shot CLI
    # searches always ask sqlite-vec.
    in_memory: bool = True
    # Queries are embedded by an int8 copy of the model on one thread (~4 ms instead
    # of ~6-7 ms, built once in the model folder; embedding/query_model.py); false
    # embeds them with the batch model, as the chunks are.
    quantized_queries: bool = True


RERANK_PROVIDERS: tuple[str, ...] = ("none", "local_cross_encoder")


@dataclass(frozen=True, slots=True)
class RerankSettings:
    """The optional cross-encoder stage after fusion (retrieval/rerank.py)."""

    enabled: bool = False
    provider: str = "local_cross_encoder"
    # A folder with model.onnx and its tokenizer files, or the .onnx file itself.
    model_path: str = ""
    # Skip the stage when fusion found fewer candidates than this.
    threshold: int = 50
    # How many of the best fused results the cross-encoder rescores.
    candidates: int = 50


@dataclass(frozen=True, slots=True)
class Settings:
    index: IndexSettings = field(default_factory=IndexSettings)
    search: SearchSettings = field(default_factory=SearchSettings)
    embedding: EmbeddingSettings = field(default_factory=EmbeddingSettings)
    rerank: RerankSettings = field(default_factory=RerankSettings)


# Settings that are fractions.
_AT_MOST_ONE = frozenset(
    {"search.symbol_threshold", "search.file_diversity", "search.lexical_max_df"}
)


def _coerce(section: str, name: str, current: Any, value: Any) -> Any:
    key = f"{section}.{name}"
    if isinstance(current, bool):
        if not isinstance(value, bool):
            raise ConfigError(f"{key} must be true or false, got {value!r}")
        return value
    if isinstance(current, int):
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{key} must be an integer, got {value!r}")
        if value <= 0:
            raise ConfigError(f"{key} must be positive, got {value}")
        return value
    if isinstance(current, float):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(f"{key} must be a number, got {value!r}")
        if value < 0:
            raise ConfigError(f"{key} must not be negative, got {value}")
        if key in _AT_MOST_ONE and value > 1:
            raise ConfigError(f"{key} must be between 0 and 1, got {value}")
        return float(value)
    if isinstance(current, tuple):
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{key} must be a list of strings, got {value!r}")
        return tuple(value)
    if isinstance(current, str):
        if not isinstance(value, str) or not value:
            raise ConfigError(f"{key} must be a non-empty string, got {value!r}")
        return value
    raise ConfigError(f"{key} cannot be set")  # pragma: no cover - every field is typed above


def _apply(base: Any, section: str, values: dict[str, Any]) -> Any:
    known = {f.name: f for f in fields(base)}
    changes: dict[str, Any] = {}
    for name, value in values.items():
        if name not in known:
            raise ConfigError(f"unknown setting {section}.{name}")
        changes[name] = _coerce(section, name, getattr(base, name), value)
    return replace(base, **changes)


def merge_settings(settings: Settings, overrides: dict[str, Any]) -> Settings:
    """Apply a nested mapping like {"index": {"max_file_bytes": 10}} to `settings`."""
    index, search, embedding = settings.index, settings.search, settings.embedding
    rerank = settings.rerank
    for section, values in overrides.items():
        if not isinstance(values, dict):
            raise ConfigError(f"setting section {section!r} must be a table")
        if section == "index":
            index = _apply(index, section, values)
        elif section == "search":
            search = _apply(search, section, values)
        elif section == "embedding":
            embedding = _apply(embedding, section, values)
        elif section == "rerank":
            rerank = _apply(rerank, section, values)
            if rerank.provider not in RERANK_PROVIDERS:
                raise ConfigError(
                    f"rerank.provider must be one of {', '.join(RERANK_PROVIDERS)}, "
                    f"got {rerank.provider!r}"
                )
        else:
            raise ConfigError(f"unknown setting section {section!r}")
    return Settings(index=index, search=search, embedding=embedding, rerank=rerank)


def load_settings(root: Path, overrides: dict[str, Any] | None = None) -> Settings:
    """Defaults, then `<root>/.codesift.toml`, then `overrides`."""
    settings = Settings()
    config_file = root / CONFIG_FILE_NAME
    if config_file.is_file():
        try:
            data = tomllib.loads(config_file.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{config_file}: {exc}") from exc
        settings = merge_settings(settings, data)
    if overrides:
        settings = merge_settings(settings, overrides)
    return settings
