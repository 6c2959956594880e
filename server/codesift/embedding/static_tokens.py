"""Token ids for the static embedding model, without numpy.

The static model (embedding/static_model.py) sums one table row per token; the
tokens are MiniLM's (its tokenizer files ship in `embedding/minilm/`). This
module turns texts into those token ids and nothing more, so that the index
workers can tokenize a file's embedding texts with its rows (embedding/texts.py)
without loading numpy or the table: the writer's process, which holds the table,
only gathers and sums the rows (embedding/row_vectors.py).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from codesift.errors import EmbeddingError

if TYPE_CHECKING:
    from tokenizers import Tokenizer

__all__ = ["MODEL_DIR", "load_static_tokenizer", "static_tokenizer", "token_ids"]

# MiniLM's tokenizer files, shipped with codesift.
MODEL_DIR = Path(str(resources.files("codesift.embedding") / "minilm"))

# Characters per kept token before which a long text is never cut (`token_ids`):
# code and prose run ~3-5 characters a token, so a cut text nearly always still
# fills the limit.
_CUT_CHARS_PER_TOKEN = 8


def _cut_at_whitespace(text: str, chars: int) -> str:
    """`text` up to the first space or newline at or after `chars` (the same
    object when it is shorter or has none there)."""
    if len(text) <= chars:
        return text
    ends = [i for i in (text.find(" ", chars), text.find("\n", chars)) if i >= 0]
    return text[: min(ends)] if ends else text


def load_static_tokenizer(folder: Path, max_tokens: int) -> Tokenizer:
    """MiniLM's tokenizer (lower-cased WordPiece, [CLS] ... [SEP]), truncating at
    `max_tokens` tokens, no padding."""
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:  # a dependency of codesift: only a broken install
        raise EmbeddingError("the tokenizers package is not installed") from exc
    try:
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    except Exception as exc:  # tokenizers raises plain exceptions on a bad file
        raise EmbeddingError(f"cannot read the tokenizer in {folder}: {exc}") from exc
    tokenizer.enable_truncation(max_length=max(max_tokens, 2))
    tokenizer.no_padding()
    return tokenizer


def token_ids(tokenizer: Tokenizer, texts: Sequence[str]) -> list[list[int]]:
    """Token ids of each text ([CLS] ... [SEP], truncated by `tokenizer`), the
    tokenizer's own.

    A text of printable ASCII (most code) is split into words here and each
    distinct word is tokenized once (`_WordPieces`): ~5x less CPU than the
    tokenizer's ~2.5 MB/s on code. Other texts go to the tokenizer, without
    character offsets (`encode_batch_fast`, tokenizers 0.20+) when the library
    has it. The tokenizer reads a whole text before truncating it: a long text is
    cut at a space or newline past `_CUT_CHARS_PER_TOKEN` characters per kept
    token first. Words end at whitespace, so the cut text's tokens are the first
    tokens of the whole text's; when they fill the limit the ids are the same,
    and a cut text that does not fill it is tokenized whole again."""
    encode = getattr(tokenizer, "encode_batch_fast", None) or tokenizer.encode_batch
    truncation = tokenizer.truncation
    limit = int(truncation["max_length"]) if truncation else 0
    if not limit:
        return [e.ids for e in encode(list(texts))]
    pieces = _word_pieces(tokenizer)
    ids: list[list[int]] = [[] for _ in texts]
    rest: list[int] = []
    for i, text in enumerate(texts):
        found = pieces.ids(text, limit)
        if found is None:
            rest.append(i)
        else:
            ids[i] = found
    for i, found in zip(rest, _tokenized(tokenizer, [texts[i] for i in rest], limit), strict=True):
        ids[i] = found
    return ids


def _tokenized(tokenizer: Tokenizer, texts: list[str], limit: int) -> list[list[int]]:
    """`token_ids` of `texts` through the tokenizer itself."""
    if not texts:
        return []
    encode = getattr(tokenizer, "encode_batch_fast", None) or tokenizer.encode_batch
    cut = [_cut_at_whitespace(text, limit * _CUT_CHARS_PER_TOKEN) for text in texts]
    ids = [e.ids for e in encode(cut)]
    again = [
        i
        for i, (whole, part) in enumerate(zip(texts, cut, strict=True))
        if part is not whole and len(ids[i]) < limit
    ]
    if again:
        for i, encoding in zip(again, encode([texts[i] for i in again]), strict=True):
            ids[i] = encoding.ids
    return ids


# Printable ASCII and tab / newline / carriage return: the texts whose normalising
# (BertNormalizer: control characters dropped, whitespace made a space, lower case,
# accents stripped) is `str.lower` and whose pre-tokenising (BertPreTokenizer) is
# `_ASCII_WORD`. Anything else goes to the tokenizer.
_NOT_PLAIN_ASCII = re.compile(r"[^\t\n\r\x20-\x7e]")
# A run of letters and digits, or one ASCII punctuation character (each is a word).
_ASCII_WORD = re.compile(r"[a-z0-9]+|[!-/:-@\[-`{-~]")
# Distinct words whose ids are kept per tokenizer (code repeats its words; the
# first ones seen are mostly the frequent ones). Each index worker holds one, at
# ~300 bytes a word: the stdlib copy's 23,000 words take 7 MB.
_WORD_CACHE_LIMIT = 50_000


class _WordPieces:
    """Token ids of plain-ASCII texts from each word's ids, as the tokenizer would
    give them: [CLS], the words' pieces in order truncated to the limit, [SEP]. A
    word's ids come from the tokenizer itself (WordPiece of that word alone, the
    same as inside a text: pieces never cross words), once per distinct word."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        empty = tokenizer.encode("").ids
        self.first, self.last = list(empty[:1]), list(empty[1:])
        # Special tokens are matched in the raw text before anything else.
        self.specials = tuple(t.content for t in tokenizer.get_added_tokens_decoder().values())
        self.words: dict[str, list[int]] = {}
        self.lock = threading.Lock()

    def ids(self, text: str, limit: int) -> list[int] | None:
        """The ids of `text`, or None when it is not plain ASCII (or names a special
        token): the tokenizer's to do."""
        if _NOT_PLAIN_ASCII.search(text) or (
            "[" in text and any(special in text for special in self.specials)
        ):
            return None
        room = limit - len(self.first) - len(self.last)
        words = self.words
        out = list(self.first)
        for word in _ASCII_WORD.findall(text.lower()):
            pieces = words.get(word)
            if pieces is None:
                pieces = self._word(word)
            out.extend(pieces)
            if len(out) - len(self.first) >= room:
                del out[len(self.first) + room :]
                break
        out.extend(self.last)
        return out

    def _word(self, word: str) -> list[int]:
        pieces: list[int] = self.tokenizer.encode(word, add_special_tokens=False).ids
        with self.lock:
            if len(self.words) < _WORD_CACHE_LIMIT:
                self.words[word] = pieces
        return pieces


_PIECES: dict[int, _WordPieces] = {}
_PIECES_LOCK = threading.Lock()


def _word_pieces(tokenizer: Any) -> _WordPieces:
    with _PIECES_LOCK:
        pieces = _PIECES.get(id(tokenizer))
        if pieces is None or pieces.tokenizer is not tokenizer:
            pieces = _PIECES[id(tokenizer)] = _WordPieces(tokenizer)
        return pieces


_TOKENIZERS: dict[int, Tokenizer] = {}
_TOKENIZERS_LOCK = threading.Lock()


def static_tokenizer(max_tokens: int) -> Tokenizer:
    """MiniLM's tokenizer truncating at `max_tokens`, loaded once per process and
    length (the static model's, `static_model.load_table`, is another instance)."""
    with _TOKENIZERS_LOCK:
        tokenizer = _TOKENIZERS.get(max_tokens)
        if tokenizer is None:
            tokenizer = _TOKENIZERS[max_tokens] = load_static_tokenizer(MODEL_DIR, max_tokens)
        return tokenizer
