// codesift: Who calls this? - the call hierarchy peek for the symbol under the cursor.
//
// The peek is VS Code's own (`editor.showCallHierarchy`, or the references view's
// `references-view.showCallHierarchy` where the peek command is missing); the
// calls come from the server's textDocument/prepareCallHierarchy and
// callHierarchy/incomingCalls. Before opening it the command asks the server
// whether it knows a definition at the cursor, so an empty answer gets a
// message that says why instead of an empty panel.

export const PEEK_COMMAND = "editor.showCallHierarchy";
export const VIEW_COMMAND = "references-view.showCallHierarchy";
export const INCOMING_COMMAND = "editor.showIncomingCalls";

export interface CursorSymbol {
  uri: string;
  line: number; // 0-based
  character: number; // 0-based, UTF-16
  word?: string;
}

export interface WhoCallsDeps {
  cursor(): CursorSymbol | undefined;
  /** textDocument/prepareCallHierarchy to codesift; resolves to the number of items. */
  prepare(cursor: CursorSymbol): Promise<number>;
  commands(): Promise<string[]>;
  execute(command: string, ...args: unknown[]): Promise<unknown>;
  info(message: string): void;
}

export type WhoCallsOutcome = "no-editor" | "nothing-here" | "peek" | "view" | "no-command";

export async function whoCallsThis(deps: WhoCallsDeps): Promise<WhoCallsOutcome> {
  const cursor = deps.cursor();
  if (!cursor) {
    deps.info("codesift: open a file and put the cursor on a function or method name.");
    return "no-editor";
  }
  let items = 0;
  try {
    items = await deps.prepare(cursor);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    deps.info(`codesift: cannot find callers here: ${message}`);
    return "nothing-here";
  }
  if (!items) {
    const what = cursor.word ? `"${cursor.word}"` : "the cursor";
    deps.info(`codesift: no indexed definition or call at ${what} (is the file indexed yet?).`);
    return "nothing-here";
  }
  const available = new Set(await deps.commands());
  if (available.has(PEEK_COMMAND)) {
    await deps.execute(PEEK_COMMAND);
    // The peek remembers the last direction; ask for callers explicitly.
    if (available.has(INCOMING_COMMAND)) {
      await deps.execute(INCOMING_COMMAND).catch(() => undefined);
    }
    return "peek";
  }
  if (available.has(VIEW_COMMAND)) {
    await deps.execute(VIEW_COMMAND);
    return "view";
  }
  deps.info("codesift: this VS Code has no call hierarchy view.");
  return "no-command";
}
