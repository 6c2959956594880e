"""SQL DDL files as resources: one per table, view, type or function."""

from __future__ import annotations

from codesift.config import IndexSettings
from codesift.parsing import parse_source
from codesift.parsing.model import ParsedChunk, ParsedFile
from codesift.parsing.sql import parse_sql, split_statements


def sql(*lines: str) -> str:
    return "\n".join(lines) + "\n"


def resource_chunks(parsed: ParsedFile, name: str) -> list[ParsedChunk]:
    index = next(n.index for n in parsed.nodes if n.name == name)
    return [c for c in parsed.chunks if c.node == index and c.layer == "doc"]


POSTGRES = sql(
    "-- Billing schema, version 2",  # 1
    "",  # 2
    "/* Customers who pay us.",  # 3
    " * One row per account. */",  # 4
    "CREATE TABLE IF NOT EXISTS billing.customers (",  # 5
    "    id bigserial PRIMARY KEY,",  # 6
    "    \"Email Address\" text NOT NULL DEFAULT 'none; yet',",  # 7
    "    plan text CHECK (plan IN ('free', 'pro')),",  # 8
    "    created_at timestamptz NOT NULL DEFAULT now(),",  # 9
    '    CONSTRAINT email_unique UNIQUE ("Email Address")',  # 10
    ");",  # 11
    "",  # 12
    "CREATE INDEX customers_created_idx ON billing.customers (created_at);",  # 13
    "",  # 14
    "INSERT INTO billing.customers (id, plan) VALUES (1, 'pro; really');",  # 15
    "",  # 16
    "-- Keeps invoice totals current.",  # 17
    "CREATE OR REPLACE FUNCTION billing.touch_totals() RETURNS trigger AS $fn$",  # 18
    "BEGIN",  # 19
    "  UPDATE billing.totals SET n = n + 1; -- a ; inside the body",  # 20
    "  RETURN NEW;",  # 21
    "END;",  # 22
    "$fn$ LANGUAGE plpgsql;",  # 23
    "",  # 24
    "-- What each customer owes.",  # 25
    "CREATE MATERIALIZED VIEW billing.balances (customer_id, amount_due) AS",  # 26
    "  SELECT customer_id, sum(amount) FROM billing.invoices GROUP BY 1;",  # 27
    "",  # 28
    "ALTER TABLE billing.customers ADD COLUMN phone_number text;",  # 29
    "COMMENT ON COLUMN billing.customers.plan IS 'Pricing tier; free or pro';",  # 30
    "CREATE TYPE billing.invoice_state AS ENUM ('draft', 'open', 'paid');",  # 31
    "GRANT SELECT ON billing.balances TO reporting;",  # 32
)


def test_statements_split_at_top_level_semicolons_only() -> None:
    starts = [POSTGRES[s.start : s.end].split("\n")[0] for s in split_statements(POSTGRES)]
    assert starts == [
        "CREATE TABLE IF NOT EXISTS billing.customers (",
        "CREATE INDEX customers_created_idx ON billing.customers (created_at);",
        "INSERT INTO billing.customers (id, plan) VALUES (1, 'pro; really');",
        "CREATE OR REPLACE FUNCTION billing.touch_totals() RETURNS trigger AS $fn$",
        "CREATE MATERIALIZED VIEW billing.balances (customer_id, amount_due) AS",
        "ALTER TABLE billing.customers ADD COLUMN phone_number text;",
        "COMMENT ON COLUMN billing.customers.plan IS 'Pricing tier; free or pro';",
        "CREATE TYPE billing.invoice_state AS ENUM ('draft', 'open', 'paid');",
        "GRANT SELECT ON billing.balances TO reporting;",
    ]


def test_tables_views_types_and_functions_are_resources() -> None:
    parsed = parse_sql(POSTGRES, "db/schema.sql", 40)
    assert parsed.language == "sql"
    assert [(n.kind, n.name, n.qualified_name) for n in parsed.nodes] == [
        ("table", "customers", "billing.customers"),
        ("function", "touch_totals", "billing.touch_totals"),
        ("view", "balances", "billing.balances"),
        ("type", "invoice_state", "billing.invoice_state"),
    ]
    table = parsed.nodes[0]
    # The comment block right above belongs to the table; the file header does not.
    assert (table.doc_start_line, table.start_line, table.end_line) == (3, 5, 11)
    assert table.docstring == "Customers who pay us. One row per account."
    assert table.signature == "CREATE TABLE IF NOT EXISTS billing.customers"
    function = parsed.nodes[1]
    assert (function.code_start_line, function.end_line) == (17, 23)  # $fn$ body kept whole


