"""Document formats end to end: a folder with one file of each format, indexed
and searched through the engine, finds a table by a column and an endpoint by
its summary."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from codesift.engine import Engine, Workspace
from codesift.engine.folder_search import search_folder

pytestmark = pytest.mark.usefixtures("git_isolation")

MakeRepo = Callable[..., Path]

FILES = {
    ".codesift.toml": "[embedding]\nenabled = false\n",
    "README.md": "# Billing\n\nCharges customers every month.\n",
    "notes.txt": "Remember to rotate the gateway keys.\n",
    "docs/runbook.rst": (
        "Runbook\n"
        "=======\n"
        "\n"
        "Failover\n"
        "--------\n"
        "\n"
        "Promote the replica when the primary database stops answering.\n"
    ),
    "db/schema.sql": (
        "-- Money we are owed.\n"
        "CREATE TABLE invoices (\n"
        "    id bigint PRIMARY KEY,\n"
        "    customer_id bigint NOT NULL,\n"
        "    vat_reverse_charge boolean NOT NULL DEFAULT false,\n"
        "    due_on date\n"
        ");\n"
        "\n"
        "INSERT INTO invoices (id, customer_id) VALUES (1, 1);\n"
    ),
    "api/openapi.yaml": (
        "openapi: 3.0.3\n"
        "info: {title: Billing, version: '1'}\n"
        "paths:\n"
        "  /invoices/{id}/refund:\n"
        "    post:\n"
        "      summary: Refund an overpaid invoice to the customer's card\n"
        "      operationId: refundInvoice\n"
        "      responses:\n"
        "        '202': {description: Refund queued}\n"
    ),
    "schemas/customer.schema.json": (
        "{\n"
        '  "title": "Customer",\n'
        '  "type": "object",\n'
        '  "properties": {"loyalty_tier": {"type": "string", "description": "Gold or silver"}}\n'
        "}\n"
    ),
}


def test_a_folder_of_documents_is_searchable_as_resources(make_repo: MakeRepo) -> None:
    root = make_repo(FILES)
    with Engine(Workspace.at(root), quiet=True) as engine:
        by_column = search_folder(engine, engine.request("vat reverse charge", layers=("doc",)))
        first = by_column.results[0]
        assert (first.path, first.kind, first.qualified_name) == (
            "db/schema.sql",
            "table",
            "invoices",
        )
        assert (first.layer, first.start_line, first.end_line) == ("doc", 1, 7)
        assert "vat_reverse_charge" in first.snippet

        by_summary = search_folder(
            engine, engine.request("refund an overpaid invoice", layers=("doc",))
        )
        first = by_summary.results[0]
        assert (first.path, first.kind) == ("api/openapi.yaml", "endpoint")
        assert first.qualified_name == "POST /invoices/{id}/refund"
        assert (first.start_line, first.end_line) == (5, 9)

        # Broad layers: the symbol stream finds the table by its name.
        named = search_folder(engine, engine.request("invoices"))
        assert (named.results[0].kind, named.results[0].qualified_name) == ("table", "invoices")

        runbook = search_folder(engine, engine.request("promote the replica", layers=("doc",)))
        assert runbook.results[0].qualified_name == "Runbook > Failover"

        schema = search_folder(engine, engine.request("loyalty tier gold", layers=("doc",)))
        assert (schema.results[0].kind, schema.results[0].qualified_name) == (
            "schema",
            "Customer",
        )
        languages = engine.status().languages
    assert {k: languages.get(k) for k in ("rst", "sql", "openapi", "jsonschema")} == {
        "rst": 1,
        "sql": 1,
        "openapi": 1,
        "jsonschema": 1,
    }
