// The codesift extension: starts `codesift serve` and wires its features into VS Code.

import * as vscode from "vscode";
import {
  DidChangeConfigurationNotification,
  LanguageClient,
  State,
  Trace,
  type LanguageClientOptions,
  type ServerOptions as LaunchOptions,
} from "vscode-languageclient/node";
import { whoCallsThis } from "./callers";
import {
  chooseInterpreter,
  installCommand,
  probeCodesift,
  probeMessage,
  type Interpreter,
  type PythonEnvironments,
} from "./interpreter";
import { DOCUMENT_SELECTOR, serverCommand } from "./launch";
import { TraceChannel, traceSetting } from "./logging";
import {
  INDEX_STATUS,
  REINDEX,
  SEARCH,
  STATUS,
  type IndexStatus,
  type ReindexResponse,
  type SearchParams,
  type SearchResponse,
  type StatusResponse,
} from "./protocol";
import { openResult, SearchSession, type ResultItem } from "./search";
import { readSettings, settingsChange, type ExtensionSettings } from "./settings";
import { IndexStatusBar } from "./statusBar";

const PYTHON_EXTENSION = "ms-python.python";
const EMBEDDINGS_OFF = /^embeddings are off/;

function configuration(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration("codesift");
}

async function pythonEnvironments(): Promise<PythonEnvironments | undefined> {
  const extension = vscode.extensions.getExtension<{ environments?: PythonEnvironments }>(PYTHON_EXTENSION);
  if (!extension) return undefined;
  const api = extension.isActive ? extension.exports : await extension.activate();
  return api?.environments;
}

