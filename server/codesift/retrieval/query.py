"""Query analysis: what words to look for, and whether the query names a symbol.

User text never reaches FTS5 MATCH as syntax: every term is a quoted string
(double quotes doubled), so `AND`, `NEAR`, `*`, `"` or `:` are searched literally.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from codesift.retrieval.locations import Location, names_a_file, trace_locations
from codesift.store.names import fts_or_query, fts_quote
from codesift.tokens import split_identifier

__all__ = [
    "QueryAnalysis",
    "analyze_query",
    "code_line_query",
    "fragment_name",
    "fts_or_query",
    "fts_quote",
    "named_in_question",
    "path_query",
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

# Any other declaration copied from its first line: `public function send(string
# $content)`, `uint32_t Extend(uint32_t crc, const char* data, size_t n)`, `override
# fun create(context: ResolutionContext): T`, `pub(crate) fn type_id(&self)`,
# `Buffer::write(const char* s)`, `handler.error = function(element, parent)`. The
# name is the identifier right before the first parenthesis that is no keyword's
# (nor a macro's around the return type: `PyAPI_FUNC(int) PyLong_AsLong(`), with the
# qualifier written before it. A line that calls it (`params = to_native_string(x)`,
# `ctx.response.remove('Vary')`, `return $e->getDescription();`) is no declaration:
# before the name a declaration has a declaring keyword, or only modifiers and a
# return type; without either, it is one only as `Type::name(` or with typed
# parameters (`name(const char* s, int n)`).
_FRAGMENT_NAME = re.compile(
    r"(?P<qualifier>(?:[A-Za-z_$][\w$]*(?:\.|::|->|#))*)(?P<name>[A-Za-z_$][\w$]*)\("
)
# `x.y = function(`, `local function y(`, `const y = async (a, b) =>`: an assignment
# that declares a function.
_ASSIGNED_FUNCTION = re.compile(
    r"^(?:(?:local|const|let|var|export|static)\s+)*"
    r"(?P<qualifier>(?:[A-Za-z_$][\w$]*[.:])*)(?P<name>[A-Za-z_$][\w$]*)\s*(?::\s*[^=]+)?[:=]\s*"
    r"(?:async\s+)?(?:function\b|\([^()]*\)\s*(?::\s*[^=]+)?=>|[A-Za-z_$][\w$]*\s*=>)"
)
_DECLARING_WORDS = frozenset(
    "def defp defmacro fn func function fun sub proc method macro operator".split()
)
_NOT_DECLARED_NAMES = frozenset(
    """
    if for while switch catch return sizeof typeof function fn func def fun lambda new
    await async match with elif foreach using lock defined decltype alignof noexcept
    static_assert assert throw throws when where pub super this self print echo
    """.split()
)
# Words that start a statement: a name after them is called, not declared.
_STATEMENT_WORDS = frozenset(
    "return await throw yield new if else elif case assert not and or in is echo print "
    "puts raise delete typeof sizeof go defer do then when unless".split()
)
# Words of a question, not of a declaration: a fragment has none of them before the
# name (`how are handlers chained with a next() continuation` is a question).
_PROSE_WORDS = frozenset(
    "how what where why when which who does do did is are was the a an and or to of in "
    "with for that this from by on into about should can".split()
)
_FRAGMENT_PREFIX_WORDS = 8
# Annotations and attributes before a declaration: `@Override`, `@GET("/")`, `[Fact]`,
# `#[inline]`.
_ANNOTATIONS = re.compile(r"^\s*(?:(?:@[\w.]+(?:\([^)]*\))?|#?\[[^\]]*\])\s*)+")
# What may stand between the annotations and the name: modifiers, a return type
# (generics, pointers, references, arrays, qualified types) and a macro's argument list.
_TYPE_PREFIX = re.compile(r"^[\w$\s*&<>\[\]:,?.()]*$")
# After a macro's argument list, the declared name and its own parenthesis.
_MACRO_THEN_NAME = re.compile(r"\s*[\w$*&\s]*?[A-Za-z_$][\w$]*\(")


def _typed_parameters(text: str, start: int) -> bool:
    """Whether the parenthesis at `start` opens parameters with types (`const char*
    s`, `name: str`, `int`), not a call's arguments (`x`, `"a", 2`, `f(y)`)."""
    close = text.find(")", start)
    inner = text[start + 1 : close if close >= 0 else len(text)]
    if not inner.strip():
        return False
    if re.search(r"[\"'`]|\(|(?<![\w$])\d", inner):
        return False
    params = [p.strip() for p in inner.split(",") if p.strip()]
    return all(len(_WORD.findall(p)) >= 2 or ":" in p for p in params)


