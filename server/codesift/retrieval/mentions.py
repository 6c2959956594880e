"""Which code names a document mentions, and which names a code result answers to.

A document (a section of a requirement, a runbook, a schema description) mentions
code by the names developers write: a qualified name (`billing.retry.schedule`), an
identifier (`charge_card`, `RetryPolicy`), a file (`billing/retry.py`, `retry.py`)
or a table (`invoices`, written in backquotes). `mention_terms` lists those of a
text, lower-cased; `result_terms` lists what a code result may be mentioned as. A
collection records its documents' terms when it is indexed (engine/collections.py),
so each code result can list the resources that mention it.

Plain words are not mentions (a document saying "retry" mentions no code); a word
counts when it looks like code: it has an underscore, a dot or slash between
names, an inner capital, or it is written in backquotes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["mention_terms", "result_terms"]

_BACKQUOTED = re.compile(r"`([^`\n]{2,120})`")
# names joined by dots, slashes, `::` or `#`, with an optional file extension
_CODE_WORD = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|/|::|#)[A-Za-z_$][\w$]*)*")
_CAMEL = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2,}[a-z]")
MIN_TERM_CHARS = 3


def _looks_like_code(word: str) -> bool:
    return (
        "_" in word.strip("_")
        or any(sep in word for sep in (".", "/", "::", "#"))
        or bool(_CAMEL.search(word))
    )


def _with_parts(word: str) -> Iterable[str]:
    """The word, and for a qualified name or path its last part (`retry.py` of
    `billing/retry.py`, `schedule` of `billing.retry.schedule`)."""
    yield word
    for sep in ("::", "#", "/"):
        if sep in word:
            yield word.rsplit(sep, 1)[-1]
    if "." in word:
        head, _, tail = word.rpartition(".")
        yield tail
        if "/" not in word:
            yield head.rsplit(".", 1)[-1] + "." + tail  # `retry.schedule`


def mention_terms(text: str) -> set[str]:
    """The code names `text` mentions, lower-cased (see the module docstring)."""
    found: set[str] = set()
    for quoted in _BACKQUOTED.findall(text):
        for word in _CODE_WORD.findall(quoted):
            found.update(_with_parts(word.lower()))
    for word in _CODE_WORD.findall(text):
        if _looks_like_code(word):
            found.update(_with_parts(word.lower().rstrip(".")))
    return {t for t in found if len(t) >= MIN_TERM_CHARS}


def result_terms(qualified_name: str, name: str, path: str, kind: str) -> set[str]:
    """What a code result may be mentioned as: its qualified name, its name when
    that looks like code or names a table, its file path and file name."""
    terms = {qualified_name.lower(), path.lower(), path.rsplit("/", 1)[-1].lower()}
    if qualified_name.count(".") >= 1:
        terms.add(".".join(qualified_name.lower().split(".")[-2:]))
    if _looks_like_code(name) or kind in ("table", "view"):
        terms.add(name.lower())
    return {t for t in terms if len(t) >= MIN_TERM_CHARS}