def test_a_table_resource_lists_its_columns_and_collects_its_statements() -> None:
    parsed = parse_sql(POSTGRES, "db/schema.sql", 40)
    chunks = resource_chunks(parsed, "customers")
    assert [(c.layer, c.start_line, c.end_line, c.part) for c in chunks] == [
        ("doc", 3, 11, 0),
        ("doc", 13, 13, 1),  # its index
        ("doc", 29, 29, 2),  # ALTER TABLE ... ADD COLUMN
        ("doc", 30, 30, 3),  # COMMENT ON COLUMN
    ]
    assert {c.title for c in chunks} == {"Table billing.customers"}
    first = chunks[0].text
    assert first.startswith("Table billing.customers\n\n/* Customers who pay us.\n")
    assert first.endswith(");\nColumns: id, Email Address, plan, created_at")
    assert chunks[2].text.endswith("\nColumns: phone_number")
    assert "Pricing tier" in chunks[3].text


def test_a_view_with_a_column_list_lists_its_columns() -> None:
    parsed = parse_sql(POSTGRES, "db/schema.sql", 40)
    view, grant = resource_chunks(parsed, "balances")
    assert (view.start_line, view.end_line) == (25, 27)
    assert (grant.start_line, grant.end_line) == (32, 32)  # GRANT ... ON it
    assert view.text.startswith("View billing.balances\n\n-- What each customer owes.\n")
    assert view.text.endswith("Columns: customer_id, amount_due")


def test_statements_that_are_not_ddl_become_line_windows() -> None:
    parsed = parse_sql(POSTGRES, "db/schema.sql", 40)
    windows = [
        (c.layer, c.start_line, c.end_line, c.title) for c in parsed.chunks if c.node is None
    ]
    assert windows == [
        ("code", 1, 1, "db/schema.sql"),
        ("code", 15, 15, "db/schema.sql"),
    ]
    assert [c.start_line for c in parsed.chunks] == sorted(c.start_line for c in parsed.chunks)


def test_a_resource_has_a_signature_and_a_summary_like_a_definition() -> None:
    parsed = parse_sql(POSTGRES, "db/schema.sql", 40)
    chunks = [
        (c.layer, c.start_line, c.end_line, c.text)
        for c in parsed.chunks
        if c.node == 0 and c.layer != "doc"
    ]
    assert chunks == [
        ("ast", 5, 11, "CREATE TABLE IF NOT EXISTS billing.customers"),
        (
            "summary",
            5,
            11,
            "billing.customers (table)\nCREATE TABLE IF NOT EXISTS billing.customers\n"
            "Customers who pay us.",
        ),
    ]


def test_mysql_and_sqlite_quoting() -> None:
    text = sql(
        "# MySQL dump",  # 1
        "CREATE TABLE `order items` (",  # 2
        "  `id` INT NOT NULL AUTO_INCREMENT,",  # 3
        "  `note` VARCHAR(80) DEFAULT 'it\\'s; fine',",  # 4
        "  PRIMARY KEY (`id`),",  # 5
        "  KEY `note_idx` (`note`)",  # 6
        ") ENGINE=InnoDB;",  # 7
        "DELIMITER //",  # 8
        "CREATE PROCEDURE add_item(IN n INT)",  # 9
        "BEGIN",  # 10
        "  INSERT INTO `order items` (`id`) VALUES (n);",  # 11
        "END //",  # 12
        "DELIMITER ;",  # 13
        "CREATE VIEW recent AS SELECT * FROM `order items`;",  # 14
        "ALTER TABLE `order items` ADD COLUMN `gift wrap` BOOL, ADD UNIQUE KEY u (`note`);",  # 15
        "ALTER TABLE `order items` ADD INDEX by_note (`note`), ADD `qty` INT;",  # 16
        "COMMENT ON COLUMN `order items`.`qty` IS 'How many';",  # 17
    )
    parsed = parse_sql(text, "dump.sql", 40)
    assert [(n.kind, n.name, n.start_line, n.end_line) for n in parsed.nodes] == [
        ("table", "order items", 2, 7),
        ("function", "add_item", 9, 12),
        ("view", "recent", 14, 14),
    ]
    assert resource_chunks(parsed, "order items")[0].text.endswith("Columns: id, note")
    assert resource_chunks(parsed, "order items")[0].start_line == 1  # the # comment
    altered = [c.text.split("\n")[-1] for c in resource_chunks(parsed, "order items")[1:]]
    assert altered == [
        "Columns: gift wrap",
        "Columns: qty",
        "COMMENT ON COLUMN `order items`.`qty` IS 'How many';",
    ]

    sqlite = sql(
        'CREATE TABLE [line items] ([item id] INTEGER, "qty" INTEGER);',
        "CREATE TABLE t2(a, b); CREATE TABLE t3(c);",
    )
    parsed = parse_sql(sqlite, "app.sqlite.sql", 40)
    assert [n.name for n in parsed.nodes] == ["line items", "t2", "t3"]
    assert resource_chunks(parsed, "line items")[0].text.endswith("Columns: item id, qty")
    t3 = resource_chunks(parsed, "t3")[0]
    # Two statements on one line: each resource keeps its own statement only.
    assert t3.text == "Table t3\n\nCREATE TABLE t3(c);\nColumns: c"
    assert "t3" not in resource_chunks(parsed, "t2")[0].text


