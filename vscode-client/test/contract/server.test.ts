// Contract tests: the real `codesift serve`, driven over stdio by vscode-jsonrpc
// with the requests and params the extension itself builds (its settings
// mapping, its search session, its who-calls command, its status bar).

import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, before, describe, test } from "node:test";
import * as vscode from "vscode";
import { ResponseError } from "vscode-jsonrpc";
import { PEEK_COMMAND, whoCallsThis } from "../../src/callers";
import {
  INDEX_STATUS,
  REINDEX,
  ROUTE,
  SEARCH,
  STATUS,
  type IndexStatus,
  type ReindexResponse,
  type RouteResponse,
  type SearchParams,
  type SearchResponse,
  type StatusResponse,
} from "../../src/protocol";
import { SearchSession, type ResultItem } from "../../src/search";
import { readSettings } from "../../src/settings";
import { IndexStatusBar } from "../../src/statusBar";
import { fakeConfig } from "../support/config";
import { fileUri, makeWorkspace, ServerSession, unavailable, WORKSPACE } from "../support/server";
import { FakeQuickPick, FakeStatusBarItem } from "../support/vscode-stub";

const skip = unavailable();
if (skip) console.log(`# contract tests skipped: ${skip}`);

// Every setting the person can set, mapped by the extension: the server must
// accept all of them without a single complaint.
const USER_SETTINGS = {
  "embeddings.enabled": false,
  "index.location": ".codesift/vscode.db",
  "index.exclude": ["*.snap"],
  "fusion.rrfK": 50,
  "fusion.candidateCap": 200,
  "fusion.weights": { lexical: 1, doc: 0.4, symbol: 1.2, vector: 0.8 },
  "ranking.priors": { definition: true, tests: true, path: false, pathShort: true },
  "ranking.fileEvidence": 0.1,
  "ranking.fileDiversity": 0.5,
  "search.resultCount": 10,
  "search.snippetWidth": 300,
  "search.debounceMs": 10,
  serverOptions: { quietMs: 100 },
};

function isReady(root: string) {
  return (notifications: { method: string; params: unknown }[]) =>
    notifications.some(
      (n) => n.method === INDEX_STATUS && (n.params as IndexStatus).uri === fileUri(root) && (n.params as IndexStatus).state === "ready",
    );
}

