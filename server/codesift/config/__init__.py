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

from codesift.config.loading import (
    Problem,
    Setting,
    check_fields,
    check_settings,
    check_value,
    converter,
    load_settings,
    merge_settings,
    merge_settings_leniently,
    resolve_settings,
    setting_fields,
)
from codesift.config.schema import (
    CONFIG_FILE_NAME,
    DEFAULT_EXCLUDED_DIRS,
    DEFAULT_OUTPUT_DIRS,
    EMBEDDABLE_LAYERS,
    EMBEDDING_MODELS,
    RERANK_PROVIDERS,
    CollectionSettings,
    EmbeddingSettings,
    GraphSettings,
    IndexSettings,
    Limits,
    RerankSettings,
    SearchSettings,
    Settings,
    limits,
)

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
