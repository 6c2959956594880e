"""OpenAPI, Swagger and JSON Schema files as resources, and how they are told apart."""

from __future__ import annotations

import json

import pytest

from codesift.config import IndexSettings
from codesift.parsing import parse_source
from codesift.parsing.jsonschema import parse_json_schema
from codesift.parsing.languages import detect_language, refine_language
from codesift.parsing.located import DocumentError, load_json
from codesift.parsing.model import ParsedFile
from codesift.parsing.openapi import parse_openapi


def lines(*rows: str) -> str:
    return "\n".join(rows) + "\n"


def resources(parsed: ParsedFile) -> list[tuple[str, str, str, int, int]]:
    return [(n.kind, n.name, n.qualified_name, n.start_line, n.end_line) for n in parsed.nodes]


def text_of(parsed: ParsedFile, qualified_name: str) -> str:
    node = next(n.index for n in parsed.nodes if n.qualified_name == qualified_name)
    return "\n".join(c.text for c in parsed.chunks if c.node == node and c.layer == "doc")


OPENAPI_YAML = lines(
    "openapi: 3.0.3",  # 1
    "info:",  # 2
    "  title: Billing API",  # 3
    '  version: "1.0"',  # 4
    "paths:",  # 5
    "  /users/{id}:",  # 6
    "    parameters:",  # 7
    "      - name: id",  # 8
    "        in: path",  # 9
    "        required: true",  # 10
    "        description: The user's id.",  # 11
    "        schema: {type: string}",  # 12
    "    get:",  # 13
    "      summary: Get a user by id",  # 14
    "      description: |",  # 15
    "        Returns one user with their billing address.",  # 16
    "      operationId: getUser",  # 17
    "      tags: [users]",  # 18
    "      parameters:",  # 19
    "        - $ref: '#/components/parameters/Expand'",  # 20
    "      responses:",  # 21
    '        "200":',  # 22
    "          description: The user.",  # 23
    "          content:",  # 24
    "            application/json:",  # 25
    "              schema:",  # 26
    "                $ref: '#/components/schemas/User'",  # 27
    '        "404":',  # 28
    "          description: No such user.",  # 29
    "",  # 30
    "    # deleting is soft",  # 31
    "    delete:",  # 32
    "      summary: Delete a user",  # 33
    "      responses:",  # 34
    '        "204": {description: Deleted}',  # 35
    "  /invoices:",  # 36
    "    post:",  # 37
    "      summary: Create an invoice for a customer",  # 38
    "      requestBody:",  # 39
    "        description: The invoice to create.",  # 40
    "        content:",  # 41
    "          application/json:",  # 42
    "            schema:",  # 43
    "              $ref: '#/components/schemas/Invoice'",  # 44
    "      responses:",  # 45
    '        "201": {description: Created}',  # 46
    "components:",  # 47
    "  parameters:",  # 48
    "    Expand:",  # 49
    "      name: expand",  # 50
    "      in: query",  # 51
    "      description: Related objects to include.",  # 52
    "  schemas:",  # 53
    "    User:",  # 54
    "      type: object",  # 55
    "      description: A customer account.",  # 56
    "      required: [id]",  # 57
    "      properties:",  # 58
    "        id: {type: string, description: Unique id}",  # 59
    "        address:",  # 60
    "          $ref: '#/components/schemas/Address'",  # 61
    "        emails:",  # 62
    "          type: array",  # 63
    "          items: {type: string, format: email}",  # 64
    "    Address:",  # 65
    "      type: object",  # 66
    "      properties:",  # 67
    "        postal_code: {type: string, description: ZIP or postal code}",  # 68
)


