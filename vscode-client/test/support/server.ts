// Starts the real `codesift serve` over stdio and talks to it with vscode-jsonrpc,
// the transport under vscode-languageclient.
//
// The interpreter is $CODESIFT_PYTHON, else python3; the server code is this
// checkout's server/ folder (put first on PYTHONPATH, as the Python tests do).

import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
  createMessageConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type MessageConnection,
} from "vscode-jsonrpc/node";
import type { ServerOptions } from "../../src/protocol";

const SERVER_DIR = path.resolve(__dirname, "../../../../server");

export function pythonCommand(): string {
  return process.env.CODESIFT_PYTHON?.trim() || "python3";
}

export function serverEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  env.PYTHONPATH = [SERVER_DIR, env.PYTHONPATH].filter(Boolean).join(path.delimiter);
  env.HF_HUB_OFFLINE = "1";
  env.GIT_CONFIG_GLOBAL = os.devNull;
  env.GIT_CONFIG_NOSYSTEM = "1";
  return env;
}

/** Why the contract tests cannot run here, or undefined when codesift imports. */
export function unavailable(): string | undefined {
  const python = pythonCommand();
  const probe = spawnSync(python, ["-c", "import codesift.cli, codesift.lsp"], { env: serverEnv(), encoding: "utf8", timeout: 60000 });
  if (probe.error) return `cannot run ${python} (set CODESIFT_PYTHON): ${probe.error.message}`;
  if (probe.status !== 0) {
    const last = probe.stderr.trim().split("\n").pop();
    return `codesift cannot be imported by ${python} (set CODESIFT_PYTHON to a Python with codesift's dependencies): ${last}`;
  }
  return undefined;
}

function git(root: string, ...args: string[]): void {
  const run = spawnSync("git", args, { cwd: root, env: serverEnv(), encoding: "utf8" });
  if (run.status !== 0) throw new Error(`git ${args.join(" ")}: ${run.stderr}`);
}

