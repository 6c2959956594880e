import assert from "node:assert/strict";
import { test } from "node:test";
import * as vscode from "vscode";
import type { SearchParams, SearchResponse, SearchResult } from "../../src/protocol";
import { firstSnippetLine, kindIcon, nextSince, resultRange, SearchSession, type ResultItem } from "../../src/search";
import type { SearchDefaults } from "../../src/settings";
import type { FakeQuickPick } from "../support/vscode-stub";
import { response, result } from "../support/results";

interface Pending {
  params: SearchParams;
  token: vscode.CancellationToken;
  resolve(value: SearchResponse): void;
  reject(error: Error): void;
}

function harness(defaults: Partial<SearchDefaults> = {}, options: { multiFolder?: boolean } = {}) {
  const requests: Pending[] = [];
  const opened: SearchResult[] = [];
  const logged: string[] = [];
  const pick = vscode.window.createQuickPick<ResultItem>() as unknown as FakeQuickPick<ResultItem>;
  const settings: SearchDefaults = { debounceMs: 20, includeTests: true, ...defaults };
  const session = new SearchSession(
    pick as unknown as vscode.QuickPick<ResultItem>,
    {
      request: (params, token) =>
        new Promise<SearchResponse>((resolve, reject) => requests.push({ params, token, resolve, reject })),
      open: (r) => {
        opened.push(r);
      },
      defaults: () => settings,
      log: (m) => logged.push(m),
    },
    options,
  );
  session.show();
  return { pick, session, requests, opened, logged };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test("typing is debounced: one request for the last value", async () => {
  const { pick, requests } = harness();
  pick.type("r");
  pick.type("re");
  pick.type("retry");
  assert.equal(requests.length, 0, "nothing is sent before the debounce");
  await sleep(60);
  assert.equal(requests.length, 1);
  // No top_k or snippet_chars: the person set neither, so the server's defaults apply.
  assert.deepEqual(requests[0].params, {
    query: "retry",
    layers: ["code", "summary", "doc"],
  });
  assert.equal(pick.busy, true);
});

test("a newer query cancels the older request and its late answer is never shown", async () => {
  const { pick, session, requests } = harness();
  pick.type("retry");
  await sleep(40);
  assert.equal(requests.length, 1);
  const older = requests[0];
  pick.type("charge");
  assert.equal(older.token.isCancellationRequested, true, "cancelled at the keystroke, before the debounce");
  await sleep(40);
  assert.equal(requests.length, 2);
  const newer = requests[1];
  newer.resolve(response([result({ qualified_name: "billing.submit" })]));
  await session.idle;
  older.resolve(response([result({ qualified_name: "stale.answer" })]));
  await sleep(5);
  assert.deepEqual(
    pick.items.map((i) => i.label),
    ["$(symbol-function) billing.submit"],
  );
  assert.equal(pick.busy, false);
});

test("items: kind icon, qualified name, path:line, first snippet line, alwaysShow", async () => {
  const { pick, session, requests } = harness({}, { multiFolder: true });
  assert.equal(pick.matchOnDescription, false);
  assert.equal(pick.matchOnDetail, false);
  pick.type("retry");
  await sleep(40);
  requests[0].resolve(
    response([
      result(),
      result({ kind: "class", qualified_name: "billing.Ledger", start_line: 17 }),
      result({ kind: "section", layer: "doc", qualified_name: "Billing", path: "README.md", start_line: 1, snippet: "# Billing" }),
    ]),
  );
  await session.idle;
  const [fn, cls, doc] = pick.items;
  assert.deepEqual(
    { label: fn.label, description: fn.description, detail: fn.detail, alwaysShow: fn.alwaysShow },
    {
      label: "$(symbol-function) billing.retry_failed_charge",
      description: "billing/billing.py:9",
      detail: "def retry_failed_charge(amount, attempts=3):",
      alwaysShow: true,
    },
  );
  assert.equal(cls.label, "$(symbol-class) billing.Ledger");
  assert.equal(doc.label, "$(markdown) Billing");
  assert.ok(pick.items.every((i) => i.alwaysShow));
});

test("Enter opens the chosen result and closes the picker", async () => {
  const { pick, session, requests, opened } = harness();
  pick.type("retry");
  await sleep(40);
  requests[0].resolve(response([result(), result({ qualified_name: "billing.Ledger.record", start_line: 20 })]));
  await session.idle;
  pick.accept(pick.items[1]);
  await sleep(1);
  assert.equal(opened.length, 1);
  assert.equal(opened[0].qualified_name, "billing.Ledger.record");
  assert.equal(pick.visible, false);
  assert.equal(pick.disposed, true);
});

test("buttons toggle docs, tests and since, and re-run the query", async () => {
  const { pick, session, requests } = harness();
  pick.type("retry");
  await sleep(40);
  requests[0].resolve(response([result()]));
  await session.idle;

  pick.pressButton(1); // docs off
  await sleep(40);
  assert.deepEqual(requests[1].params.layers, ["code", "summary"]);
  assert.match(pick.title ?? "", /code only/);

  pick.pressButton(2); // tests left out by the server, by its rule, unless the query asks for test code
  await sleep(40);
  assert.equal(requests[2].params.tests, "auto");
  assert.equal(requests[2].params.top_k, undefined);
  assert.match((pick.buttons[2] as { tooltip?: string }).tooltip ?? "", /unless the query asks for test code/);
  requests[2].resolve(
    response([
      // what the server kept for the query (it asked for test code) is shown
      result({ path: "billing_checks.py", qualified_name: "billing_checks.check", is_test: true }),
      result(),
    ]),
  );
  await session.idle;
  assert.deepEqual(pick.items.map((i) => i.result?.path), ["billing_checks.py", "billing.py"]);

  pick.pressButton(3); // since: 1d
  await sleep(40);
  assert.equal(requests[3].params.since, "1d");
  assert.match(pick.title ?? "", /since 1d/);

  pick.pressButton(0); // code off while docs is off: docs comes back on
  await sleep(40);
  assert.deepEqual(requests[4].params.layers, ["doc"]);
});

test("-tests leaves test files out whatever the query", async () => {
  const { pick, session, requests } = harness();
  pick.type('-tests "card declined"');
  await sleep(40);
  assert.equal(requests[0].params.query, '"card declined"');
  assert.equal(requests[0].params.tests, "exclude");
  requests[0].resolve(
    response([
      // a result the server flags as a test is not shown (whatever its path says) ...
      result({ path: "billing_checks.py", qualified_name: "billing_checks.check", is_test: true }),
      // ... and one it does not flag is, even under a folder a regex would call tests
      result({ path: "tests/helpers.py", qualified_name: "tests.helpers.retry", is_test: false }),
      result(),
    ]),
  );
  await session.idle;
  assert.deepEqual(pick.items.map((i) => i.result?.path), ["tests/helpers.py", "billing.py"]);
});

test("prefixes in the query set filters and leave the query text", async () => {
  const { pick, requests } = harness({ includeTests: false, resultCount: 10, snippetWidth: 300 });
  pick.type("since:2w retry  lang:Python path:src/** until:v1.2.0 +tests -docs charge");
  await sleep(40);
  assert.deepEqual(requests[0].params, {
    query: "retry charge",
    top_k: 10, // set by the person: sent
    layers: ["code", "summary"],
    snippet_chars: 300,
    languages: ["python"],
    paths: ["src/**"],
    since: "2w",
    until: "v1.2.0",
  });
});

test("a query of filters only, or an empty one, sends nothing and clears the list", async () => {
  const { pick, requests } = harness();
  pick.type("since:2w");
  pick.type("");
  await sleep(40);
  assert.equal(requests.length, 0);
  assert.deepEqual(pick.items, []);
});

test("a server error becomes one item that says so; the incomplete index is mentioned", async () => {
  const { pick, session, requests, logged } = harness();
  pick.type("retry");
  await sleep(40);
  requests[0].reject(new Error("since: cannot read 'yesterweek'"));
  await session.idle;
  assert.equal(pick.items.length, 1);
  assert.match(pick.items[0].label, /could not search/);
  assert.match(pick.items[0].detail ?? "", /yesterweek/);
  assert.equal(logged.length, 1);

  pick.type("retry charge");
  await sleep(40);
  requests[1].resolve(response([result()], false));
  await session.idle;
  assert.equal(pick.items.length, 2);
  assert.match(pick.items[1].label, /still being built/);
  assert.match(pick.items[1].detail ?? "", /billing: indexing 33%/);
});

test("closing the picker cancels the running request", async () => {
  const { pick, requests } = harness();
  pick.type("retry");
  await sleep(40);
  pick.hide();
  assert.equal(requests[0].token.isCancellationRequested, true);
  assert.equal(pick.disposed, true);
});

test("helpers: icons, snippet lines, ranges and since presets", () => {
  assert.equal(kindIcon({ kind: "method", layer: "code" }), "symbol-method");
  assert.equal(kindIcon({ kind: "whatever", layer: "code" }), "symbol-misc");
  assert.equal(kindIcon({ kind: "function", layer: "doc" }), "markdown");
  assert.equal(firstSnippetLine("\n\n   x = 1\ny"), "x = 1");
  assert.equal(firstSnippetLine("a".repeat(300)).length, 160);
  const range = resultRange({ start_line: 9, end_line: 14 });
  assert.deepEqual([range.start.line, range.start.character, range.end.line], [8, 0, 13]);
  assert.deepEqual([nextSince(undefined), nextSince("1d"), nextSince("1w"), nextSince("1mo"), nextSince("2w")], [
    "1d",
    "1w",
    "1mo",
    undefined,
    undefined,
  ]);
});

test("collection resources come in their own section; a related resource is named", async () => {
  const { pick, session, requests, opened } = harness();
  pick.type("gift card");
  await sleep(40);
  requests[0].resolve({
    ...response([
      result({
        related: [
          { collection: "billing-prd", path: "refunds.md", start_line: 3, end_line: 6, title: "Refunds > Partial refunds", term: "refund_order" },
        ],
      }),
    ]),
    resources: [
      {
        ...result(),
        collection: "billing-prd",
        title: "Gift cards > Paying with a gift card",
        uri: "file:///docs/billing/gift-cards.md",
        path: "gift-cards.md",
        start_line: 3,
        kind: "section",
        layer: "doc",
        snippet: "## Paying with a gift card",
      },
    ],
    routed: null,
  });
  await session.idle;
  const labels = pick.items.map((i) => i.label);
  assert.deepEqual(labels, [
    "$(symbol-function) billing.retry_failed_charge",
    "Document collections",
    "$(book) Gift cards > Paying with a gift card",
  ]);
  assert.equal(pick.items[1].kind, vscode.QuickPickItemKind.Separator);
  assert.equal(pick.items[2].description, "billing-prd · gift-cards.md:3");
  assert.match(pick.items[0].detail ?? "", /mentioned in billing-prd: Refunds > Partial refunds/);
  pick.accept(pick.items[2]);
  await sleep(1);
  assert.equal(opened[0].uri, "file:///docs/billing/gift-cards.md");
  assert.equal(opened[0].start_line, 3);
});

test("in a multi-root window the folders the router chose head the list", async () => {
  const { pick, session, requests } = harness({}, { multiFolder: true });
  pick.type("porter stem");
  await sleep(40);
  requests[0].resolve({ ...response([result({ folder: "search" })]), routed: ["search"] });
  await session.idle;
  assert.equal(pick.items[0].label, "Routed to search");
  assert.equal(pick.items[0].kind, vscode.QuickPickItemKind.Separator);
  pick.type("zzqx");
  await sleep(40);
  requests[1].resolve({ ...response([result()]), routed: [] });
  await session.idle;
  assert.equal(pick.items[0].label, "Searched every folder");
});