describe("codesift serve, as the extension talks to it", { skip, timeout: 240000 }, () => {
  let root: string;
  let server: ServerSession;
  let capabilities: Record<string, unknown>;
  const settings = readSettings(fakeConfig(USER_SETTINGS));
  const item = new FakeStatusBarItem();
  const statusBar = new IndexStatusBar(item as never);

  // An explicit `undefined` token would make vscode-jsonrpc send the params as a
  // positional list ([params, null]), which the server rejects: pass it only when set.
  const search = (params: SearchParams, token?: vscode.CancellationToken) =>
    token
      ? server.connection.sendRequest<SearchResponse>(SEARCH, params, token as never)
      : server.connection.sendRequest<SearchResponse>(SEARCH, params);

  before(async () => {
    root = makeWorkspace(WORKSPACE);
    // Each read request waits 0.3 s before it starts, so a superseded search is
    // still running when the extension cancels it.
    server = ServerSession.start({ CODESIFT_TEST_READ_DELAY: "0.3" });
    server.on<IndexStatus>(INDEX_STATUS, (params) => statusBar.update(params));
    statusBar.setServer("starting");
    capabilities = await server.initialize([root], settings.serverOptions);
    statusBar.setServer("running");
    await server.waitFor(isReady(root), 60000, "the first index");
    const reply = await server.connection.sendRequest<ReindexResponse>(REINDEX, { wait: true, timeout_ms: 60000 });
    assert.equal(reply.done, true);
  });

  after(async () => {
    if (!server) return;
    const code = await server.close();
    assert.equal(code, 0, `exit code; stderr:\n${server.stderr.slice(-2000)}`);
    fs.rmSync(path.dirname(root), { recursive: true, force: true });
  });

  test("initialize: the options the extension sends are all accepted", () => {
    for (const key of ["workspaceSymbolProvider", "hoverProvider", "callHierarchyProvider", "definitionProvider"]) {
      assert.ok(capabilities[key], `server capability ${key}`);
    }
    assert.deepEqual(server.messages("window/showMessage"), []);
    assert.ok(fs.existsSync(path.join(root, ".codesift", "vscode.db")), "index.location is honoured");
  });

  test("indexStatus notifications drive the status bar to ready", () => {
    const statuses = server.messages<IndexStatus>(INDEX_STATUS);
    assert.ok(statuses.length >= 2);
    for (const s of statuses) {
      for (const key of ["folder", "uri", "state", "complete", "files_done", "files_total", "files_ratio", "chunks_done", "chunks_total", "vectors", "pending"]) {
        assert.ok(key in s, `indexStatus has ${key}: ${JSON.stringify(s)}`);
      }
    }
    assert.ok(statuses.some((s) => s.state !== "ready"), "progress before ready");
    assert.equal(statusBar.view().kind, "ready", item.tooltip);
    assert.equal(item.text, "$(search) codesift");
    assert.match(String(item.tooltip), /billing: ready · vectors off/);
  });

  test("the search QuickPick shows the server's results and opens the chosen one", async () => {
    const pick = new FakeQuickPick<ResultItem>();
    const opened: string[] = [];
    const session = new SearchSession(pick as never, {
      request: (params, token) => search(params, token),
      open: (r) => {
        opened.push(`${r.path}:${r.start_line}`);
      },
      defaults: () => settings.search,
    });
    session.show();
    pick.type("retry_failed_charge");
    await new Promise((r) => setTimeout(r, 30));
    await session.idle;
    const labels = pick.items.map((i) => i.label);
    assert.equal(labels[0], "$(symbol-function) billing.retry_failed_charge", labels.join("\n"));
    assert.equal(pick.items[0].description, "billing.py:9");
    assert.equal(pick.items[0].detail, "def retry_failed_charge(amount, attempts=3):");
    assert.ok(pick.items.every((i) => i.alwaysShow));
    assert.ok(pick.items.length <= (settings.search.resultCount ?? 200));
    pick.accept(pick.items[0]);
    await new Promise((r) => setTimeout(r, 10));
    assert.deepEqual(opened, ["billing.py:9"]);
  });

  test("filters: layers, tests and a since the server understands", async () => {
    const pick = new FakeQuickPick<ResultItem>();
    const sent: SearchParams[] = [];
    const session = new SearchSession(pick as never, {
      request: (params, token) => {
        sent.push(params);
        return search(params, token);
      },
      open: () => undefined,
      defaults: () => settings.search,
    });
    session.show();
    const run = async (value: string) => {
      pick.type(value);
      await new Promise((r) => setTimeout(r, 30));
      await session.idle;
      return pick.items.map((i) => i.result).filter((r) => r !== undefined);
    };

    const docsOnly = await run("retried gateway -code");
    assert.ok(docsOnly.length > 0);
    assert.ok(docsOnly.every((r) => r.layer === "doc"), JSON.stringify(docsOnly));

    const withTests = await run("retry_failed_charge +tests");
    assert.ok(withTests.some((r) => r.path === "tests/test_billing.py"));
    const withoutTests = await run("retry_failed_charge -tests");
    assert.ok(withoutTests.length > 0);
    assert.ok(withoutTests.every((r) => !r.path.startsWith("tests/")));

    const recent = await run("since:1w lang:python retry");
    assert.ok(recent.length > 0);
    const future = await run("since:2999-01-01 retry");
    assert.deepEqual(future, []);
    assert.equal(pick.items[0].label, "No results");

    await run("since:yesterweek retry");
    assert.match(pick.items[0].label, /could not search/);
    assert.match(pick.items[0].detail ?? "", /yesterweek/);
    assert.deepEqual(sent[sent.length - 1], {
      query: "retry",
      top_k: 10,
      layers: ["code", "summary", "doc"],
      snippet_chars: 300,
      since: "yesterweek",
    });
    session.dispose();
  });

  test("a newer query cancels the older request on the server", async () => {
    const pick = new FakeQuickPick<ResultItem>();
    const outcomes: { query: string; outcome: string }[] = [];
    const session = new SearchSession(pick as never, {
      request: async (params, token) => {
        try {
          const reply = await search(params, token);
          outcomes.push({ query: params.query, outcome: `${reply.results.length} results` });
          return reply;
        } catch (error) {
          outcomes.push({ query: params.query, outcome: error instanceof ResponseError ? `error ${error.code}` : String(error) });
          throw error;
        }
      },
      open: () => undefined,
      defaults: () => settings.search,
    });
    session.show();
    pick.type("submit");
    await new Promise((r) => setTimeout(r, 100)); // debounced and sent; the server holds it 0.3 s
    pick.type("Ledger");
    await new Promise((r) => setTimeout(r, 30));
    await session.idle;
    await new Promise((r) => setTimeout(r, 400));
    assert.deepEqual(
      outcomes.find((o) => o.query === "submit"),
      { query: "submit", outcome: "error -32800" },
      JSON.stringify(outcomes),
    );
    assert.equal(pick.items[0].label, "$(symbol-class) billing.Ledger");
    session.dispose();
  });

  test("hover on a call shows the signature and its callers", async () => {
    const reports = path.join(root, "reports.py");
    const line = fs.readFileSync(reports, "utf8").split("\n")[5];
    const hover = await server.connection.sendRequest<{ contents: { value: string } } | null>("textDocument/hover", {
      textDocument: { uri: fileUri(reports) },
      position: { line: 5, character: line.indexOf("retry") + 2 },
    });
    assert.ok(hover);
    assert.match(hover.contents.value, /def retry_failed_charge\(amount, attempts=3\)/);
    assert.match(hover.contents.value, /called by 3: .*reports\.monthly_report/);
  });

  test("Who calls this? finds the symbol under the cursor and its callers", async () => {
    const billing = path.join(root, "billing.py");
    const executed: string[] = [];
    let prepared: { name: string; data?: unknown }[] = [];
    const outcome = await whoCallsThis({
      cursor: () => ({ uri: fileUri(billing), line: 8, character: 6, word: "retry_failed_charge" }),
      prepare: async (cursor) => {
        prepared =
          (await server.connection.sendRequest<{ name: string; data?: unknown }[] | null>("textDocument/prepareCallHierarchy", {
            textDocument: { uri: cursor.uri },
            position: { line: cursor.line, character: cursor.character },
          })) ?? [];
        return prepared.length;
      },
      commands: async () => [PEEK_COMMAND],
      execute: async (command) => {
        executed.push(command);
      },
      info: (m) => assert.fail(m),
    });
    assert.equal(outcome, "peek");
    assert.deepEqual(executed, [PEEK_COMMAND]);
    assert.equal(prepared[0].name, "retry_failed_charge");
    // What the peek then asks for.
    const incoming = await server.connection.sendRequest<{ from: { name: string } }[]>("callHierarchy/incomingCalls", {
      item: prepared[0],
    });
    const callers = incoming.map((c) => c.from.name).sort();
    assert.ok(callers.includes("monthly_report") && callers.includes("record"), callers.join(", "));
    const outgoing = await server.connection.sendRequest<{ to: { name: string } }[]>("callHierarchy/outgoingCalls", {
      item: prepared[0],
    });
    assert.deepEqual(
      outgoing.map((c) => c.to.name),
      ["submit"],
    );

    const nothing = await whoCallsThis({
      cursor: () => ({ uri: fileUri(billing), line: 1, character: 0 }),
      prepare: async (cursor) =>
        (
          (await server.connection.sendRequest<unknown[] | null>("textDocument/prepareCallHierarchy", {
            textDocument: { uri: cursor.uri },
            position: { line: cursor.line, character: cursor.character },
          })) ?? []
        ).length,
      commands: async () => [PEEK_COMMAND],
      execute: async () => assert.fail("no peek for an empty line"),
      info: () => undefined,
    });
    assert.equal(nothing, "nothing-here");
  });

  test("codesift/route answers the two pools the client types; an empty query is InvalidParams", async () => {
    const route = await server.connection.sendRequest<RouteResponse>(ROUTE, { query: "retry failed charge" });
    assert.equal(route.repositories[0].name, "billing");
    assert.equal(route.repositories[0].uri, fileUri(root));
    // One folder: every matched term is in every source, so its IDF (and the confidence) is 0.
    assert.equal(route.repositories[0].confidence, 0);
    assert.match(route.repositories[0].rationale, /retry/);
    assert.deepEqual(route.collections, []);
    await assert.rejects(
      server.connection.sendRequest(ROUTE, { query: "" }),
      (error: unknown) => error instanceof ResponseError && error.code === -32602,
    );
    const page = await search({ query: "retry_failed_charge" });
    assert.deepEqual(page.resources, []);
    assert.equal(page.routed, null);
    assert.ok(page.results.every((r) => Array.isArray(r.related)));
  });

  test("workspace symbols (Ctrl+T) are fuzzy", async () => {
    const symbols = await server.connection.sendRequest<{ name: string }[]>("workspace/symbol", { query: "rfc" });
    assert.ok(symbols.some((s) => s.name === "retry_failed_charge"), JSON.stringify(symbols));
  });

  test("Reindex workspace and the status the warnings come from", async () => {
    const reply = await server.connection.sendRequest<ReindexResponse>(REINDEX, {});
    assert.deepEqual(reply.queued, [{ folder: "billing", rescan: true }]);
    assert.equal(reply.done, null);
    const status = await server.connection.sendRequest<StatusResponse>(STATUS, { folders: [fileUri(root)] });
    assert.equal(status.folders.length, 1);
    assert.ok(Array.isArray(status.folders[0].warnings));
    assert.ok(status.folders[0].warnings.some((w) => /embeddings are off/.test(w)));
    await server.connection.sendRequest(REINDEX, { wait: true, timeout_ms: 60000 });
  });

  test("a settings change is sent with didChangeConfiguration and applied without a restart", async () => {
    const changed = readSettings(fakeConfig({ ...USER_SETTINGS, "index.exclude": ["*.snap", "reports.py"] }));
    const before = server.notifications.length;
    await server.connection.sendNotification("workspace/didChangeConfiguration", { settings: changed.serverOptions });
    await server.waitFor(
      (n) => n.slice(before).some((x) => x.method === INDEX_STATUS && (x.params as IndexStatus).state === "ready"),
      60000,
      "the folder re-indexed with the new settings",
    );
    await server.connection.sendRequest(REINDEX, { wait: true, timeout_ms: 60000 });
    const reply = await search({ query: "monthly_report", top_k: 10, snippet_chars: 300 });
    assert.ok(reply.results.every((r) => r.path !== "reports.py"), JSON.stringify(reply.results.map((r) => r.path)));
    assert.deepEqual(server.messages("window/showMessage"), []);
  });
});