/** A temporary git repository holding `files`, committed. */
export function makeWorkspace(files: Record<string, string>, name = "billing"): string {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "codesift-vscode-"));
  const root = path.join(base, name);
  fs.mkdirSync(root);
  git(root, "init", "-q");
  for (const [rel, text] of Object.entries(files)) {
    const file = path.join(root, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
  }
  git(root, "add", "-A");
  git(root, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qm", "init");
  return root;
}

export function fileUri(file: string): string {
  return `file://${file.split(path.sep).map(encodeURIComponent).join("/")}`;
}

export interface Notification {
  method: string;
  params: unknown;
}

export class ServerSession {
  readonly notifications: Notification[] = [];
  private waiters: (() => void)[] = [];
  private listeners: { method: string; handler: (params: unknown) => void }[] = [];
  stderr = "";

  private constructor(
    readonly process: ChildProcessWithoutNullStreams,
    readonly connection: MessageConnection,
  ) {}

  static start(env: NodeJS.ProcessEnv = {}): ServerSession {
    const child = spawn(pythonCommand(), ["-m", "codesift.cli", "serve"], {
      env: serverEnv(env),
      stdio: ["pipe", "pipe", "pipe"],
    });
    const connection = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
    const session = new ServerSession(child, connection);
    child.stderr.on("data", (chunk: Buffer) => {
      session.stderr += chunk.toString();
    });
    // A server that dies fails the pending requests instead of leaving them hanging.
    child.once("exit", () => setTimeout(() => connection.dispose(), 100));
    // One catch-all handler (a method-specific one would take its notifications away).
    connection.onNotification((method, params) => {
      session.notifications.push({ method, params });
      for (const l of session.listeners) if (l.method === method) l.handler(params);
      for (const wake of session.waiters.splice(0)) wake();
    });
    // What VS Code answers to the server's own requests.
    connection.onRequest("window/workDoneProgress/create", () => null);
    connection.onRequest("client/registerCapability", () => null);
    connection.onRequest("workspace/configuration", () => []);
    connection.listen();
    return session;
  }

  /** initialize + initialized, the way vscode-languageclient starts a server. */
  async initialize(folders: string[], options: ServerOptions): Promise<Record<string, unknown>> {
    const result = await this.connection
      .sendRequest<{ capabilities: Record<string, unknown> }>("initialize", {
      processId: process.pid,
      clientInfo: { name: "Visual Studio Code", version: "1.82.0" },
      locale: "en",
      rootPath: folders[0] ?? null,
      rootUri: folders[0] ? fileUri(folders[0]) : null,
      capabilities: {
        workspace: {
          workspaceFolders: true,
          configuration: true,
          didChangeConfiguration: { dynamicRegistration: true },
          symbol: { dynamicRegistration: true },
        },
        textDocument: {
          synchronization: { dynamicRegistration: true, didSave: true },
          hover: { dynamicRegistration: true, contentFormat: ["markdown", "plaintext"] },
          callHierarchy: { dynamicRegistration: true },
          definition: { dynamicRegistration: true, linkSupport: true },
          documentSymbol: { dynamicRegistration: true, hierarchicalDocumentSymbolSupport: true },
        },
        window: { workDoneProgress: true, showMessage: {} },
      },
      initializationOptions: options,
      trace: "off",
      workspaceFolders: folders.map((f) => ({ uri: fileUri(f), name: path.basename(f) })),
      })
      .catch((error: Error) => {
        throw new Error(`initialize failed: ${error.message}\nserver stderr:\n${this.stderr.slice(-3000)}`);
      });
    await this.connection.sendNotification("initialized", {});
    return result.capabilities;
  }

  /** Calls `handler` with every notification of `method` from now on. */
  on<T>(method: string, handler: (params: T) => void): void {
    this.listeners.push({ method, handler: handler as (params: unknown) => void });
  }

  messages<T>(method: string): T[] {
    return this.notifications.filter((n) => n.method === method).map((n) => n.params as T);
  }

  /** Resolves when `predicate` holds for the notifications received so far. */
  async waitFor(predicate: (n: Notification[]) => boolean, timeoutMs = 60000, what = "condition"): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.notifications)) {
      const left = deadline - Date.now();
      if (left <= 0) {
        const seen = this.notifications.map((n) => `${n.method} ${JSON.stringify(n.params)}`).join("\n");
        throw new Error(`timed out waiting for ${what}; notifications:\n${seen}\nstderr:\n${this.stderr.slice(-2000)}`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 250));
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** shutdown + exit; resolves with the exit code. */
  async close(): Promise<number | null> {
    const exited = new Promise<number | null>((resolve) => {
      if (this.process.exitCode !== null) resolve(this.process.exitCode);
      else this.process.once("exit", (code) => resolve(code));
    });
    try {
      await Promise.race([this.connection.sendRequest("shutdown"), delay(15000)]);
      await this.connection.sendNotification("exit");
    } catch {
      // already gone
    }
    const code = await Promise.race([exited, delay(15000).then(() => "timeout" as const)]);
    this.connection.dispose();
    if (code === "timeout") {
      this.process.kill("SIGKILL");
      return null;
    }
    return code;
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

export const BILLING_PY = `"""Charging customers and retrying declined payments."""


def submit(amount):
    """Send a charge to the gateway. It returns whether the gateway accepted it."""
    return amount > 0


def retry_failed_charge(amount, attempts=3):
    """Retry a failed charge until the gateway accepts it."""
    for _ in range(attempts):
        if submit(amount):
            return True
    return False


class Ledger:
    """Keeps the record of every charge."""

    def record(self, amount):
        return retry_failed_charge(amount)

    def refund(self, amount):
        return submit(-amount)
`;

export const REPORTS_PY = `from billing import retry_failed_charge


def monthly_report(amounts):
    """Summarise the month's charges."""
    return [retry_failed_charge(a) for a in amounts]
`;

export const TEST_BILLING_PY = `from billing import retry_failed_charge


def test_retry_failed_charge():
    assert retry_failed_charge(5)
`;

export const README_MD = `# Billing

Charges are retried by \`retry_failed_charge\` when the gateway declines them.
`;

export const WORKSPACE = {
  "billing.py": BILLING_PY,
  "reports.py": REPORTS_PY,
  "tests/test_billing.py": TEST_BILLING_PY,
  "README.md": README_MD,
};
