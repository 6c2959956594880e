"""Two repositories and two document collections for the routing and collections
tests of every front end (CLI, language server, MCP): `shop` (payments, refunds)
and `search` (query parsing, stemming), both listing the collections `billing-prd`
(refund and gift card requirements) and `search-notes` (stemming notes).

The gift card requirement is mentioned by no code: it must be found all the same.
`refund_order` is named in the refunds requirement: the code result lists it as
related.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


def write_files(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


NO_VECTORS = "[embedding]\nenabled = false\n"

COLLECTIONS_TOML = (
    '[[collections]]\nname = "billing-prd"\npath = "../docs/billing"\n'
    'description = "billing requirements"\nlabels = ["billing", "payments"]\n\n'
    '[[collections]]\nname = "search-notes"\npath = "../docs/search"\n'
    'description = "how the search engine stems words"\nlabels = ["search"]\n'
)

SHOP = {
    "README.md": "# Shop\n\nPayments and refunds for the web shop.\n",
    "shop/payments.py": (
        "def charge_card(amount):\n"
        "    '''Charge the customer's card.'''\n"
        "    return amount\n\n\n"
        "def refund_order(order):\n"
        "    '''Give the money of an order back.'''\n"
        "    return order\n"
    ),
}
SEARCH = {
    "README.md": "# Search\n\nQuery parsing and stemming for the search box.\n",
    "engine/query.py": "def parse_query(text):\n    return text.split()\n",
    "engine/stemmer.py": "def porter_stem(word):\n    return word.rstrip('s')\n",
}
BILLING_DOCS = {
    ".codesift.toml": NO_VECTORS,
    "refunds.md": (
        "# Refunds\n\n"
        "## Partial refunds\n\n"
        "A support agent refunds part of an order with refund_order; the customer\n"
        "sees the credit within five business days.\n"
    ),
    "gift-cards.md": (
        "# Gift cards\n\n"
        "## Paying with a gift card\n\n"
        "A customer may pay with a gift card voucher; the remaining voucher balance\n"
        "stays on the card for the next order.\n"
    ),
}
SEARCH_DOCS = {
    ".codesift.toml": NO_VECTORS,
    "stemming.md": (
        "# Stemming\n\n## Porter\n\nThe stemmer reduces inflected words to their stem.\n"
    ),
}

ROUTE_QUERY = "partial refunds credit for the customer"
GIFT_QUERY = "gift card voucher balance"


# Seven folders for the unscoped search over many (language server, CLI).
# Every folder uses one or two of the question's words; only `tokens` uses them
# all, together, so each passes the routing threshold and `tokens` comes first.
SEVEN_QUERY = "refresh expired session token window"
SEVEN_FOLDERS: dict[str, dict[str, str]] = {
    "tokens": {
        "tokens/session.py": (
            "def refresh_expired_session_token(token, window):\n"
            '    """Refresh an expired session token when it is within the window."""\n'
            "    if token.expired and token.age < window:\n"
            "        return token.refresh()\n"
            "    return token\n"
        ),
    },
    "cache": {"cache/lru.py": "def refresh(entry):\n    return entry.reload()\n"},
    "auth": {"auth/login.py": "def open_session(user):\n    return Session(user)\n"},
    "billing": {"billing/plan.py": "def expired(plan):\n    return plan.ends < now()\n"},
    "ui": {"ui/layout.py": "def window_size(window):\n    return window.width\n"},
    "lexer": {"lexer/scan.py": "def next_token(text):\n    return text.split()[0]\n"},
    "jobs": {"jobs/timer.py": "def refresh_window(job):\n    return job.window\n"},
}


@dataclass(frozen=True)
class RoutingCorpus:
    shop: Path
    search: Path
    billing_docs: Path
    search_docs: Path


def make_routing_corpus(
    base: Path, make_repo: Callable[..., Path], *, listed: bool = True
) -> RoutingCorpus:
    """The corpus under `base`: git repositories `shop` and `search` (listing the
    collections in their .codesift.toml when `listed`) and the plain folders
    `docs/billing` and `docs/search`."""
    config = NO_VECTORS + (COLLECTIONS_TOML if listed else "")
    shop = make_repo({**SHOP, ".codesift.toml": config}, name="shop", parent=base)
    search = make_repo({**SEARCH, ".codesift.toml": config}, name="search", parent=base)
    write_files(base / "docs" / "billing", BILLING_DOCS)
    write_files(base / "docs" / "search", SEARCH_DOCS)
    return RoutingCorpus(shop, search, base / "docs" / "billing", base / "docs" / "search")


def pools(route: dict[str, object]) -> dict[str, list[tuple[str, float]]]:
    """The two pools of a route answer as (name, confidence) lists, to compare front ends."""
    out: dict[str, list[tuple[str, float]]] = {}
    for pool in ("repositories", "collections"):
        items = route[pool]
        assert isinstance(items, list)
        out[pool] = [(str(m["name"]), round(float(m["confidence"]), 4)) for m in items]
    return out
