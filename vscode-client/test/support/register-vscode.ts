// Preloaded by `node --test --require`: `require("vscode")` gets the stub.

import Module = require("node:module");
import * as path from "node:path";

const stub = path.join(__dirname, "vscode-stub.js");
const moduleWithResolve = Module as unknown as {
  _resolveFilename(request: string, ...rest: unknown[]): string;
};
const resolve = moduleWithResolve._resolveFilename;
moduleWithResolve._resolveFilename = function (request: string, ...rest: unknown[]): string {
  if (request === "vscode") return stub;
  return resolve.call(this, request, ...rest);
};
