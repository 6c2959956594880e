"""The small workspace the vector tests index: a definition that prose questions
find only by meaning (billing), two unrelated ones, and a markdown section; and
`stored_vectors`, an index's vectors as the tests compare them."""

from __future__ import annotations

import apsw

FILES = {
    "billing/charges.py": (
        "def retry_failed_charge(charge, attempts=3):\n"
        '    """Try a declined credit card payment again with exponential backoff."""\n'
        "    for attempt in range(attempts):\n"
        "        if charge.submit():\n"
        "            return True\n"
        "    return False\n"
    ),
    "text/markdown.py": (
        "def split_headings(document):\n"
        '    """Cut a markdown document into sections at each heading line."""\n'
        "    return [part for part in document.split('#') if part]\n"
    ),
    "net/server.go": (
        "package net\n\n"
        "// Listen opens a TCP socket and accepts incoming network connections.\n"
        "func Listen(addr string) error {\n\treturn nil\n}\n"
    ),
    "README.md": "# Payments\n\nCards that are declined are retried a few times.\n",
}


# (path, layer, part, first line) -> (text hash, model, int8 vector bytes)
Vectors = dict[tuple[str, str, int, int], tuple[int, str, bytes]]


def stored_vectors(conn: apsw.Connection) -> Vectors:
    """Every chunk vector of the index with the text hash and model it was made by,
    keyed by where its chunk is (ids may differ between two indexes)."""
    return {
        (str(path), str(layer), int(part), int(start)): (int(digest), str(model), bytes(blob))
        for path, layer, part, start, digest, model, blob in conn.execute(
            "SELECT f.path, c.layer, c.part, c.start_line, e.text_hash, e.model, v.embedding"
            " FROM chunks c JOIN files f ON f.id = c.file_id"
            " JOIN embedded e ON e.chunk_id = c.id JOIN chunk_vectors v ON v.chunk_id = c.id"
        )
    }
