"""Server options: initializationOptions and workspace/didChangeConfiguration.

The client sends one JSON object (for didChangeConfiguration either that object
or `{"codesift": {...}}`):

    {
      "embeddings": true,          # compute vectors in the server's background
      "watch": true,               # watch folders with watchdog
      "quietMs": 200,              # a burst of file events is indexed after this much quiet
      "maxWaitMs": 2000,           # ... or after this long while events keep coming
      "index": {...}, "search": {...},          # .codesift.toml sections, as are
      "embedding": {...}, "rerank": {...},      # these two
      "collections": [{"name": ..., "path": ..., "description": ..., "labels": [...]}]
    }

A collection's relative `path` is relative to each workspace folder.

The editor's own switches are `ServerOptions`, declared as the settings tree is
(config.py: defaults and limits on the fields, the same cattrs converter, with the
camelCase names the client uses); the sections map onto the settings tree itself.
Both go through config.py's one validation: an invalid value is reported (the
caller shows the messages with window/showMessage) and replaced by its default,
and the rest still apply. The sections override each folder's `.codesift.toml`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codesift.config import (
    Problem,
    Settings,
    check_fields,
    check_settings,
    converter,
    limits,
    resolve_settings,
)

if TYPE_CHECKING:
    import cattrs

__all__ = ["CLIENT_NAMES", "ServerOptions", "client_options", "folder_settings", "parse_options"]

# The settings tree's sections, which the client may send as they are; the list
# sections (`collections`: a list of tables) are lists.
_SECTIONS = frozenset(f.name for f in fields(Settings))
_LIST_SECTIONS = frozenset({"collections"})


@dataclass(frozen=True, slots=True)
class ServerOptions:
    embeddings: bool = True
    watch: bool = True
    quiet_ms: int = field(default=200, metadata=limits(10, 10_000))
    max_wait_ms: int = field(default=2000, metadata=limits(50, 60_000))
    # Validated setting overrides, {"index": {...}, ...}, applied on top of each
    # folder's .codesift.toml (not an option of its own: the client's sections).
    overrides: dict[str, Any] = field(default_factory=dict, metadata={"internal": True})


# Field name -> the key the client sends.
CLIENT_NAMES: dict[str, str] = {"quiet_ms": "quietMs", "max_wait_ms": "maxWaitMs"}


@functools.cache
def _converter() -> cattrs.Converter:
    """config.py's converter, with ServerOptions under the client's names."""
    from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

    conv = converter().copy()
    renames = {name: override(rename=key) for name, key in CLIENT_NAMES.items()}
    # (typed per keyword in cattrs's stubs, which a mapping of renames cannot match)
    structure_fn: Any = make_dict_structure_fn
    unstructure_fn: Any = make_dict_unstructure_fn
    conv.register_structure_hook(ServerOptions, structure_fn(ServerOptions, conv, **renames))
    conv.register_unstructure_hook(ServerOptions, unstructure_fn(ServerOptions, conv, **renames))
    return conv


def client_options(options: ServerOptions) -> dict[str, Any]:
    """`options` as the client sends them (camelCase switches, then the sections)."""
    data: dict[str, Any] = _converter().unstructure(options)
    return {**{k: v for k, v in data.items() if k != "overrides"}, **options.overrides}


def _message(problem: Problem) -> str:
    if problem.unknown:
        return f"unknown codesift option {problem.key!r} (ignored)"
    return f"codesift option {problem.message}; using the default"


def parse_options(raw: Any) -> tuple[ServerOptions, list[str]]:
    """Options from a client's JSON value, and a message per invalid value."""
    if raw is None:
        return ServerOptions(), []
    if isinstance(raw, dict) and set(raw) == {"codesift"} and isinstance(raw["codesift"], dict):
        raw = raw["codesift"]
    if not isinstance(raw, dict):
        return ServerOptions(), [f"codesift options must be an object, got {type(raw).__name__}"]
    messages: list[str] = []
    switches: dict[str, Any] = {}
    sections: dict[str, Any] = {}
    for key, value in raw.items():
        if key not in _SECTIONS:
            switches[key] = value
        elif isinstance(value, dict) or (key in _LIST_SECTIONS and isinstance(value, list)):
            sections[key] = value
        else:
            messages.append(
                f"codesift option {key} must be an object, got {value!r}; using the default"
            )
    valid, problems = check_fields(ServerOptions, switches, names=CLIENT_NAMES)
    overrides, section_problems = check_settings(sections)
    messages.extend(_message(p) for p in (*problems, *section_problems))
    client = {CLIENT_NAMES.get(name, name): value for name, value in valid.items()}
    options = _converter().structure(client, ServerOptions)
    return replace(options, overrides=overrides), messages


def folder_settings(root: Path, options: ServerOptions) -> tuple[Settings, list[str]]:
    """A folder's settings: defaults, its .codesift.toml, then the client's overrides.
    A malformed .codesift.toml is reported and skipped (defaults plus overrides); an
    invalid value in it is reported and keeps its default."""
    settings, problems = resolve_settings(root, options.overrides)
    if not options.embeddings:
        settings = replace(settings, embedding=replace(settings.embedding, enabled=False))
    return settings, problems
