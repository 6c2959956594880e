"""Query analysis: what words to look for, and whether the query names a symbol.

User text never reaches FTS5 MATCH as syntax: every term is a quoted string
(double quotes doubled), so `AND`, `NEAR`, `*`, `"` or `:` are searched literally.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from codesift.store.names import fts_or_query, fts_quote
from codesift.tokens import split_identifier

__all__ = [
    "QueryAnalysis",
    "analyze_query",
    "fts_or_query",
    "fts_quote",
    "singulars",
    "trigrams",
    "verb_bases",
    "with_variants",
]

# Words that carry no meaning in a prose question about code.
STOPWORDS = frozenset(
    """
    a about after all also an and any are as at be been before being between both but by
    can could did do does doing done each for from get gets got had has have having how
    i if in into is it its itself just me more most my no nor not now of off on once
    only or other our out over own same should so some such than that the their them
    then there these they this those through to too under until up very was we were what
    when where which while who whom why will with would you your use used using way ways
    code implement implemented implementation function functions method methods work
    works happen happens thing things
    """.split()
)

_IDENT = r"[A-Za-z_$][A-Za-z0-9_$]*"
# `ParseConfig`, `pkg.mod.Class.method`, `Type::method`, `Pool.imap_unordered`, `$el`
_SYMBOL_QUERY = re.compile(rf"^{_IDENT}(?:(?:\.|::|#|->){_IDENT})*(?:\(\))?$")
_WORD = re.compile(r"[A-Za-z0-9_]+")
# A definition's signature as a developer copies it: `func (b *Buffer) Write(p []byte)`,
# `func ParseInt(s string`, `def load(path)`, `fn parse<T>(`, `function compose(`:
# the name (and a Go receiver's type) is what it asks for.
_SIGNATURE = re.compile(
    r"^(?:pub\s+|export\s+|async\s+|static\s+)*(?:func|def|fn|function|fun)\s+"
    r"(?:\(\s*[A-Za-z_]\w*\s+\*?\s*(?P<receiver>[A-Za-z_]\w*)(?:\[[^\]]*\])?\s*\)\s*)?"
    r"(?P<name>[A-Za-z_$][\w$]*)\s*[(<\[]"
)


@dataclass(frozen=True, slots=True)
class QueryAnalysis:
    text: str
    symbol_like: bool  # the whole query is one identifier or qualified name
    symbol: str  # the qualified name as written (for symbol_like queries), else ""
    symbol_tail: str  # its last component
    terms: tuple[str, ...]  # lower-case FTS terms, stopwords removed, identifiers split too
    identifiers: tuple[str, ...]  # identifier-looking words as written (for the symbol stream)


def _looks_like_identifier(word: str) -> bool:
    if "_" in word.strip("_"):
        return True
    # camelCase / PascalCase with an inner capital, or has digits after letters
    return bool(re.search(r"[a-z][A-Z]|[A-Z]{2,}[a-z]", word)) or (
        word[:1].isupper() and any(c.islower() for c in word[1:]) and len(word) > 3
    )


def analyze_query(text: str) -> QueryAnalysis:
    text = text.strip()
    stripped = text.removesuffix("()")
    symbol_like = bool(_SYMBOL_QUERY.match(text)) and " " not in text
    symbol = stripped if symbol_like else ""
    tail = re.split(r"\.|::|#|->", stripped)[-1] if symbol_like else ""
    signature = _SIGNATURE.match(text)
    if signature is not None:
        # Asked as a symbol: `Buffer.Write` for a Go method, the bare name otherwise.
        symbol_like = True
        tail = signature["name"]
        receiver = signature["receiver"]
        symbol = f"{receiver}.{tail}" if receiver else tail
    words = _WORD.findall(text)
    terms: dict[str, None] = {}
    identifiers: dict[str, None] = {}
    for word in words:
        lower = word.lower()
        parts = split_identifier(word)
        # A capitalised stopword opening a question ("Where", "Does") is not a name.
        is_ident = symbol_like or (_looks_like_identifier(word) and lower not in STOPWORDS)
        if is_ident:
            identifiers[word] = None
        if lower not in STOPWORDS or is_ident:
            terms[lower] = None
        if len(parts) > 1:
            for part in parts:
                if part not in STOPWORDS and len(part) > 1:
                    terms[part] = None
    if not terms:  # a query of stopwords only: search them anyway
        terms = {w.lower(): None for w in words}
    return QueryAnalysis(
        text=text,
        symbol_like=symbol_like,
        symbol=symbol,
        symbol_tail=tail,
        terms=tuple(terms),
        identifiers=tuple(identifiers),
    )


def singulars(word: str) -> tuple[str, ...]:
    """Light English plural normalisation of a lower-case word: `warnings` ->
    `warning`, `entries` -> `entry`; `-ches`/`-xes`... give both readings (`caches` ->
    `cache`, `cach`; `matches` -> `matche`, `match`): a reading that is no word
    matches nothing. Words that only look plural (`process`, `status`, `analysis`)
    give none."""
    if len(word) <= 3 or not word.endswith("s") or word.endswith(("ss", "us", "is")):
        return ()
    if word.endswith("ies") and len(word) > 4:
        return (word[:-3] + "y",)
    if word.endswith(("sses", "ches", "shes", "xes", "zes")):
        return (word[:-1], word[:-2])
    return (word[:-1],)


_DOUBLED = re.compile(r"([bdgklmnprt])\1$")
# Stems before `-ion` that are verbs: `creat(e)`, `connect`, `except`, `compress`, `insert`.
_ION_STEMS = ("at", "ct", "pt", "ss", "rt", "ut")


def verb_bases(word: str) -> tuple[str, ...]:
    """Light English verb/noun normalisation of a lower-case word, for words that
    identifiers spell as a base form: `streaming` -> `stream`, `loading` -> `load`,
    `creating`/`created`/`creation` -> `create`, `cleared` -> `clear`, `running` ->
    `run`, `connection` -> `connect`. Every plausible reading is given (`creat`,
    `create`): a reading that is no word matches nothing."""
    bases: list[str] = []
    for suffix in ("ing", "ed", "ion"):
        if not word.endswith(suffix) or len(word) - len(suffix) < 4:
            continue
        stem = word[: -len(suffix)]
        if suffix == "ion" and not stem.endswith(_ION_STEMS):
            break  # `region`, `opinion`, `version`: no verb inside
        bases += [stem, stem + "e"]
        if suffix != "ion" and _DOUBLED.search(stem) is not None:
            bases.append(stem[:-1])
        break
    return tuple(dict.fromkeys(b for b in bases if b != word and len(b) >= 3))


def with_variants(terms: tuple[str, ...]) -> tuple[str, ...]:
    """`terms` followed by the variants of each term not already among them: the
    singular of a plural (identifiers name one thing, `warning`, `handler`, where
    questions speak of many) and the base form of an `-ing`/`-ed`/`-ion` word
    (`streaming` -> `stream`, `creation` -> `create`), once each."""
    extra = {s: None for t in terms for s in singulars(t)}
    for t in (*terms, *extra):
        for base in verb_bases(t):
            extra[base] = None
    return terms + tuple(t for t in extra if t not in terms)


def trigrams(text: str) -> list[str]:
    lowered = text.lower()
    return sorted({lowered[i : i + 3] for i in range(len(lowered) - 2)})
