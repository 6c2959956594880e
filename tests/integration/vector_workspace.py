"""The small workspace the vector tests index: a definition that prose questions
find only by meaning (billing), two unrelated ones, and a markdown section."""

from __future__ import annotations

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
