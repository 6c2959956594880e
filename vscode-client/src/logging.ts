// One LogOutputChannel for everything; the LSP trace follows its level.
//
// vscode-languageclient writes its trace with append/appendLine on a plain
// OutputChannel. `TraceChannel` forwards those lines to the log channel at
// `trace` level, and `traceSetting` maps the channel's level to the client's
// trace: Trace -> verbose (messages with their params), Debug -> messages,
// anything else -> off (no trace traffic at all).

import * as vscode from "vscode";

export type TraceSetting = "off" | "messages" | "verbose";

export function traceSetting(level: vscode.LogLevel): TraceSetting {
  if (level === vscode.LogLevel.Trace) return "verbose";
  if (level === vscode.LogLevel.Debug) return "messages";
  return "off";
}

/** The OutputChannel vscode-languageclient writes its trace to, as log lines at trace level. */
export class TraceChannel implements vscode.OutputChannel {
  readonly name: string;
  private pending = "";

  constructor(private readonly log: vscode.LogOutputChannel) {
    this.name = log.name;
  }

  append(value: string): void {
    this.pending += value;
    const lines = this.pending.split("\n");
    this.pending = lines.pop() ?? "";
    for (const line of lines) this.emit(line);
  }

  appendLine(value: string): void {
    this.append(`${value}\n`);
  }

  replace(value: string): void {
    this.pending = "";
    this.append(value);
  }

  private emit(line: string): void {
    // The client starts its own lines with "[Trace - 10:01:02 AM] "; the log channel stamps them already.
    this.log.trace(line.replace(/^\[(Trace|LSP)\s*-\s*[^\]]*\]\s?/, ""));
  }

  clear(): void {
    this.pending = "";
  }

  show(preserveFocus?: boolean): void;
  show(column?: vscode.ViewColumn, preserveFocus?: boolean): void;
  show(arg?: boolean | vscode.ViewColumn, preserveFocus?: boolean): void {
    this.log.show(typeof arg === "boolean" ? arg : preserveFocus);
  }

  hide(): void {
    this.log.hide();
  }

  dispose(): void {
    // The log channel is owned by the extension.
  }
}