def test_openapi_yaml_operations_and_schemas_are_resources() -> None:
    parsed = parse_openapi(OPENAPI_YAML, "api/billing.yaml")
    assert parsed.language == "openapi"
    assert resources(parsed) == [
        ("endpoint", "getUser", "GET /users/{id}", 13, 29),
        ("endpoint", "DELETE /users/{id}", "DELETE /users/{id}", 32, 35),
        ("endpoint", "POST /invoices", "POST /invoices", 37, 46),
        ("schema", "User", "components/schemas/User", 54, 64),
        ("schema", "Address", "components/schemas/Address", 65, 68),
    ]
    chunks = [c for c in parsed.chunks if c.node == 0 and c.layer == "doc"]
    assert [(c.layer, c.start_line, c.end_line, c.title) for c in chunks] == [
        ("doc", 13, 29, "GET /users/{id}")
    ]
    assert chunks[0].text == lines(
        "GET /users/{id}",
        "",
        "Get a user by id",
        "Returns one user with their billing address.",
        "operationId: getUser",
        "Tags: users",
        "Parameters:",
        "- id (path, required, string): The user's id.",
        "- expand (query): Related objects to include.",
        "Responses:",
        "- 200: The user. [schemas: User]",
        "- 404: No such user.",
    ).rstrip("\n")
    assert "Request body (application/json): The invoice to create. [schemas: Invoice]" in (
        text_of(parsed, "POST /invoices")
    )
    user = text_of(parsed, "components/schemas/User")
    assert user.startswith("Schema User\n\nA customer account.\nType: object\nProperties:\n")
    assert "- id (string, required): Unique id" in user
    assert "- address (Address)" in user
    assert "- emails (string[])" in user


def test_the_api_itself_is_a_section_over_its_info_block() -> None:
    text = lines(
        "openapi: 3.1.0",  # 1
        "info:",  # 2
        "  title: Billing API",  # 3
        "  version: 2.1.0",  # 4
        "  description: |",  # 5
        "    Charges, invoices and refunds.",  # 6
        "servers:",  # 7
        "  - url: https://billing.example.com/v2",  # 8
        "tags:",  # 9
        "  - name: refunds",  # 10
        "    description: Money back to a card",  # 11
        "paths: {}",  # 12
    )
    parsed = parse_openapi(text, "billing.yaml")
    assert parsed.nodes == []
    (section,) = parsed.chunks
    assert (section.layer, section.node, section.start_line, section.end_line) == (
        "doc",
        None,
        2,
        6,
    )
    assert section.title == "Billing API"
    assert section.text == lines(
        "Billing API",
        "",
        "Version 2.1.0",
        "Charges, invoices and refunds.",
        "Servers: https://billing.example.com/v2",
        "Tags:",
        "- refunds: Money back to a card",
    ).rstrip("\n")


SWAGGER_JSON = json.dumps(
    {
        "swagger": "2.0",
        "info": {"title": "Petstore", "version": "1"},
        "basePath": "/v1",
        "paths": {
            "/pets": {
                "get": {
                    "summary": "List pets",
                    "operationId": "listPets",
                    "parameters": [
                        {"name": "limit", "in": "query", "type": "integer", "description": "Max"}
                    ],
                    "responses": {
                        "200": {
                            "description": "A page of pets",
                            "schema": {"type": "array", "items": {"$ref": "#/definitions/Pet"}},
                        }
                    },
                },
                "post": {
                    "summary": "Add a pet to the store",
                    "parameters": [
                        {
                            "name": "body",
                            "in": "body",
                            "description": "The pet to add",
                            "schema": {"$ref": "#/definitions/Pet"},
                        }
                    ],
                    "responses": {"201": {"description": "Created"}},
                },
            }
        },
        "definitions": {
            "Pet": {
                "type": "object",
                "required": ["name"],
                "properties": {
                    "name": {"type": "string", "description": "The pet's name"},
                    "owner": {
                        "type": "object",
                        "properties": {"email": {"type": "string", "description": "Contact"}},
                    },
                },
            }
        },
    },
    indent=2,
)


