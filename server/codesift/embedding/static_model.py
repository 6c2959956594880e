"""The static embedding model: one vector per token, no transformer.

A text's vector is the L2-normalised sum of its tokens' vectors (the mean,
normalised). The table has one 384-d row per token of all-MiniLM-L6-v2's
vocabulary, fitted so that these sums reproduce MiniLM's own sentence vectors on
a corpus of code and docstrings (tools/train_static_model.py has the recipe, the
corpus and how to rebuild it), and it lives in MiniLM's space: a static vector
and a MiniLM vector of the same text are close (cosine ~0.8 on held-out texts).

It ships in the package (`embedding/static/static.npz`: int8 rows with a float32
scale per row, 11.8 MB, and `static.json`, its manifest) with MiniLM's tokenizer
files (`embedding/minilm/`). Embedding is a tokenizer call (the `tokenizers`
library, both cores) and a gather-and-sum in numpy: ~10,000 chunks a second on 2
cores, a query in ~0.1 ms. Nothing is built or downloaded; the table is loaded
once per process (~50 ms, ~12 MB).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from codesift.errors import EmbeddingError

if TYPE_CHECKING:
    from tokenizers import Tokenizer

__all__ = [
    "MODEL_DIR",
    "REFERENCE_TEXTS",
    "STATIC_DIR",
    "STATIC_MODEL_ID",
    "StaticTable",
    "load_static_tokenizer",
    "load_table",
    "static_manifest",
    "static_model_id",
    "table_checksum",
]

# Which model made a vector, as the index records it (store/vectors.py): vectors of
# another model, or of another table (`static_model_id`), are computed again.
STATIC_MODEL_ID = "static-minilm"

# MiniLM's tokenizer files, shipped with codesift.
MODEL_DIR = Path(str(resources.files("codesift.embedding") / "minilm"))
STATIC_DIR = Path(str(resources.files("codesift.embedding") / "static"))
_TABLE_FILE = "static.npz"
_MANIFEST_FILE = "static.json"

# Texts whose vectors the manifest records (first 8 components), checked by a test.
REFERENCE_TEXTS: tuple[str, ...] = (
    "how does the server retry a failed request",
    "def parse_config(path: str) -> dict: Read the settings file.",
    "func (s *Server) Handle(w http.ResponseWriter, r *http.Request)",
    "impl Iterator for Lines { fn next(&mut self) -> Option<String> }",
    "## Installation\nRun npm install and start the development server.",
)

Vectors = npt.NDArray[np.float32]

# Texts per gather: the gathered rows of a chunk of texts (tokens x 384 float32)
# stay ~a few MB at the usual chunk sizes.
_GATHER_TEXTS = 256
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


def table_checksum(rows: npt.NDArray[np.int8], scales: npt.NDArray[np.float32]) -> str:
    """SHA-256 of the table's content (rows and scales, little-endian)."""
    digest = hashlib.sha256()
    digest.update(np.ascontiguousarray(rows, dtype=np.int8).tobytes())
    digest.update(np.ascontiguousarray(scales, dtype="<f4").tobytes())
    return digest.hexdigest()


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