# Marks of code in a query: a call's or declaration's parenthesis, statement
# punctuation, assignment and comparison operators, scope and arrow operators, a
# sigil'd variable, a method call, an index.
_CODE_MARK = re.compile(r"\w\(|[;{}]|\s=\s|==|!=|:=|=>|->|::|\+=|\$\w|\w\.\w+\(|\w\[")
# Words of a question that code hardly uses (`if`, `in`, `is`, `for`, `this` are
# both): at most this share of a pasted line's words may be one.
_QUESTION_WORDS = frozenset(
    "how what where why which who does did the should can about are was that".split()
)
_CODE_LINE_QUESTION_SHARE = 0.1
# A run of this many plain words is a sentence, not code (`capture group references
# inside a replacement string`; code breaks such runs with its punctuation).
_PROSE_RUN = 5


def code_line_query(text: str) -> bool:
    """Whether `text` reads as a line of code rather than a question: it has a mark
    of code, hardly any question words and no sentence (`how ... with a next()
    continuation` is a question)."""
    if _CODE_MARK.search(text) is None:
        return False
    words = _WORD.findall(text)
    if sum(w.lower() in _QUESTION_WORDS for w in words) > _CODE_LINE_QUESTION_SHARE * len(words):
        return False
    run = 0
    for token in text.split():
        run = run + 1 if token.rstrip(",").isalpha() else 0
        if run >= _PROSE_RUN:
            return False
    return True


def fragment_name(text: str) -> tuple[str, str] | None:
    """(qualifier, name) of the definition a declaration fragment declares, or None
    when `text` is no declaration (no `name(`, a question, or a line that calls it)."""
    assigned = _ASSIGNED_FUNCTION.match(text)
    if assigned is not None:
        return assigned["qualifier"].rstrip(".:"), assigned["name"]
    annotations = _ANNOTATIONS.match(text)
    body = text[annotations.end() :] if annotations else text
    for match in _FRAGMENT_NAME.finditer(body):
        name = match["name"]
        if name.lower() in _NOT_DECLARED_NAMES:
            continue
        prefix_text = body[: match.start()]
        prefix = [w.lower() for w in _WORD.findall(prefix_text)]
        if len(prefix) > _FRAGMENT_PREFIX_WORDS or _PROSE_WORDS.intersection(prefix):
            return None
        close = body.find(")", match.end())
        if close >= 0 and _MACRO_THEN_NAME.match(body, close + 1):
            continue  # `PyAPI_FUNC(int) PyLong_AsLong(`: a macro around the return type
        raw_qualifier = match["qualifier"]
        qualifier = re.sub(r"(?:\.|::|->|#)$", "", raw_qualifier)
        if _DECLARING_WORDS.intersection(prefix):
            return qualifier, name
        if _STATEMENT_WORDS.intersection(prefix) or not _TYPE_PREFIX.match(prefix_text):
            return None
        if raw_qualifier and "::" not in raw_qualifier:
            return None  # `ctx.response.remove(`, `$this->send(`: a call
        if prefix or "::" in raw_qualifier or _typed_parameters(body, match.end() - 1):
            return qualifier, name
        return None
    return None