describe("vector coverage reaches the status bar", { skip, timeout: 240000 }, () => {
  test("with embeddings on, indexStatus reports the vectors until coverage is complete", async () => {
    const root = makeWorkspace(WORKSPACE, "vectors");
    const server = ServerSession.start();
    const item = new FakeStatusBarItem();
    const statusBar = new IndexStatusBar(item as never);
    server.on<IndexStatus>(INDEX_STATUS, (params) => statusBar.update(params));
    try {
      statusBar.setServer("running");
      await server.initialize([root], readSettings(fakeConfig({})).serverOptions);
      await server.waitFor(
        (n) =>
          n.some((x) => {
            const s = x.params as IndexStatus;
            return x.method === INDEX_STATUS && s.state === "ready" && s.vectors.embeddable > 0 && s.vectors.coverage === 1;
          }),
        180000,
        "full vector coverage",
      );
      const statuses = server.messages<IndexStatus>(INDEX_STATUS);
      assert.ok(statuses.every((s) => s.vectors.enabled));
      assert.equal(statusBar.view().kind, "ready", String(item.tooltip));
      assert.match(String(item.tooltip), /vectors 100% \(\d+\/\d+\)/);
      const reply = await server.connection.sendRequest<SearchResponse>(SEARCH, {
        query: "try the payment again when it is declined",
        top_k: 5,
        layers: ["code", "summary", "doc"],
        snippet_chars: 600,
      });
      assert.ok(reply.streams.some((s) => s.stream === "vector" && s.candidates > 0), JSON.stringify(reply.streams));
    } finally {
      assert.equal(await server.close(), 0);
      fs.rmSync(path.dirname(root), { recursive: true, force: true });
    }
  });
});