def test_a_short_comment_a_blank_line_above_titles_a_statement() -> None:
    text = sql(
        "/*",  # 1
        " * Billing schema: the file's header comment, not the first table's.",  # 2
        " */",  # 3
        "",  # 4
        "CREATE TABLE plans (id int);",  # 5
        "",  # 6
        "/*",  # 7
        " * 6.5",  # 8
        " * CHARACTER_DATA domain",  # 9
        " */",  # 10
        "",  # 11
        "CREATE DOMAIN character_data AS varchar;",  # 12
        "",  # 13
        "-- A section of the file, too far from what follows",  # 14
        "",  # 15
        "",  # 16
        "CREATE TABLE coupons (code text);",  # 17
    )
    parsed = parse_sql(text, "s.sql", 40)
    assert [(n.name, n.code_start_line, n.start_line) for n in parsed.nodes] == [
        ("plans", 5, 5),
        ("character_data", 7, 12),
        ("coupons", 17, 17),
    ]
    assert parsed.nodes[1].docstring == "6.5 CHARACTER_DATA domain"


def test_a_begin_atomic_body_is_one_statement() -> None:
    text = sql(
        "/* Position of a column in an index. */",  # 1
        "CREATE FUNCTION index_position(oid, smallint) RETURNS int",  # 2
        "    LANGUAGE sql STRICT STABLE",  # 3
        "BEGIN ATOMIC",  # 4
        "SELECT (ss.a).n FROM ss WHERE (ss.a).x = $2;",  # 5
        "SELECT 1;",  # 6
        "END;",  # 7
        "",  # 8
        "CREATE TABLE after_it (a int);",  # 9
    )
    parsed = parse_sql(text, "f.sql", 40)
    assert [(n.name, n.start_line, n.end_line) for n in parsed.nodes] == [
        ("index_position", 2, 7),
        ("after_it", 9, 9),
    ]
    assert not [c for c in parsed.chunks if c.node is None]


def test_sql_server_batches_end_at_go_lines() -> None:
    text = sql(
        "-- Orders placed in the shop.",  # 1
        "CREATE TABLE [dbo].[Orders] (",  # 2
        "  [OrderId] INT NOT NULL,",  # 3
        "  [Total] MONEY",  # 4
        ")",  # 5
        "GO",  # 6
        "CREATE VIEW dbo.BigOrders AS SELECT * FROM dbo.Orders WHERE Total > 100",  # 7
        "go",  # 8
        "CREATE INDEX IX_Orders_Total ON [dbo].[Orders] ([Total])",  # 9
        "GO",  # 10
        "SELECT Total FROM dbo.Orders",  # 11
    )
    parsed = parse_sql(text, "orders.sql", 40)
    assert [(n.kind, n.qualified_name, n.start_line, n.end_line) for n in parsed.nodes] == [
        ("table", "dbo.Orders", 2, 5),
        ("view", "dbo.BigOrders", 7, 7),
    ]
    assert [(c.start_line, c.end_line) for c in resource_chunks(parsed, "Orders")] == [
        (1, 5),
        (9, 9),
    ]
    assert resource_chunks(parsed, "Orders")[0].text.endswith(")\nColumns: OrderId, Total")
    windows = [(c.start_line, c.text) for c in parsed.chunks if c.node is None]
    assert windows == [(11, "SELECT Total FROM dbo.Orders")]


def test_unterminated_and_odd_text_never_raises() -> None:
    for text in (
        "CREATE TABLE broken (a int",
        "SELECT 'unclosed",
        "/* unclosed comment",
        "CREATE FUNCTION f() AS $$ never closed",
        "",
        "\n\n;;;\n",
        "CREATE TABLE",
        "\ufeffCREATE TABLE bom (a int);\r\nCREATE TABLE crlf (b int);\r\n",
    ):
        parsed = parse_sql(text, "x.sql", 40)
        assert all(c.text.strip() for c in parsed.chunks)
    parsed = parse_sql("\ufeffCREATE TABLE bom (a int);\r\nCREATE TABLE crlf (b int);\r\n", "x", 40)
    assert [(n.name, n.start_line) for n in parsed.nodes] == [("bom", 1), ("crlf", 2)]


def test_parse_source_dispatches_sql_files() -> None:
    parsed = parse_source(POSTGRES, "db/schema.sql", "sql", IndexSettings())
    assert parsed.language == "sql"
    assert parsed.nodes[0].kind == "table"