@dataclass(frozen=True, slots=True)
class QueryAnalysis:
    text: str
    symbol_like: bool  # the whole query is one identifier or qualified name
    symbol: str  # the qualified name as written (for symbol_like queries), else ""
    symbol_tail: str  # its last component
    terms: tuple[str, ...]  # lower-case FTS terms, stopwords removed, identifiers split too
    identifiers: tuple[str, ...]  # identifier-looking words as written (for the symbol stream)
    # The query is a declaration as written (`func (b *Buffer) Write(p []byte)`,
    # `public function send(string $content)`): among definitions of its name, the one
    # whose signature it repeats is meant.
    declaration: bool = False
    # Text to find as it is written, "" for none: a line of code as pasted (`params =
    # to_native_string(params)`, `return ordinal() < DAY_OF_WEEK.ordinal();`:
    # `code_line_query`) or what a quoted query quotes (`"connection reset by peer"`).
    # Such a query asks where that text is, tests and examples included.
    verbatim: str = ""
    # A file's name or path as typed (`smtplib.py`, `retrieval/ordering.py`,
    # `./src/main.rs`), normalised, "" for none: the files it names lead (`path_query`).
    path: str = ""
    # With `path`, the line a stack frame or a compiler's location points to
    # (retrieval/locations.py): that file's chunk holding it is meant; 0 for none.
    line: int = 0
    # A pasted trace's frames, innermost first (the first is `path` and `line`).
    frames: tuple[Location, ...] = ()
    # Prose that may be a message pasted without quotes (`header argument is
    # required`, `connection reset by peer`), "" for none: three words or more that
    # open no question (`message_phrase`). Where a string literal of the code holds it
    # as written, that chunk leads; else the query is the question it reads as.
    phrase: str = ""

    @property
    def literal(self) -> bool:
        """The query asks where something is (a line, a quoted text, a file), not a
        question: no prose demotions, file evidence or feedback apply."""
        return bool(self.verbatim or self.path)


def _looks_like_identifier(word: str) -> bool:
    if "_" in word.strip("_"):
        return True
    # camelCase / PascalCase with an inner capital, or has digits after letters
    return bool(re.search(r"[a-z][A-Z]|[A-Z]{2,}[a-z]", word)) or (
        word[:1].isupper() and any(c.islower() for c in word[1:]) and len(word) > 3
    )


# Words a question about one name asks with, besides stopwords: "what does
# parse_http_header do", "where is RetryPolicy defined", "explain Pool.imap".
_ABOUT_WORDS = frozenset(
    """
    defined define definition declared declaration called call calls caller callers
    return returns mean means meaning explain explained show find located location
    purpose role behavior behaviour class struct type trait interface module variable
    constant field property macro signature source body usage usages exactly please
    """.split()
)
# How such a question opens.
_QUESTION_OPENERS = frozenset(
    "what where how which who why when explain describe show find list".split()
)
# A name no English word looks like: a qualified name, snake_case, camelCase, ACRONYMWord.
_COMPOUND_NAME = re.compile(r"[a-z][A-Z]|[A-Z]{2,}[a-z]|[A-Za-z0-9]_[A-Za-z0-9]|\.|::|#|->")
_TOKEN_EDGES = "?!.,;:'\"`()[]"


def named_in_question(text: str) -> str:
    """The name a question asks about when it opens as a question, names one and
    says nothing else ("what does parse_http_header do?", "where is `RetryPolicy`
    defined", "explain Pool.imap"), else "".
    A compound or qualified name counts, and a capitalised word after the first (the
    first word of a sentence is capitalised anyway)."""
    words = text.split()
    if not words or words[0].strip(_TOKEN_EDGES).lower() not in _QUESTION_OPENERS:
        return ""
    name = ""
    for position, raw in enumerate(words):
        token = raw.strip(_TOKEN_EDGES)
        if not token:
            continue
        lower = token.lower()
        if lower in STOPWORDS or lower in _ABOUT_WORDS:
            continue
        # Inside a sentence a capitalised word is a name too ("what does Invoice do").
        named = _COMPOUND_NAME.search(token) or (
            position > 0 and len(token) > 2 and token[0].isupper() and token[1:].islower()
        )
        if name or not _SYMBOL_QUERY.match(token) or not named:
            return ""
        name = token
    return name


_PATH_QUERY = re.compile(r"^(?:\./|/)?(?P<path>[\w@+-][\w.@+/-]*)$")


def path_query(text: str) -> str:
    """The file name or path `text` is, normalised (`./src/main.rs` -> `src/main.rs`),
    or "": one word with a folder (`retrieval/ordering.py`) or with the extension of
    a language codesift reads or of a common text file (`smtplib.py`, `Cargo.toml`)."""
    match = _PATH_QUERY.match(text)
    if match is None or "://" in text or len(text) > 300:
        return ""
    path = match["path"].rstrip("/")
    name = path.rsplit("/", 1)[-1]
    if "/" in path and any(c.isalpha() for c in name):
        return path
    return path if names_a_file(name) else ""


