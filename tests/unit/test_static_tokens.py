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
