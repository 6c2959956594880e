// package.json must contribute every command the extension registers and every
// setting it reads, with a description and a default.
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";

const root = path.resolve(__dirname, "../../..");
const manifest = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
const sources = ["extension.ts", "settings.ts"].map((f) => fs.readFileSync(path.join(root, "src", f), "utf8")).join("\n");

test("every registered command is contributed with a title, and search has a keybinding", () => {
  const registered = [...sources.matchAll(/registerCommand\("([^"]+)"/g)].map((m) => m[1]).sort();
  const contributed = manifest.contributes.commands.map((c: { command: string }) => c.command).sort();
  assert.deepEqual(contributed, registered);
  for (const c of manifest.contributes.commands) assert.ok(c.title && c.category === "codesift", c.command);
  assert.ok(manifest.contributes.keybindings.some((k: { command: string }) => k.command === "codesift.search"));
});

test("every setting read by the extension is contributed with a description and a default", () => {
  const properties = manifest.contributes.configuration.properties;
  const read = new Set([...sources.matchAll(/(?:get|explicit|explicitObject|explicitInt)(?:<.*?>)?\((?:config, )?"([^"]+)"/g)].map((m) => m[1]));
  assert.ok(read.size >= 10, `found ${[...read].join(", ")}`);
  for (const key of read) {
    const property = properties[`codesift.${key}`];
    assert.ok(property, `codesift.${key} is read but not contributed`);
    assert.ok(property.markdownDescription || property.description, `codesift.${key} has no description`);
    assert.ok("default" in property, `codesift.${key} has no default`);
  }
  for (const key of Object.keys(properties)) {
    assert.ok(read.has(key.replace(/^codesift\./, "")), `${key} is contributed but never read`);
  }
});

test("the bundle entry point and the engine match vscode-languageclient 9", () => {
  assert.equal(manifest.main, "./dist/extension.js");
  assert.equal(manifest.engines.vscode, "^1.82.0");
  assert.equal(manifest.dependencies["vscode-languageclient"], "9.0.1");
});
