// The status bar item, fed by codesift/indexStatus notifications.
//
// Quiet when all is well ("$(search) codesift", click to search); a spinner with
// a percentage while folders are scanned, parsed or embedded; a warning colour
// and a click that opens the output when a folder failed, the server stopped,
// or the server reported a problem.

import * as vscode from "vscode";
import type { IndexStatus } from "./protocol";

export type ViewKind = "starting" | "indexing" | "embedding" | "ready" | "warning" | "stopped";

export interface StatusView {
  kind: ViewKind;
  text: string;
  tooltip: string;
  command: string;
  warning: boolean;
}

function percent(done: number, total: number): number {
  return total > 0 ? Math.min(100, Math.floor((100 * done) / total)) : 0;
}

function folderLine(status: IndexStatus): string {
  const v = status.vectors;
  const vectors = !v.enabled
    ? "vectors off"
    : v.embeddable > 0
      ? `vectors ${Math.round(v.coverage * 100)}% (${v.embedded}/${v.embeddable})` +
        (v.in_memory ? `, ${v.in_memory} in memory (${(v.memory_mib ?? 0).toFixed(1)} MiB)` : "")
      : "vectors: none yet";
  switch (status.state) {
    case "indexing":
      return `${status.folder}: indexing ${status.files_done}/${status.files_total} files`;
    case "embedding":
      return `${status.folder}: embedding ${status.chunks_done}/${status.chunks_total} chunks · ${vectors}`;
    case "ready":
      return `${status.folder}: ready · ${vectors}`;
    default:
      return `${status.folder}: ${status.state}`;
  }
}

/** The view for the latest status of each folder plus any warnings; pure. */
export function statusView(
  folders: IndexStatus[],
  warnings: string[],
  server: "starting" | "running" | "stopped",
): StatusView {
  if (server === "stopped") {
    return {
      kind: "stopped",
      text: "$(warning) codesift",
      tooltip: ["codesift: the server is not running. Click to see its output.", ...warnings].join("\n"),
      command: "codesift.showOutput",
      warning: true,
    };
  }
  const lines = folders.map(folderLine);
  const failed = folders.filter((f) => f.state === "error");
  if (failed.length || warnings.length) {
    const problems = [...failed.map((f) => `${f.folder}: indexing failed`), ...warnings];
    return {
      kind: "warning",
      text: "$(warning) codesift",
      tooltip: [...problems, ...lines, "Click to see the output."].join("\n"),
      command: "codesift.showOutput",
      warning: true,
    };
  }
  if (server === "starting" || folders.some((f) => f.state === "starting")) {
    return {
      kind: "starting",
      text: "$(sync~spin) codesift",
      tooltip: ["codesift: starting", ...lines].join("\n"),
      command: "codesift.showOutput",
      warning: false,
    };
  }
  const indexing = folders.filter((f) => f.state === "scanning" || f.state === "indexing");
  if (indexing.length) {
    const done = indexing.reduce((n, f) => n + f.files_done, 0);
    const total = indexing.reduce((n, f) => n + f.files_total, 0);
    const scanning = total === 0;
    return {
      kind: "indexing",
      text: scanning ? "$(sync~spin) codesift" : `$(sync~spin) codesift ${percent(done, total)}%`,
      tooltip: ["codesift: indexing (search answers from what is indexed so far)", ...lines].join("\n"),
      command: "codesift.showOutput",
      warning: false,
    };
  }
  const embedding = folders.filter((f) => f.state === "embedding");
  if (embedding.length) {
    const done = embedding.reduce((n, f) => n + f.vectors.embedded, 0);
    const total = embedding.reduce((n, f) => n + f.vectors.embeddable, 0);
    return {
      kind: "embedding",
      text: `$(sync~spin) codesift vectors ${percent(done, total)}%`,
      tooltip: ["codesift: computing vectors (lexical search is complete)", ...lines].join("\n"),
      command: "codesift.search",
      warning: false,
    };
  }
  return {
    kind: "ready",
    text: "$(search) codesift",
    tooltip: ["codesift: index up to date. Click to search.", ...lines].join("\n"),
    command: "codesift.search",
    warning: false,
  };
}

/** Keeps the per-folder statuses and renders them into a status bar item. */
export class IndexStatusBar implements vscode.Disposable {
  private readonly folders = new Map<string, IndexStatus>();
  private readonly warnings = new Map<string, string>();
  private server: "starting" | "running" | "stopped" = "starting";
  readonly item: vscode.StatusBarItem;

  constructor(item?: vscode.StatusBarItem) {
    this.item = item ?? vscode.window.createStatusBarItem("codesift.status", vscode.StatusBarAlignment.Left, 0);
    this.item.name = "codesift";
    this.render();
    this.item.show();
  }

  update(status: IndexStatus): void {
    if (!status || typeof status.uri !== "string") return;
    this.folders.set(status.uri, status);
    this.render();
  }

  /** A problem to show until `clearWarning(key)` (or a restart). */
  setWarning(key: string, message: string): void {
    this.warnings.set(key, message);
    this.render();
  }

  clearWarning(key: string): void {
    if (this.warnings.delete(key)) this.render();
  }

  setServer(state: "starting" | "running" | "stopped"): void {
    this.server = state;
    if (state === "starting") {
      this.folders.clear();
      this.warnings.clear();
    }
    this.render();
  }

  forgetFolder(uri: string): void {
    if (this.folders.delete(uri)) this.render();
  }

  view(): StatusView {
    return statusView([...this.folders.values()], [...this.warnings.values()], this.server);
  }

  private render(): void {
    const view = this.view();
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.command = view.command;
    this.item.backgroundColor = view.warning ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
  }

  dispose(): void {
    this.item.dispose();
  }
}