class Codesift implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private settings: ExtensionSettings = readSettings(configuration());
  private interpreter: Interpreter | undefined;
  private readonly ready = new Map<string, boolean>();
  private starting: Promise<void> | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly log: vscode.LogOutputChannel,
    private readonly status: IndexStatusBar,
  ) {
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration("codesift")) void this.configurationChanged();
        // The language client resets its trace from `codesift.trace.server` on any change; re-apply ours.
        setTimeout(() => void this.applyTrace(), 0);
      }),
      log.onDidChangeLogLevel(() => void this.applyTrace()),
    );
  }

  // -- server lifecycle ----------------------------------------------------------------

  start(): Promise<void> {
    this.starting ??= this.doStart().finally(() => (this.starting = undefined));
    return this.starting;
  }

  private async doStart(): Promise<void> {
    this.status.setServer("starting");
    this.ready.clear();
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const interpreter = await chooseInterpreter({
      setting: this.settings.interpreter,
      workspaceFolder: folder,
      pythonExtension: pythonEnvironments,
    });
    this.interpreter = interpreter;
    this.log.info(`Python: ${interpreter.command} (${interpreter.source})`);
    const probe = await probeCodesift(interpreter.command);
    if (!probe.ok) {
      const message = probeMessage(interpreter, probe);
      this.log.error(`${message} ${probe.detail}`);
      this.status.setServer("stopped");
      this.status.setWarning("interpreter", message);
      void this.offerInstall(message, interpreter);
      return;
    }
    this.log.info(`codesift ${probe.version}`);

    const launch = serverCommand(interpreter.command, process.env, folder);
    const serverOptions: LaunchOptions = { run: launch, debug: launch };
    const clientOptions: LanguageClientOptions = {
      documentSelector: DOCUMENT_SELECTOR,
      outputChannel: this.log,
      traceOutputChannel: new TraceChannel(this.log),
      initializationOptions: this.settings.serverOptions,
      progressOnInitialization: false,
    };
    const client = new LanguageClient("codesift", "codesift", serverOptions, clientOptions);
    this.client = client;
    client.onDidChangeState((event) => {
      if (this.client !== client) return;
      if (event.newState === State.Running) this.status.setServer("running");
      else if (event.newState === State.Stopped) this.status.setServer("stopped");
    });
    client.onNotification(INDEX_STATUS, (params: IndexStatus) => this.indexStatus(params));
    try {
      await client.start();
    } catch (error) {
      this.log.error(`the server did not start: ${error instanceof Error ? error.message : String(error)}`);
      this.status.setServer("stopped");
      return;
    }
    await this.applyTrace();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        await client.stop(10000);
      } catch (error) {
        this.log.warn(`stopping the server: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  async restart(): Promise<void> {
    await this.starting;
    await this.stop();
    await this.start();
  }

  private async offerInstall(message: string, interpreter: Interpreter): Promise<void> {
    const show = "Show install command";
    const choose = "Set interpreter";
    const answer = await vscode.window.showErrorMessage(message, show, choose);
    if (answer === show) {
      const command = installCommand(interpreter.command);
      this.log.info(`install codesift with: ${command}`);
      const copy = "Copy command";
      const picked = await vscode.window.showInformationMessage(
        `Install codesift into this interpreter, then run "codesift: Restart server":\n\n${command}\n\n(from a codesift source checkout: ${interpreter.command} -m pip install .)`,
        { modal: true },
        copy,
      );
      if (picked === copy) await vscode.env.clipboard.writeText(command);
    } else if (answer === choose) {
      await vscode.commands.executeCommand("workbench.action.openSettings", "codesift.interpreter");
    }
  }

  private async applyTrace(): Promise<void> {
    const client = this.client;
    if (!client || client.state !== State.Running) return;
    await client.setTrace(Trace.fromString(traceSetting(this.log.logLevel)));
  }

  private async configurationChanged(): Promise<void> {
    const next = readSettings(configuration());
    const change = settingsChange(this.settings, next);
    this.settings = next;
    if (change === "restart") {
      this.log.info("codesift.interpreter changed: restarting the server");
      await this.restart();
    } else if (change === "notify" && this.client?.state === State.Running) {
      this.log.info("settings changed: sending them to the server");
      await this.client.sendNotification(DidChangeConfigurationNotification.type, { settings: next.serverOptions });
    }
  }

  /** The Python extension switched environments: follow it when no interpreter is set. */
  async pythonEnvironmentChanged(): Promise<void> {
    if (this.settings.interpreter || this.interpreter?.source === "setting") return;
    const next = await chooseInterpreter({ setting: "", pythonExtension: pythonEnvironments });
    if (next.command !== this.interpreter?.command) await this.restart();
  }

  // -- notifications -----------------------------------------------------------------

  private indexStatus(params: IndexStatus): void {
    this.status.update(params);
    const wasReady = this.ready.get(params.uri) ?? false;
    const isReady = params.state === "ready";
    this.ready.set(params.uri, isReady);
    if (isReady && !wasReady) void this.refreshWarnings(params.uri);
  }

  /** Folder warnings (a model that failed to load, a folder that cannot be watched...). */
  private async refreshWarnings(uri: string): Promise<void> {
    const client = this.client;
    if (!client) return;
    try {
      const reply = await client.sendRequest<StatusResponse>(STATUS, { folders: [uri] });
      for (const folder of reply.folders) {
        const warnings = folder.warnings.filter(
          (w) => !(EMBEDDINGS_OFF.test(w) && this.settings.serverOptions.embeddings === false),
        );
        if (warnings.length) {
          for (const w of warnings) this.log.warn(`${folder.name}: ${w}`);
          this.status.setWarning(folder.uri, `${folder.name}: ${warnings.join("; ")}`);
        } else {
          this.status.clearWarning(folder.uri);
        }
      }
    } catch (error) {
      this.log.warn(`codesift/status failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  // -- commands ------------------------------------------------------------------------

  private async runningClient(): Promise<LanguageClient | undefined> {
    await this.starting;
    if (this.client?.state === State.Running) return this.client;
    const action = "Show output";
    void vscode.window
      .showWarningMessage("codesift: the server is not running.", action)
      .then((a) => (a === action ? this.log.show() : undefined));
    return undefined;
  }

  async search(): Promise<void> {
    const client = await this.runningClient();
    if (!client) return;
    const pick = vscode.window.createQuickPick<ResultItem>();
    const editor = vscode.window.activeTextEditor;
    const selected = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection) : "";
    const session = new SearchSession(
      pick,
      {
        request: (params: SearchParams, token) => client.sendRequest<SearchResponse>(SEARCH, params, token),
        open: (result) => openResult(result),
        defaults: () => this.settings.search,
        log: (message) => this.log.warn(message),
      },
      { multiFolder: (vscode.workspace.workspaceFolders?.length ?? 0) > 1 },
    );
    session.show(selected.includes("\n") ? "" : selected.trim());
  }

  async reindex(): Promise<void> {
    const client = await this.runningClient();
    if (!client) return;
    const reply = await client.sendRequest<ReindexResponse>(REINDEX, {});
    this.log.info(`reindex queued: ${reply.queued.map((q) => q.folder).join(", ") || "no folders"}`);
    void vscode.window.setStatusBarMessage(`codesift: reindexing ${reply.queued.length} folder(s)`, 3000);
  }

  async whoCalls(): Promise<void> {
    const client = await this.runningClient();
    if (!client) return;
    await whoCallsThis({
      cursor: () => {
        const editor = vscode.window.activeTextEditor;
        if (!editor) return undefined;
        const position = editor.selection.active;
        const range = editor.document.getWordRangeAtPosition(position);
        return {
          uri: editor.document.uri.toString(),
          line: position.line,
          character: position.character,
          word: range ? editor.document.getText(range) : undefined,
        };
      },
      prepare: async (cursor) => {
        const items = await client.sendRequest<unknown[] | null>("textDocument/prepareCallHierarchy", {
          textDocument: { uri: cursor.uri },
          position: { line: cursor.line, character: cursor.character },
        });
        return items?.length ?? 0;
      },
      commands: () => Promise.resolve(vscode.commands.getCommands(true)),
      execute: (command, ...args) => Promise.resolve(vscode.commands.executeCommand(command, ...args)),
      info: (message) => void vscode.window.showInformationMessage(message),
    });
  }

  showOutput(): void {
    this.log.show();
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

let codesift: Codesift | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const log = vscode.window.createOutputChannel("codesift", { log: true });
  const status = new IndexStatusBar();
  codesift = new Codesift(log, status);
  context.subscriptions.push(
    log,
    status,
    codesift,
    vscode.commands.registerCommand("codesift.search", () => codesift?.search()),
    vscode.commands.registerCommand("codesift.whoCalls", () => codesift?.whoCalls()),
    vscode.commands.registerCommand("codesift.reindex", () => codesift?.reindex()),
    vscode.commands.registerCommand("codesift.restart", () => codesift?.restart()),
    vscode.commands.registerCommand("codesift.showOutput", () => codesift?.showOutput()),
  );
  void followPythonExtension(context);
  await codesift.start();
}

async function followPythonExtension(context: vscode.ExtensionContext): Promise<void> {
  try {
    const extension = vscode.extensions.getExtension<{
      environments?: { onDidChangeActiveEnvironmentPath?: vscode.Event<unknown> };
    }>(PYTHON_EXTENSION);
    if (!extension) return;
    const api = extension.isActive ? extension.exports : await extension.activate();
    const event = api?.environments?.onDidChangeActiveEnvironmentPath;
    if (event) context.subscriptions.push(event(() => void codesift?.pythonEnvironmentChanged()));
  } catch {
    // Without the Python extension's events the interpreter is chosen at start only.
  }
}

export async function deactivate(): Promise<void> {
  await codesift?.stop();
  codesift = undefined;
}
