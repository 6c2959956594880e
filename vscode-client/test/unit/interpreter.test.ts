import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import {
  chooseInterpreter,
  expandSetting,
  installCommand,
  probeCodesift,
  probeMessage,
  type PythonEnvironments,
} from "../../src/interpreter";

function pythonExtension(executable: string | undefined): () => Promise<PythonEnvironments> {
  return async () => ({
    getActiveEnvironmentPath: () => ({ path: "/envs/project" }),
    resolveEnvironment: async (env) => {
      assert.deepEqual(env, { path: "/envs/project" });
      return executable ? { executable: { uri: { fsPath: executable } } } : undefined;
    },
  });
}

test("the setting wins over the Python extension, with ${workspaceFolder} and ~ expanded", async () => {
  const chosen = await chooseInterpreter({
    setting: "${workspaceFolder}/.venv/bin/python",
    workspaceFolder: "/work/proj",
    pythonExtension: pythonExtension("/envs/project/bin/python"),
  });
  assert.deepEqual(chosen, { command: "/work/proj/.venv/bin/python", source: "setting" });
  assert.equal(expandSetting("~/py/bin/python", undefined, "/home/me"), "/home/me/py/bin/python");
  assert.equal(expandSetting("${userHome}/x", undefined, "/home/me"), "/home/me/x");
});

test("without a setting the Python extension's active environment is used", async () => {
  const chosen = await chooseInterpreter({ setting: "", pythonExtension: pythonExtension("/envs/project/bin/python") });
  assert.deepEqual(chosen, { command: "/envs/project/bin/python", source: "python-extension" });
});

test("without the Python extension (or when it fails) python3 on PATH is used", async () => {
  const none = await chooseInterpreter({ setting: " ", pythonExtension: async () => undefined });
  assert.deepEqual(none, { command: "python3", source: "path" });
  const broken = await chooseInterpreter({
    setting: "",
    pythonExtension: async () => {
      throw new Error("activation failed");
    },
  });
  assert.deepEqual(broken, { command: "python3", source: "path" });
  const unresolved = await chooseInterpreter({ setting: "", pythonExtension: pythonExtension(undefined) });
  assert.equal(unresolved.source, "path");
  const windows = await chooseInterpreter({ setting: "", pythonExtension: async () => undefined, platform: "win32" });
  assert.equal(windows.command, "python");
});

function script(dir: string, name: string, body: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  return file;
}

test("the probe tells a missing interpreter, a missing codesift and a working one apart", async (t) => {
  if (process.platform === "win32") return t.skip("shell scripts");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "codesift-probe-"));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const good = script(dir, "good", 'printf "0.1.0"');
  const missing = script(
    dir,
    "missing",
    'echo "Traceback (most recent call last):" >&2; echo "ModuleNotFoundError: No module named \'codesift\'" >&2; exit 1',
  );
  const broken = script(dir, "broken", 'echo "ImportError: libgit2.so.1: cannot open shared object" >&2; exit 1');
  const partial = script(dir, "partial", 'echo "ModuleNotFoundError: No module named \'apsw\'" >&2; exit 1');

  assert.deepEqual(await probeCodesift(good), { ok: true, version: "0.1.0" });
  const notInstalled = await probeCodesift(missing);
  assert.equal(notInstalled.ok, false);
  assert.equal(!notInstalled.ok && notInstalled.reason, "missing-codesift");
  const failing = await probeCodesift(broken);
  assert.equal(!failing.ok && failing.reason, "failed");
  assert.match(!failing.ok ? failing.detail : "", /libgit2/);
  const halfInstalled = await probeCodesift(partial);
  assert.equal(!halfInstalled.ok && halfInstalled.reason, "failed");
  assert.match(!halfInstalled.ok ? halfInstalled.detail : "", /apsw/);
  const absent = await probeCodesift(path.join(dir, "no-such-python"));
  assert.equal(!absent.ok && absent.reason, "missing-python");

  if (!notInstalled.ok) {
    const message = probeMessage({ command: missing, source: "path" }, notInstalled);
    assert.equal(message, `codesift is not installed for ${missing} (from PATH).`);
  }
});

test("the install command quotes an interpreter path with spaces", () => {
  assert.equal(installCommand("/usr/bin/python3"), "/usr/bin/python3 -m pip install codesift");
  assert.equal(installCommand("C:\\Program Files\\Python\\python.exe"), '"C:\\Program Files\\Python\\python.exe" -m pip install codesift');
});