def test_swagger_2_json_operations_and_definitions() -> None:
    parsed = parse_openapi(SWAGGER_JSON, "petstore.json")
    source = SWAGGER_JSON.split("\n")
    assert [(n.kind, n.name, n.qualified_name) for n in parsed.nodes] == [
        ("endpoint", "listPets", "GET /v1/pets"),
        ("endpoint", "POST /v1/pets", "POST /v1/pets"),
        ("schema", "Pet", "definitions/Pet"),
    ]
    get, post, pet = parsed.nodes
    assert source[get.start_line - 1].strip() == '"get": {'
    assert source[get.end_line - 1].strip() == "},"
    assert source[post.start_line - 1].strip() == '"post": {'
    assert source[pet.start_line - 1].strip() == '"Pet": {'
    assert get.start_line < get.end_line < post.start_line < post.end_line < pet.start_line
    listing = text_of(parsed, "GET /v1/pets")
    assert "- limit (query, integer): Max" in listing
    assert "- 200: A page of pets [schemas: Pet]" in listing
    assert "Request body: The pet to add [schemas: Pet]" in text_of(parsed, "POST /v1/pets")
    schema = text_of(parsed, "definitions/Pet")
    assert "- name (string, required): The pet's name" in schema
    assert "- owner.email (string): Contact" in schema


PERSON_SCHEMA = lines(
    "{",  # 1
    '  "$schema": "https://json-schema.org/draft/2020-12/schema",',  # 2
    '  "$id": "https://example.com/person.schema.json",',  # 3
    '  "title": "Person",',  # 4
    '  "description": "A person who may hold an account.",',  # 5
    '  "type": "object",',  # 6
    '  "properties": {',  # 7
    '    "firstName": {"type": "string", "description": "The given name."},',  # 8
    '    "age": {"type": ["integer", "null"], "minimum": 0},',  # 9
    '    "address": {"$ref": "#/$defs/Address"},',  # 10
    '    "status": {"enum": ["active", "closed"]}',  # 11
    "  },",  # 12
    '  "required": ["firstName"],',  # 13
    '  "$defs": {',  # 14
    '    "Address": {',  # 15
    '      "type": "object",',  # 16
    '      "description": "A postal address.",',  # 17
    '      "properties": {',  # 18
    '        "postalCode": {"type": "string", "description": "ZIP or postal code"}',  # 19
    "      }",  # 20
    "    }",  # 21
    "  }",  # 22
    "}",  # 23
)


def test_json_schema_root_and_defs_are_resources() -> None:
    parsed = parse_json_schema(PERSON_SCHEMA, "schemas/person.schema.json")
    assert parsed.language == "jsonschema"
    assert resources(parsed) == [
        ("schema", "Person", "Person", 1, 23),
        ("schema", "Address", "$defs/Address", 15, 21),
    ]
    assert text_of(parsed, "Person") == lines(
        "Schema Person",
        "",
        "Title: Person",
        "A person who may hold an account.",
        "Type: object",
        "Properties:",
        "- firstName (string, required): The given name.",
        "- age (integer | null)",
        "- address (Address)",
        "- status (enum(active, closed))",
    ).rstrip("\n")
    assert "- postalCode (string): ZIP or postal code" in text_of(parsed, "$defs/Address")
    assert parsed.nodes[0].docstring == "A person who may hold an account."


def test_a_yaml_schema_without_a_title_is_named_by_its_file() -> None:
    text = lines(
        "$schema: http://json-schema.org/draft-07/schema#",
        "type: object",
        "properties:",
        "  retries: {type: integer, description: How often a charge is retried}",
        "definitions:",
        "  Backoff:",
        "    type: string",
    )
    parsed = parse_json_schema(text, "config/billing.schema.yaml")
    assert [(n.name, n.start_line, n.end_line) for n in parsed.nodes] == [
        ("billing", 1, 7),
        ("Backoff", 6, 7),
    ]
    assert "- retries (integer): How often a charge is retried" in text_of(parsed, "billing")


