// A small stand-in for the `vscode` module: the parts the extension's logic
// modules use, with enough behaviour to drive them from tests. Cancellation and
// events are vscode-jsonrpc's (the same objects vscode-languageclient expects),
// so a token made here can be passed to a real JSON-RPC connection.

import { CancellationTokenSource, Emitter } from "vscode-jsonrpc";

export { CancellationTokenSource };

export class EventEmitter<T> extends Emitter<T> {}

export class Disposable {
  constructor(private readonly callOnDispose: () => void) {}
  dispose(): void {
    this.callOnDispose();
  }
}

export class Position {
  constructor(
    readonly line: number,
    readonly character: number,
  ) {}
}

export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(a: Position | number, b: Position | number, c?: number, d?: number) {
    if (typeof a === "number") {
      this.start = new Position(a, b as number);
      this.end = new Position(c as number, d as number);
    } else {
      this.start = a;
      this.end = b as Position;
    }
  }
  get isEmpty(): boolean {
    return this.start.line === this.end.line && this.start.character === this.end.character;
  }
}

export class ThemeIcon {
  constructor(readonly id: string) {}
}

export class ThemeColor {
  constructor(readonly id: string) {}
}

export class Uri {
  private constructor(readonly value: string) {}
  static parse(value: string): Uri {
    return new Uri(value);
  }
  static file(path: string): Uri {
    return new Uri(`file://${path}`);
  }
  get fsPath(): string {
    return decodeURIComponent(this.value.replace(/^file:\/\//, ""));
  }
  toString(): string {
    return this.value;
  }
}

export enum LogLevel {
  Off = 0,
  Trace = 1,
  Debug = 2,
  Info = 3,
  Warning = 4,
  Error = 5,
}

export enum QuickPickItemKind {
  Separator = -1,
  Default = 0,
}

export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}

export enum TextEditorRevealType {
  Default = 0,
  InCenter = 1,
  InCenterIfOutsideViewport = 2,
  AtTop = 3,
}

export interface QuickPickItemLike {
  label: string;
  alwaysShow?: boolean;
}

/** A QuickPick whose events tests fire by hand (`type`, `accept`, `pressButton`, `hide`). */
export class FakeQuickPick<T extends QuickPickItemLike> {
  value = "";
  placeholder: string | undefined;
  title: string | undefined;
  busy = false;
  matchOnDescription = false;
  matchOnDetail = false;
  buttons: readonly unknown[] = [];
  items: readonly T[] = [];
  activeItems: readonly T[] = [];
  selectedItems: readonly T[] = [];
  visible = false;
  disposed = false;
  /** Every `items` value assigned, in order. */
  readonly history: T[][] = [];

  private readonly valueEmitter = new Emitter<string>();
  private readonly acceptEmitter = new Emitter<void>();
  private readonly buttonEmitter = new Emitter<unknown>();
  private readonly hideEmitter = new Emitter<void>();
  readonly onDidChangeValue = this.valueEmitter.event;
  readonly onDidAccept = this.acceptEmitter.event;
  readonly onDidTriggerButton = this.buttonEmitter.event;
  readonly onDidHide = this.hideEmitter.event;

  constructor() {
    let items: readonly T[] = [];
    Object.defineProperty(this, "items", {
      get: () => items,
      set: (value: readonly T[]) => {
        items = value;
        this.history.push([...value]);
        this.activeItems = value.length ? [value[0]] : [];
      },
    });
  }

  show(): void {
    this.visible = true;
  }
  hide(): void {
    if (!this.visible) return;
    this.visible = false;
    this.hideEmitter.fire();
  }
  dispose(): void {
    this.disposed = true;
  }
  type(value: string): void {
    this.value = value;
    this.valueEmitter.fire(value);
  }
  accept(item?: T): void {
    this.selectedItems = item ? [item] : this.activeItems;
    this.acceptEmitter.fire();
  }
  pressButton(index: number): void {
    this.buttonEmitter.fire(this.buttons[index]);
  }
}

export class FakeStatusBarItem {
  text = "";
  tooltip: string | undefined;
  command: string | undefined;
  backgroundColor: ThemeColor | undefined;
  name: string | undefined;
  shown = false;
  disposed = false;
  show(): void {
    this.shown = true;
  }
  hide(): void {
    this.shown = false;
  }
  dispose(): void {
    this.disposed = true;
  }
}

export const calls = {
  executed: [] as { command: string; args: unknown[] }[],
  messages: [] as { kind: string; message: string }[],
  shownDocuments: [] as { uri: string; options: unknown }[],
  reset(): void {
    this.executed.length = 0;
    this.messages.length = 0;
    this.shownDocuments.length = 0;
  },
};

export const window = {
  createQuickPick<T extends QuickPickItemLike>(): FakeQuickPick<T> {
    return new FakeQuickPick<T>();
  },
  createStatusBarItem(): FakeStatusBarItem {
    return new FakeStatusBarItem();
  },
  showInformationMessage(message: string): Promise<undefined> {
    calls.messages.push({ kind: "info", message });
    return Promise.resolve(undefined);
  },
  showWarningMessage(message: string): Promise<undefined> {
    calls.messages.push({ kind: "warning", message });
    return Promise.resolve(undefined);
  },
  showErrorMessage(message: string): Promise<undefined> {
    calls.messages.push({ kind: "error", message });
    return Promise.resolve(undefined);
  },
  createTextEditorDecorationType(): { dispose(): void } {
    return { dispose: () => undefined };
  },
  async showTextDocument(uri: Uri, options: unknown): Promise<unknown> {
    calls.shownDocuments.push({ uri: uri.toString(), options });
    const revealed: Range[] = [];
    return {
      document: {
        lineCount: 200,
        lineAt: (line: number) => ({ range: new Range(line, 0, line, 80) }),
      },
      revealed,
      revealRange(range: Range) {
        revealed.push(range);
      },
      setDecorations: () => undefined,
    };
  },
};

export const commands = {
  executeCommand(command: string, ...args: unknown[]): Promise<unknown> {
    calls.executed.push({ command, args });
    return Promise.resolve(undefined);
  },
  getCommands(): Promise<string[]> {
    return Promise.resolve([]);
  },
};

export const workspace = {
  workspaceFolders: undefined as unknown,
  getConfiguration(): unknown {
    return { get: (_key: string, d: unknown) => d, inspect: () => undefined };
  },
};
