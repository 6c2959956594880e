import assert from "node:assert/strict";
import { test } from "node:test";
import type { IndexStatus } from "../../src/protocol";
import { IndexStatusBar, statusView } from "../../src/statusBar";
import { FakeStatusBarItem } from "../support/vscode-stub";

function status(overrides: Partial<IndexStatus> = {}): IndexStatus {
  return {
    folder: "billing",
    uri: "file:///ws/billing",
    state: "ready",
    complete: true,
    files_done: 0,
    files_total: 0,
    files_ratio: 1,
    chunks_done: 0,
    chunks_total: 0,
    vectors: { enabled: true, embedded: 120, embeddable: 120, coverage: 1 },
    pending: { paths: 0, rescan: false, busy: false, watcher_paths: 0 },
    ...overrides,
  };
}

function bar() {
  const item = new FakeStatusBarItem();
  const view = new IndexStatusBar(item as never);
  return { item, view };
}

test("starting: a spinner until the server runs and folders report", () => {
  const { item, view } = bar();
  assert.equal(item.shown, true);
  assert.equal(item.text, "$(sync~spin) codesift");
  view.setServer("running");
  view.update(status({ state: "starting", vectors: { enabled: true, embedded: 0, embeddable: 0, coverage: 1 } }));
  assert.equal(view.view().kind, "starting");
});

test("indexing shows the share of files parsed over all indexing folders", () => {
  const { item, view } = bar();
  view.setServer("running");
  view.update(status({ state: "scanning", files_total: 0 }));
  assert.equal(item.text, "$(sync~spin) codesift");
  view.update(status({ state: "indexing", files_done: 120, files_total: 2277, complete: false }));
  view.update(status({ uri: "file:///ws/web", folder: "web", state: "indexing", files_done: 80, files_total: 123 }));
  assert.equal(item.text, "$(sync~spin) codesift 8%");
  assert.match(String(item.tooltip), /billing: indexing 120\/2277 files/);
  assert.match(String(item.tooltip), /web: indexing 80\/123 files/);
  assert.equal(item.command, "codesift.showOutput");
  assert.equal(item.backgroundColor, undefined);
});

test("embedding shows vector coverage; ready is quiet and clicks open the search", () => {
  const { item, view } = bar();
  view.setServer("running");
  view.update(
    status({
      state: "embedding",
      chunks_done: 64,
      chunks_total: 900,
      vectors: { enabled: true, embedded: 300, embeddable: 1000, coverage: 0.3 },
    }),
  );
  assert.equal(item.text, "$(sync~spin) codesift vectors 30%");
  assert.match(String(item.tooltip), /embedding 64\/900 chunks · vectors 30% \(300\/1000\)/);
  view.update(status());
  assert.equal(item.text, "$(search) codesift");
  assert.equal(item.command, "codesift.search");
  assert.match(String(item.tooltip), /billing: ready · vectors 100% \(120\/120\)/);
  assert.doesNotMatch(String(item.tooltip), /in memory/);
  view.update(
    status({ vectors: { enabled: true, embedded: 120, embeddable: 120, coverage: 1, in_memory: 120, memory_mib: 0.05 } }),
  );
  assert.match(String(item.tooltip), /vectors 100% \(120\/120\), 120 in memory \(0\.1 MiB\)/);
  view.update(status({ vectors: { enabled: false, embedded: 0, embeddable: 0, coverage: 1 } }));
  assert.match(String(item.tooltip), /vectors off/);
});

test("a failed folder or a server warning turns the item into a warning that opens the output", () => {
  const { item, view } = bar();
  view.setServer("running");
  view.update(status({ state: "error", complete: false }));
  assert.equal(item.text, "$(warning) codesift");
  assert.equal(item.command, "codesift.showOutput");
  assert.equal((item.backgroundColor as { id: string }).id, "statusBarItem.warningBackground");
  assert.match(String(item.tooltip), /billing: indexing failed/);

  view.update(status());
  assert.equal(view.view().kind, "ready");
  view.setWarning("file:///ws/billing", "billing: the embedding model failed to load");
  assert.equal(view.view().kind, "warning");
  assert.match(String(item.tooltip), /model failed to load/);
  view.clearWarning("file:///ws/billing");
  assert.equal(view.view().kind, "ready");
  assert.equal(item.backgroundColor, undefined);
});

test("a stopped server is a warning; a restart clears old folders and warnings", () => {
  const { item, view } = bar();
  view.setServer("running");
  view.update(status());
  view.setWarning("interpreter", "codesift is not installed for python3 (from PATH).");
  view.setServer("stopped");
  assert.equal(view.view().kind, "stopped");
  assert.match(String(item.tooltip), /not running/);
  assert.match(String(item.tooltip), /not installed/);
  view.setServer("starting");
  assert.equal(view.view().kind, "starting");
  view.setServer("running");
  assert.equal(view.view().kind, "ready");
});

test("statusView is a pure function of folders, warnings and server state", () => {
  assert.equal(statusView([], [], "running").kind, "ready");
  assert.equal(statusView([status({ state: "starting" })], [], "running").kind, "starting");
  assert.equal(statusView([status()], ["x"], "running").kind, "warning");
});
