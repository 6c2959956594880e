import assert from "node:assert/strict";
import { test } from "node:test";
import { readSettings, settingsChange, toServerOptions } from "../../src/settings";
import { fakeConfig } from "../support/config";

test("defaults send only the server-wide switches, so folders keep their .codesift.toml", () => {
  assert.deepEqual(toServerOptions(fakeConfig()), { embeddings: true, watch: true });
});

test("settings the person set become index and search options with the server's names", () => {
  const options = toServerOptions(
    fakeConfig({
      "embeddings.enabled": false,
      watch: false,
      "index.location": " .cache/codesift.db ",
      "index.exclude": ["generated/**", "", "*.snap"],
      "fusion.rrfK": 30,
      "fusion.candidateCap": 100,
      "fusion.weights": { vector: 0.5, vectorClose: 0.9, doc: 0, feedback: 0 },
      "ranking.priors": { tests: false },
      "ranking.fileEvidence": 0,
      "ranking.fileDiversity": 1,
      "rerank.enabled": true,
      "rerank.modelPath": " /models/ce ",
      "rerank.threshold": 20,
    }),
  );
  assert.deepEqual(options, {
    embeddings: false,
    watch: false,
    index: { db_path: ".cache/codesift.db", exclude: ["generated/**", "*.snap"] },
    search: {
      rrf_k: 30,
      candidate_cap: 100,
      weight_vector: 0.5,
      weight_vector_close: 0.9,
      weight_doc: 0,
      weight_feedback: 0,
      prior_tests: false,
      file_evidence: 0,
      file_diversity: 1,
    },
    rerank: { enabled: true, model_path: "/models/ce", threshold: 20 },
  });
});

test("object settings merge the levels: workspace keys over user keys", () => {
  const options = toServerOptions(
    fakeConfig({ "fusion.weights": { vector: 0.5, lexical: 2 } }, { "fusion.weights": { vector: 0.8 } }),
  );
  assert.deepEqual(options.search, { weight_vector: 0.8, weight_lexical: 2 });
});

test("codesift.serverOptions is merged over the mapped options, nested sections included", () => {
  const options = toServerOptions(
    fakeConfig({
      "index.exclude": ["a/**"],
      serverOptions: { quietMs: 300, index: { max_file_bytes: 2048 }, embedding: { batch_size: 8 } },
    }),
  );
  assert.deepEqual(options, {
    embeddings: true,
    watch: true,
    quietMs: 300,
    index: { exclude: ["a/**"], max_file_bytes: 2048 },
    embedding: { batch_size: 8 },
  });
});

test("search defaults are read and clamped to what the server accepts", () => {
  const settings = readSettings(
    fakeConfig({ "search.resultCount": 500, "search.snippetWidth": 10, "search.debounceMs": -5, interpreter: " /usr/bin/python3 " }),
  );
  assert.equal(settings.interpreter, "/usr/bin/python3");
  assert.deepEqual(settings.search, { resultCount: 200, snippetWidth: 80, debounceMs: 0, includeTests: true });
  // Not set: undefined, so that the server's search.top_k / snippet_chars apply
  // (a folder's .codesift.toml may say otherwise than the built-in 10 / 600).
  assert.deepEqual(readSettings(fakeConfig()).search, {
    resultCount: undefined,
    snippetWidth: undefined,
    debounceMs: 150,
    includeTests: true,
  });
});

test("only an interpreter change restarts the server; option changes are notified", () => {
  const base = readSettings(fakeConfig());
  assert.equal(settingsChange(base, readSettings(fakeConfig())), "none");
  assert.equal(settingsChange(base, readSettings(fakeConfig({ interpreter: "/opt/py/bin/python" }))), "restart");
  assert.equal(settingsChange(base, readSettings(fakeConfig({ "index.location": "/tmp/x.db" }))), "notify");
  assert.equal(settingsChange(base, readSettings(fakeConfig({ "embeddings.enabled": false }))), "notify");
  assert.equal(settingsChange(base, readSettings(fakeConfig({ "search.resultCount": 5 }))), "client");
});