def static_manifest() -> dict[str, Any]:
    """The shipped model's manifest (recipe, corpus, checksums)."""
    try:
        data = json.loads((STATIC_DIR / _MANIFEST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EmbeddingError(f"cannot read the static model's manifest: {exc}") from exc
    if not isinstance(data, dict):
        raise EmbeddingError("the static model's manifest is not an object")
    return data


@functools.cache
def static_model_id() -> str:
    """The shipped table's id as the index records it: STATIC_MODEL_ID and the start
    of the table's checksum (from its manifest), so that a codesift shipping another
    table computes the vectors again."""
    checksum = str(static_manifest().get("table_sha256", ""))[:12]
    return f"{STATIC_MODEL_ID}-{checksum}" if checksum else STATIC_MODEL_ID


@dataclass(frozen=True, slots=True)
class StaticTable:
    """The token table and the tokenizer that indexes it."""

    rows: npt.NDArray[np.int8]  # (vocabulary, 384)
    scales: npt.NDArray[np.float32]  # (vocabulary,)
    tokenizer: Any  # tokenizers.Tokenizer

    @property
    def dimensions(self) -> int:
        return int(self.rows.shape[1])

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of each text ([CLS] ... [SEP], truncated), the tokenizer's own.

        A text of printable ASCII (most code) is split into words here and each
        distinct word is tokenized once (`_WordPieces`): ~5x less CPU than the
        tokenizer's ~2.5 MB/s on code. Other texts go to the tokenizer, without
        character offsets (`encode_batch_fast`, tokenizers 0.20+) when the library
        has it. The tokenizer reads a whole text before truncating it: a long text is
        cut at a space or newline past `_CUT_CHARS_PER_TOKEN` characters per kept
        token first. Words end at whitespace, so the cut text's tokens are the first
        tokens of the whole text's; when they fill the limit the ids are the same,
        and a cut text that does not fill it is tokenized whole again."""
        encode = getattr(self.tokenizer, "encode_batch_fast", None) or self.tokenizer.encode_batch
        truncation = self.tokenizer.truncation
        limit = int(truncation["max_length"]) if truncation else 0
        if not limit:
            return [e.ids for e in encode(list(texts))]
        pieces = _word_pieces(self.tokenizer)
        ids: list[list[int]] = [[] for _ in texts]
        rest: list[int] = []
        for i, text in enumerate(texts):
            found = pieces.ids(text, limit)
            if found is None:
                rest.append(i)
            else:
                ids[i] = found
        for i, found in zip(rest, self._tokenized([texts[i] for i in rest], limit), strict=True):
            ids[i] = found
        return ids

    def _tokenized(self, texts: list[str], limit: int) -> list[list[int]]:
        """`token_ids` of `texts` through the tokenizer itself."""
        if not texts:
            return []
        encode = getattr(self.tokenizer, "encode_batch_fast", None) or self.tokenizer.encode_batch
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

    def embed(self, texts: Sequence[str]) -> Vectors:
        """One L2-normalised row per text, in order."""
        out = np.zeros((len(texts), self.dimensions), np.float32)
        for start in range(0, len(texts), _GATHER_TEXTS):
            batch = texts[start : start + _GATHER_TEXTS]
            out[start : start + len(batch)] = self.embed_ids(self.token_ids(batch))
        return out

    def embed_ids(self, ids: Sequence[Sequence[int]]) -> Vectors:
        """Vectors of texts given as token ids (each at least one token)."""
        sums: Vectors = np.zeros((len(ids), self.dimensions), np.float32)
        for row, tokens in enumerate(ids):
            if len(tokens):
                # Scales times int8 rows, summed in float32 on this thread: no float32
                # copy of the table, no BLAS threads (3-4x faster than np.add.reduceat
                # over the gathered rows, which walks them column by column).
                index = np.asarray(tokens, np.intp)
                sums[row] = np.einsum(
                    "i,ij->j",
                    self.scales[index],
                    self.rows[index],
                    dtype=np.float32,
                    casting="unsafe",
                )
        norms = np.sqrt(np.einsum("ij,ij->i", sums, sums))
        norms[norms == 0] = 1.0
        sums /= norms[:, None]
        return sums


# Printable ASCII and tab / newline / carriage return: the texts whose normalising
# (BertNormalizer: control characters dropped, whitespace made a space, lower case,
# accents stripped) is `str.lower` and whose pre-tokenising (BertPreTokenizer) is
# `_ASCII_WORD`. Anything else goes to the tokenizer.
_NOT_PLAIN_ASCII = re.compile(r"[^\t\n\r\x20-\x7e]")
# A run of letters and digits, or one ASCII punctuation character (each is a word).
_ASCII_WORD = re.compile(r"[a-z0-9]+|[!-/:-@\[-`{-~]")
# Distinct words whose ids are kept per tokenizer (code repeats its words).
_WORD_CACHE_LIMIT = 200_000


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


def _word_pieces(tokenizer: Any) -> _WordPieces:
    with _TABLES_LOCK:
        pieces = _PIECES.get(id(tokenizer))
        if pieces is None or pieces.tokenizer is not tokenizer:
            pieces = _PIECES[id(tokenizer)] = _WordPieces(tokenizer)
        return pieces


_TABLES: dict[int, StaticTable] = {}
_TABLES_LOCK = threading.Lock()


def load_table(max_tokens: int = 512) -> StaticTable:
    """The shipped static model with a tokenizer truncating at `max_tokens` (loaded
    once per process and length; the rows are shared)."""
    with _TABLES_LOCK:
        table = _TABLES.get(max_tokens)
        if table is not None:
            return table
        shared = next(iter(_TABLES.values()), None)
        if shared is not None:
            rows, scales = shared.rows, shared.scales
        else:
            rows, scales = _read_table(STATIC_DIR / _TABLE_FILE)
        table = StaticTable(rows, scales, load_static_tokenizer(MODEL_DIR, max_tokens))
        _TABLES[max_tokens] = table
        return table


def _read_table(path: Path) -> tuple[npt.NDArray[np.int8], npt.NDArray[np.float32]]:
    try:
        with np.load(path, allow_pickle=False) as data:
            rows = np.ascontiguousarray(data["rows"], dtype=np.int8)
            scales = np.ascontiguousarray(data["scales"], dtype=np.float32)
    except (OSError, ValueError, KeyError) as exc:
        raise EmbeddingError(f"cannot read the static embedding model {path}: {exc}") from exc
    if rows.ndim != 2 or scales.shape != (rows.shape[0],):
        raise EmbeddingError(f"the static embedding model {path} has the wrong shape")
    return rows, scales
