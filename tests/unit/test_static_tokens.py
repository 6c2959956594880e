"""The static model's tokenizer call: long texts are cut before tokenizing, and the
ids are the same as the whole texts'."""

from __future__ import annotations

from codesift.embedding.static_model import load_table

CODE_LINE = "    result = parse_http_header(request.headers['Content-Type'], strict=True)\n"


def test_cut_texts_give_the_ids_of_the_whole_texts() -> None:
    table = load_table(64)
    texts = [
        CODE_LINE * 200,  # long: cut, and still fills the limit
        "short text",
        "word " * 40 + " " * 3000 + "tail",  # long but few tokens: tokenized whole again
        "a" * 5000 + " b",  # one long word, no whitespace before the cut point
        "x\n" * 2000,
        "",
    ]
    whole = [encoding.ids for encoding in table.tokenizer.encode_batch(texts)]

    assert table.token_ids(texts) == whole
    assert len(whole[0]) == 64


def test_plain_ascii_texts_split_here_give_the_tokenizers_ids() -> None:
    table = load_table(256)
    texts = [
        "def parse_http_header(raw: bytes) -> dict[str, str]:\n    return {}",
        "x=foo(bar,baz)+qux;  // CamelCaseName __dunder__ 3.14e-5 0xFF",
        "Tabs\tand\r\nnewlines, and    runs of   spaces",
        "a [MASK] token and [CLS] written in the text",  # special tokens: the tokenizer's
        "caf\u00e9 na\u00efve \u4e2d\u6587 \u00c9T\u00c9",  # not ASCII: the tokenizer's
        "control \x0b\x0c\x00 characters",  # dropped by the normaliser: the tokenizer's
        "w" * 150 + " longer than a word may be",  # [UNK]
        "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
        "UPPER lower MiXeD",
        " ".join(f"word{i}" for i in range(400)),  # truncated at the limit
        "",
        "   ",
    ]
    whole = [encoding.ids for encoding in table.tokenizer.encode_batch(texts)]

    assert table.token_ids(texts) == whole
    assert table.token_ids(texts) == whole  # words now cached