@pytest.mark.parametrize(
    ("path", "text", "language"),
    [
        ("api/billing.yaml", OPENAPI_YAML, "openapi"),
        ("api/billing.yml", "# API\nswagger: '2.0'\n", "openapi"),
        ("petstore.json", SWAGGER_JSON, "openapi"),
        ("person.json", PERSON_SCHEMA, "jsonschema"),
        ("person.schema.json", '{"type": "object"}', "jsonschema"),
        ("conf.yaml", "$schema: https://json-schema.org/draft-07/schema\n", "jsonschema"),
        # An editor config that names the schema it follows is not a schema.
        (".vscode/settings.json", '{"$schema": "https://json.schemastore.org/x"}', "text"),
        ("package.json", '{"name": "x", "scripts": {"openapi": "gen"}}', "text"),
        ("values.yaml", "image:\n  openapi: true\n", "text"),
        # The key need not come first; a nested one does not count.
        ("api.json", '{"info": {"title": "x", "openapi": 1}, "openapi": "3.0.0"}', "openapi"),
        ("nested.json", '{"info": {"openapi": "3.0.0"}}', "text"),
        ("suite.json", '[{"schema": {"$schema": "http://json-schema.org/x"}}]', "text"),
        ("late.json", '{"type": "object", "$schema": "http://json-schema.org/x"}', "jsonschema"),
        ("quoted.json", '{"a": "\\"openapi\\": 1", "b": {}}', "text"),
        ("nested.yaml", "spec:\n  $schema: https://json-schema.org/draft/2020-12/schema\n", "text"),
        ("docs/guide.rst", "Title\n=====\n", "rst"),
        ("docs/guide.rest", "", "rst"),
        ("db/schema.sql", "", "sql"),
        ("db/schema.DDL", "", "sql"),
        ("notes.txt", "openapi: 3\n", "text"),
    ],
)
def test_languages_by_path_and_content(path: str, text: str, language: str) -> None:
    assert refine_language(path, detect_language(path), text) == language


def test_documents_that_do_not_parse_fall_back_to_line_windows() -> None:
    settings = IndexSettings()
    broken_yaml = "openapi: 3.0.0\npaths:\n  /x: [unclosed\n"
    parsed = parse_source(broken_yaml, "api.yaml", "openapi", settings)
    assert parsed.language == "openapi" and parsed.nodes == []
    assert [(c.layer, c.start_line, c.end_line) for c in parsed.chunks] == [("code", 1, 3)]
    parsed = parse_source("{not json", "a.schema.json", "jsonschema", settings)
    assert parsed.language == "jsonschema" and parsed.chunks[0].text == "{not json"
    # A detected API file whose document turns out not to be one.
    parsed = parse_source("[1, 2]", "x.json", "openapi", settings)
    assert parsed.nodes == [] and parsed.chunks[0].text == "[1, 2]"


def test_the_json_scanner_reports_lines_and_rejects_bad_documents() -> None:
    doc = load_json('\ufeff{\n  "a": [1, 2.5e3, true, null],\n  "b": {"c": "d\\u00e9"}\n}\n')
    assert (doc.start_line, doc.end_line) == (1, 4)
    a = doc.get("a")
    assert a is not None and (a.key_line, a.start_line, a.end_line) == (2, 2, 2)
    assert [item.value for item in a.items()] == [1, 2500.0, True, None]
    b = doc.get("b")
    assert b is not None and b.text("c") == "d\u00e9"
    for bad in ("", "{", '{"a" 1}', "[1,]", "{} x", '{"a": tru}', "[" * 1000 + "]" * 1000):
        with pytest.raises(DocumentError):
            load_json(bad)


def test_yaml_merge_keys_and_aliases() -> None:
    text = lines(
        "openapi: 3.0.0",  # 1
        "x-common: &paging",  # 2
        "  - {name: limit, in: query, description: Page size}",  # 3
        "x-op: &listing",  # 4
        "  tags: [catalog]",  # 5
        "  summary: Default summary",  # 6
        "paths:",  # 7
        "  /items:",  # 8
        "    get:",  # 9
        "      <<: *listing",  # 10
        "      summary: List items",  # 11
        "      parameters: *paging",  # 12
        "      responses: {'200': {description: ok}}",  # 13
    )
    parsed = parse_openapi(text, "catalog.yaml")
    assert [(n.qualified_name, n.start_line, n.end_line) for n in parsed.nodes] == [
        ("GET /items", 9, 13)
    ]
    body = text_of(parsed, "GET /items")
    assert "List items\n" in body and "Default summary" not in body
    assert "Tags: catalog" in body and "- limit (query): Page size" in body
