"""Server options: initializationOptions and workspace/didChangeConfiguration.

The client sends one JSON object (for didChangeConfiguration either that object
or `{"codesift": {...}}`):

    {
      "embeddings": true,          # compute vectors in the server's background
      "watch": true,               # watch folders with watchdog
      "quietMs": 200,              # a burst of file events is indexed after this much quiet
      "maxWaitMs": 2000,           # ... or after this long while events keep coming
      "index": {...}, "search": {...},          # .codesift.toml sections, as are
      "embedding": {...}, "rerank": {...}       # these two
    }

Every value is checked on its own: an invalid one is reported (the caller shows
the messages with window/showMessage) and replaced by its default, and the rest
still apply. The `index`/`search`/`embedding`/`rerank` sections override each
folder's `.codesift.toml`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from codesift.config import Settings, load_settings, merge_settings
from codesift.errors import ConfigError

__all__ = ["ServerOptions", "folder_settings", "parse_options"]

_SECTIONS = ("index", "search", "embedding", "rerank")


@dataclass(frozen=True, slots=True)
class ServerOptions:
    embeddings: bool = True
    watch: bool = True
    quiet_ms: int = 200
    max_wait_ms: int = 2000
    # Validated setting overrides, {"index": {...}, ...}, applied on top of each
    # folder's .codesift.toml.
    overrides: dict[str, dict[str, Any]] = field(default_factory=dict)


_FLAGS = {"embeddings": "embeddings", "watch": "watch"}
_MILLIS = {"quietMs": ("quiet_ms", 10, 10_000), "maxWaitMs": ("max_wait_ms", 50, 60_000)}


def parse_options(raw: Any) -> tuple[ServerOptions, list[str]]:
    """Options from a client's JSON value, and a message per invalid value."""
    problems: list[str] = []
    if raw is None:
        return ServerOptions(), problems
    if isinstance(raw, dict) and set(raw) == {"codesift"} and isinstance(raw["codesift"], dict):
        raw = raw["codesift"]
    if not isinstance(raw, dict):
        return ServerOptions(), [f"codesift options must be an object, got {type(raw).__name__}"]
    values: dict[str, Any] = {}
    overrides: dict[str, dict[str, Any]] = {}
    for key, value in raw.items():
        if key in _FLAGS:
            if isinstance(value, bool):
                values[_FLAGS[key]] = value
            else:
                problems.append(f"codesift option {key} must be true or false, got {value!r}")
        elif key in _MILLIS:
            name, low, high = _MILLIS[key]
            if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
                values[name] = value
            else:
                problems.append(
                    f"codesift option {key} must be an integer from {low} to {high}, got {value!r}"
                )
        elif key in _SECTIONS:
            if not isinstance(value, dict):
                problems.append(f"codesift option {key} must be an object, got {value!r}")
                continue
            for name, setting in value.items():
                try:  # one setting at a time, so a bad one does not discard the others
                    merge_settings(Settings(), {key: {name: setting}})
                except ConfigError as exc:
                    problems.append(f"codesift option {exc}; using the default")
                    continue
                overrides.setdefault(key, {})[name] = setting
        else:
            problems.append(f"unknown codesift option {key!r} (ignored)")
    return ServerOptions(**values, overrides=overrides), [
        p if p.endswith("(ignored)") or p.endswith("default") else f"{p}; using the default"
        for p in problems
    ]


def folder_settings(root: Path, options: ServerOptions) -> tuple[Settings, list[str]]:
    """A folder's settings: defaults, its .codesift.toml, then the client's overrides.
    A broken .codesift.toml is reported and skipped (defaults plus overrides)."""
    problems: list[str] = []
    try:
        settings = load_settings(root)
    except ConfigError as exc:
        problems.append(f"{root}: {exc}; using the defaults")
        settings = Settings()
    if options.overrides:
        settings = merge_settings(settings, options.overrides)
    if not options.embeddings:
        settings = merge_settings(settings, {"embedding": {"enabled": False}})
    return settings, problems
