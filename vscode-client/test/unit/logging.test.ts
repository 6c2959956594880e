import assert from "node:assert/strict";
import { test } from "node:test";
import * as vscode from "vscode";
import { TraceChannel, traceSetting } from "../../src/logging";

test("the LSP trace follows the log level", () => {
  assert.equal(traceSetting(vscode.LogLevel.Trace), "verbose");
  assert.equal(traceSetting(vscode.LogLevel.Debug), "messages");
  assert.equal(traceSetting(vscode.LogLevel.Info), "off");
  assert.equal(traceSetting(vscode.LogLevel.Off), "off");
});

test("trace lines from the language client go to the log channel at trace level", () => {
  const traced: string[] = [];
  const log = { name: "codesift", trace: (m: string) => traced.push(m), show: () => undefined, hide: () => undefined };
  const channel = new TraceChannel(log as unknown as vscode.LogOutputChannel);
  channel.append("[Trace - 10:01:02 AM] ");
  channel.appendLine("Sending request 'codesift/search - (3)'.");
  channel.appendLine("Params: {");
  channel.append('  "query": "retry"\n}\n');
  assert.deepEqual(traced, ["Sending request 'codesift/search - (3)'.", "Params: {", '  "query": "retry"', "}"]);
  assert.equal(channel.name, "codesift");
});
