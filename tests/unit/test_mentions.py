"""What documents mention and what code results answer to (retrieval/mentions.py)."""

from __future__ import annotations

from codesift.retrieval.mentions import mention_terms, result_terms


def test_code_looking_words_and_backquoted_names_are_mentions() -> None:
    text = (
        "Retries go through billing.retry.schedule (see billing/retry.py); the\n"
        "RetryPolicy caps them. Failed charges land in `invoices`. We retry often."
    )
    terms = mention_terms(text)
    assert {
        "billing.retry.schedule",
        "retry.schedule",
        "schedule",
        "billing/retry.py",
        "retry.py",
        "retrypolicy",
        "invoices",
    } <= terms
    assert "retry" not in terms and "often" not in terms  # plain words are not mentions


def test_a_result_answers_to_its_qualified_name_file_and_code_like_name() -> None:
    assert result_terms(
        "shop.payments.charge_card", "charge_card", "shop/payments.py", "function"
    ) == {
        "shop.payments.charge_card",
        "payments.charge_card",
        "charge_card",
        "shop/payments.py",
        "payments.py",
    }
    # a plain word is too common to be a mention of this function; a table's name is one
    assert "run" not in result_terms("tool.run", "run", "tool.py", "function")
    assert "users" in result_terms("schema.users", "users", "db/schema.sql", "table")
