"""Credentials kept out of the shared index: everyone with a grant reads its text.

`redact` replaces what looks like a secret in text written into the shared
index (chunk texts, titles, signatures, docstrings) with `REDACTED`:
the password of a URI (`postgresql://user:secret@host`), the value of a
`password` / `secret` / `token` / `api_key`-like assignment, well-known token
shapes (GitHub, GitLab, Slack, AWS access keys, OpenAI-style `sk-` keys) and
PEM private-key blocks. codesift's own settings files (`.codesift.toml`) are
not written at all (`is_settings_file`). The local index, which only its owner
reads, keeps the text as it is.
"""

from __future__ import annotations

import re

from codesift.config import CONFIG_FILE_NAME

__all__ = ["REDACTED", "REDACTION_VERSION", "is_settings_file", "redact"]

REDACTED = "«redacted»"
# Part of every file's digest: a change of the rules rewrites every file once.
REDACTION_VERSION = 1

_URI_PASSWORD = re.compile(r"(\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s:/@'\"`]+):([^\s@/'\"`]+)@")
_SECRET_NAME = (
    r"[A-Za-z0-9_.-]*(?:passw(?:or)?d|passwd|pwd|secret|token|api[_-]?key|access[_-]?key"
    r"|private[_-]?key|client[_-]?secret)[A-Za-z0-9_-]*"
)
# name = "value" / name: 'value' (any language, settings and env files).
_QUOTED_ASSIGNMENT = re.compile(
    rf"(?i)(\b{_SECRET_NAME}[\"']?\s*(?::=|=>|[:=])\s*)([\"'])([^\"'\n]{{4,}})\2"
)
# NAME=value / name: value without quotes (env files, YAML, INI, shell): a bare
# word ending the line. Not in source code, where it is an expression.
_BARE_ASSIGNMENT = re.compile(
    rf"(?im)^(\s*(?:export\s+)?{_SECRET_NAME.replace('.', '')}\s*[:=]\s*)"
    rf"([^\s\"'`$(){{}}\[\],;#]{{6,}})\s*$"
)
# name=value inside a line (a command line, a URL's query, prose).
_INLINE_ASSIGNMENT = re.compile(
    rf"(?i)(\b{_SECRET_NAME.replace('.', '')}=)([^\s\"'`$(){{}}\[\],;&#]{{4,}})"
)
# Languages whose `name = word` is code (a variable), not a setting.
_CODE_LANGUAGES = frozenset(
    "python javascript typescript tsx go rust java c cpp c_sharp csharp ruby php kotlin"
    " swift scala lua elixir haskell ocaml dart r julia perl zig objc".split()
)
_TOKENS = re.compile(
    r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}|glpat-[A-Za-z0-9_-]{20,}"
    r"|xox[abposr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|sk-[A-Za-z0-9_-]{20,})\b"
)
_PRIVATE_KEY = re.compile(
    r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----.*?(?:-----END \1PRIVATE KEY-----|\Z)", re.S
)


def redact(text: str, language: str = "") -> str:
    """`text` (of a file in `language`) with what looks like a credential
    replaced (see the module docstring)."""
    if not text:
        return text
    text = _PRIVATE_KEY.sub(lambda m: f"-----BEGIN {m.group(1)}PRIVATE KEY----- {REDACTED}", text)
    text = _URI_PASSWORD.sub(rf"\1:{REDACTED}@", text)
    text = _QUOTED_ASSIGNMENT.sub(rf"\1\2{REDACTED}\2", text)
    if language.lower() not in _CODE_LANGUAGES:
        text = _BARE_ASSIGNMENT.sub(rf"\1{REDACTED}", text)
        text = _INLINE_ASSIGNMENT.sub(rf"\1{REDACTED}", text)
    return _TOKENS.sub(REDACTED, text)


def is_settings_file(path: str) -> bool:
    """Whether `path` (relative, `/`-separated) is a codesift settings file."""
    return path.rsplit("/", 1)[-1] == CONFIG_FILE_NAME
