// Which Python runs `codesift serve`, and whether codesift is installed there.
//
// Order: the `codesift.interpreter` setting, else the Python extension's active
// environment (when that extension is installed), else `python3` on PATH
// (`python` on Windows).

import { execFile } from "node:child_process";
import * as os from "node:os";
import * as path from "node:path";

export type InterpreterSource = "setting" | "python-extension" | "path";

export interface Interpreter {
  command: string;
  source: InterpreterSource;
}

/** What the Python extension's API offers (ms-python.python, `environments`). */
export interface PythonEnvironments {
  getActiveEnvironmentPath(resource?: unknown): { path: string } | undefined;
  resolveEnvironment(
    env: { path: string } | string,
  ): Promise<{ executable: { uri?: { fsPath: string } } } | undefined>;
}

export interface InterpreterInputs {
  setting: string;
  workspaceFolder?: string;
  /** Resolves the Python extension's environments API, or undefined when not installed. */
  pythonExtension: () => Promise<PythonEnvironments | undefined>;
  platform?: NodeJS.Platform;
  home?: string;
}

/** `${workspaceFolder}`, `${userHome}` and a leading `~` in the setting. */
export function expandSetting(value: string, workspaceFolder: string | undefined, home: string): string {
  let out = value.trim();
  if (out === "~" || out.startsWith("~/") || out.startsWith("~\\")) out = path.join(home, out.slice(1));
  out = out.replace(/\$\{userHome\}/g, home);
  if (workspaceFolder !== undefined) out = out.replace(/\$\{workspaceFolder\}/g, workspaceFolder);
  return out;
}

export async function chooseInterpreter(inputs: InterpreterInputs): Promise<Interpreter> {
  const home = inputs.home ?? os.homedir();
  if (inputs.setting.trim()) {
    return { command: expandSetting(inputs.setting, inputs.workspaceFolder, home), source: "setting" };
  }
  try {
    const environments = await inputs.pythonExtension();
    const active = environments?.getActiveEnvironmentPath();
    if (environments && active?.path) {
      const resolved = await environments.resolveEnvironment(active);
      const executable = resolved?.executable.uri?.fsPath;
      if (executable) return { command: executable, source: "python-extension" };
    }
  } catch {
    // The Python extension failed to activate or answer: fall back to PATH.
  }
  const platform = inputs.platform ?? process.platform;
  return { command: platform === "win32" ? "python" : "python3", source: "path" };
}

export function describeSource(source: InterpreterSource): string {
  switch (source) {
    case "setting":
      return "the codesift.interpreter setting";
    case "python-extension":
      return "the Python extension's active environment";
    default:
      return "PATH";
  }
}

/** The command a person runs to install codesift into this interpreter. */
export function installCommand(python: string): string {
  const quoted = /[\s"']/.test(python) ? `"${python}"` : python;
  return `${quoted} -m pip install codesift`;
}

export type Probe =
  | { ok: true; version: string }
  | { ok: false; reason: "missing-python" | "missing-codesift" | "failed"; detail: string };

// codesift.lsp pulls in the server's dependencies (pygls, apsw, ...), so a half
// installed codesift is caught here and not as a server that dies at start.
const PROBE_SCRIPT = "import sys, codesift, codesift.lsp; sys.stdout.write(codesift.__version__)";

/** Runs the interpreter to check that `import codesift` works; never throws. */
export function probeCodesift(python: string, env?: NodeJS.ProcessEnv, timeoutMs = 20000): Promise<Probe> {
  return new Promise((resolve) => {
    execFile(python, ["-c", PROBE_SCRIPT], { env, timeout: timeoutMs, windowsHide: true }, (error, stdout, stderr) => {
      if (!error) {
        resolve({ ok: true, version: String(stdout).trim() });
        return;
      }
      const code = (error as NodeJS.ErrnoException).code;
      const text = String(stderr || error.message).trim();
      if (code === "ENOENT" || code === "EACCES") {
        resolve({ ok: false, reason: "missing-python", detail: `cannot run ${python}: ${error.message}` });
      } else if (/No module named '?codesift'?\s*$/m.test(text)) {
        resolve({ ok: false, reason: "missing-codesift", detail: lastLine(text) });
      } else {
        resolve({ ok: false, reason: "failed", detail: lastLine(text) });
      }
    });
  });
}

function lastLine(text: string): string {
  const lines = text.split(/\r?\n/).filter((l) => l.trim());
  return lines.length ? lines[lines.length - 1] : text;
}

/** The message shown when the server cannot start from this interpreter. */
export function probeMessage(interpreter: Interpreter, probe: Exclude<Probe, { ok: true }>): string {
  const where = `${interpreter.command} (from ${describeSource(interpreter.source)})`;
  switch (probe.reason) {
    case "missing-python":
      return `codesift: cannot run the Python interpreter ${where}. Set codesift.interpreter to a Python 3.11+ that has codesift installed.`;
    case "missing-codesift":
      return `codesift is not installed for ${where}.`;
    default:
      return `codesift cannot be imported by ${where}: ${probe.detail}`;
  }
}