def analyze_query(text: str) -> QueryAnalysis:
    text = text.strip()
    place = _place_analysis(text)
    if place is not None:
        return place
    stripped = text.removesuffix("()")
    symbol_like = bool(_SYMBOL_QUERY.match(text)) and " " not in text
    symbol = stripped if symbol_like else ""
    tail = re.split(r"\.|::|#|->", stripped)[-1] if symbol_like else ""
    signature = _SIGNATURE.match(text)
    declaration = signature is not None
    if signature is not None:
        # Asked as a symbol: `Buffer.Write` for a Go method, the bare name otherwise.
        symbol_like = True
        tail = signature["name"]
        receiver = signature["receiver"]
        symbol = f"{receiver}.{tail}" if receiver else tail
    elif not symbol_like and (fragment := fragment_name(text)) is not None:
        qualifier, tail = fragment
        symbol_like = declaration = True
        symbol = f"{qualifier}.{tail}" if qualifier else tail
    named = "" if symbol_like else named_in_question(text)
    if named:
        # A question about one name asks for its definition, as the name alone does.
        symbol_like = True
        symbol = named.removesuffix("()")
        tail = re.split(r"\.|::|#|->", symbol)[-1]
    words = _WORD.findall(text)
    terms: dict[str, None] = {}
    identifiers: dict[str, None] = {}
    for word in words:
        lower = word.lower()
        parts = split_identifier(word)
        # A capitalised stopword opening a question ("Where", "Does") is not a name.
        is_ident = (symbol_like and not named) or (
            _looks_like_identifier(word) and lower not in STOPWORDS
        )
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
    verbatim, phrase = _as_written(text, symbol_like)
    return QueryAnalysis(
        text=text,
        symbol_like=symbol_like,
        symbol=symbol,
        symbol_tail=tail,
        terms=tuple(terms),
        identifiers=tuple(identifiers),
        declaration=declaration,
        verbatim=verbatim,
        phrase=phrase,
    )


def _place_analysis(text: str) -> QueryAnalysis | None:
    """A stack frame or a compiler's location, or a file's name or path; else None."""
    frames = trace_locations(text)
    if frames:
        return _path_analysis(text, frames[0].path, frames)
    path = path_query(text)
    return _path_analysis(text, path) if path else None


def _path_analysis(text: str, path: str, frames: Sequence[Location] = ()) -> QueryAnalysis:
    """A file's name or path, or a trace's places (`frames`, innermost first): the
    words of the path and of the innermost frame's function are searched too
    (`ordering`, `py`)."""
    name = frames[0].name if frames else ""
    terms = dict.fromkeys(w.lower() for w in _WORD.findall(f"{path} {name}"))
    for word in list(terms):
        for part in split_identifier(word):
            if len(part) > 1:
                terms[part] = None
    return QueryAnalysis(
        text=text,
        symbol_like=False,
        symbol="",
        symbol_tail="",
        terms=tuple(terms),
        identifiers=(),
        path=path,
        line=frames[0].line if frames else 0,
        frames=tuple(frames),
    )


# A query in quotes (double, single or backticks) asks for the quoted text as written.
_QUOTED = re.compile(r"""^(["'`])(?P<inner>.*\w.*)\1$""", re.DOTALL)


# Fewest words of a message pasted without quotes.
MESSAGE_MIN_WORDS = 3


def message_phrase(text: str) -> str:
    """`text` when it may be a message pasted as the program shows it: at least
    MESSAGE_MIN_WORDS words, not opening as a question (`how`, `where`...) nor
    ending with a question mark; else "". (`should not go backwards`, `does not
    cache value when ttl is 0`: test names and messages open as questions do.)"""
    words = _WORD.findall(text)
    if len(words) < MESSAGE_MIN_WORDS or text.rstrip().endswith("?"):
        return ""
    return "" if words[0].lower() in _QUESTION_OPENERS else text


def _as_written(text: str, symbol_like: bool) -> tuple[str, str]:
    """(verbatim, phrase) of QueryAnalysis: what to find as written, else prose
    that may be a pasted message, else neither."""
    verbatim = _verbatim_text(text, symbol_like)
    if verbatim or symbol_like:
        return verbatim, ""
    return "", message_phrase(text)


def _verbatim_text(text: str, symbol_like: bool) -> str:
    """What a query asks to find as written: the quoted text of a quoted query, a
    pasted line of code, else ""."""
    quoted = _QUOTED.match(text)
    if quoted is not None and len(quoted["inner"].strip()) >= 3:
        return quoted["inner"].strip()
    return text if not symbol_like and code_line_query(text) else ""


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
