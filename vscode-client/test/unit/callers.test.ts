import assert from "node:assert/strict";
import { test } from "node:test";
import { INCOMING_COMMAND, PEEK_COMMAND, VIEW_COMMAND, whoCallsThis, type CursorSymbol, type WhoCallsDeps } from "../../src/callers";

function deps(overrides: Partial<WhoCallsDeps> = {}) {
  const executed: string[] = [];
  const info: string[] = [];
  const prepared: CursorSymbol[] = [];
  const all: WhoCallsDeps = {
    cursor: () => ({ uri: "file:///ws/billing.py", line: 8, character: 6, word: "retry_failed_charge" }),
    prepare: async (c) => {
      prepared.push(c);
      return 1;
    },
    commands: async () => [PEEK_COMMAND, VIEW_COMMAND, INCOMING_COMMAND],
    execute: async (command) => {
      executed.push(command);
    },
    info: (m) => info.push(m),
    ...overrides,
  };
  return { all, executed, info, prepared };
}

test("opens the call hierarchy peek on callers when codesift knows the symbol", async () => {
  const d = deps();
  assert.equal(await whoCallsThis(d.all), "peek");
  assert.deepEqual(d.executed, [PEEK_COMMAND, INCOMING_COMMAND]);
  assert.deepEqual(d.prepared, [{ uri: "file:///ws/billing.py", line: 8, character: 6, word: "retry_failed_charge" }]);
});

test("falls back to the references view when the peek command is missing", async () => {
  const d = deps({ commands: async () => [VIEW_COMMAND] });
  assert.equal(await whoCallsThis(d.all), "view");
  assert.deepEqual(d.executed, [VIEW_COMMAND]);
});

test("says why nothing opens: no editor, nothing indexed at the cursor, a server error", async () => {
  const none = deps({ cursor: () => undefined });
  assert.equal(await whoCallsThis(none.all), "no-editor");
  assert.match(none.info[0], /open a file/);

  const empty = deps({ prepare: async () => 0 });
  assert.equal(await whoCallsThis(empty.all), "nothing-here");
  assert.match(empty.info[0], /no indexed definition or call at "retry_failed_charge"/);
  assert.deepEqual(empty.executed, []);

  const failing = deps({
    prepare: async () => {
      throw new Error("position past the end of the file");
    },
  });
  assert.equal(await whoCallsThis(failing.all), "nothing-here");
  assert.match(failing.info[0], /past the end/);
});
