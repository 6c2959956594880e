// Every call site of a TypeScript project and the definitions the TypeScript
// language service sends it to (getDefinitionAtPosition), as JSON lines on stdout.
// Usage: node ts_calls.cjs ROOT   (ROOT: the folder whose .ts files are the project)
"use strict";
const fs = require("fs");
const path = require("path");
const ts = require("typescript");

const root = path.resolve(process.argv[2]);
const files = [];
(function walk(dir) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "node_modules" && !entry.name.startsWith(".")) walk(full);
    } else if (/\.(ts|tsx|mts|cts)$/.test(entry.name) && !entry.name.endsWith(".d.ts")) {
      files.push(full);
    }
  }
})(root);

const options = {
  target: ts.ScriptTarget.ES2020,
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Node10,
  strict: false,
  skipLibCheck: true,
  noEmit: true,
  experimentalDecorators: true,
  lib: ["lib.es2020.d.ts", "lib.dom.d.ts"],
};
const host = {
  getScriptFileNames: () => files,
  getScriptVersion: () => "1",
  getScriptSnapshot: (name) =>
    fs.existsSync(name) ? ts.ScriptSnapshot.fromString(fs.readFileSync(name, "utf8")) : undefined,
  getCurrentDirectory: () => root,
  getCompilationSettings: () => options,
  getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
  fileExists: ts.sys.fileExists,
  readFile: ts.sys.readFile,
  readDirectory: ts.sys.readDirectory,
  directoryExists: ts.sys.directoryExists,
  getDirectories: ts.sys.getDirectories,
};
const service = ts.createLanguageService(host, ts.createDocumentRegistry());
const program = service.getProgram();
const checker = program.getTypeChecker();

function rel(file) {
  const r = path.relative(root, file);
  return r.startsWith("..") || path.isAbsolute(r) ? null : r.split(path.sep).join("/");
}

// The shape of a call: how the callee is written.
function shapeOf(call, nameNode) {
  if (ts.isNewExpression(call)) return "new X()";
  if (ts.isDecorator(call)) return "@decorator";
  const callee = nameNode.parent;
  if (ts.isIdentifier(call.expression) || nameNode === call.expression) {
    const symbol = checker.getSymbolAtLocation(nameNode);
    if (symbol && symbol.flags & ts.SymbolFlags.Alias) {
      const decl = (symbol.declarations || [])[0];
      if (decl && ts.isImportSpecifier(decl) && decl.propertyName) return "f() aliased import";
      return "f() imported";
    }
    return "f()";
  }
  if (!ts.isPropertyAccessExpression(callee)) return "a.b.f()";
  const receiver = callee.expression;
  if (receiver.kind === ts.SyntaxKind.ThisKeyword) return "this.f()";
  if (receiver.kind === ts.SyntaxKind.SuperKeyword) return "super.f()";
  if (ts.isIdentifier(receiver)) {
    const symbol = checker.getSymbolAtLocation(receiver);
    const decl = symbol && (symbol.declarations || [])[0];
    if (decl && ts.isNamespaceImport(decl)) return "ns.f()";
    if (symbol && symbol.flags & (ts.SymbolFlags.Class | ts.SymbolFlags.Alias)) return "Klass.f()";
    return "obj.f()";
  }
  return "a.b.f()";
}

function calleeName(call) {
  let expr = ts.isDecorator(call) ? call.expression : call.expression;
  if (ts.isDecorator(call) && ts.isCallExpression(expr)) expr = expr.expression;
  while (expr && (ts.isParenthesizedExpression(expr) || ts.isNonNullExpression(expr))) {
    expr = expr.expression;
  }
  if (!expr) return null;
  if (ts.isIdentifier(expr)) return expr;
  if (ts.isPropertyAccessExpression(expr) && ts.isIdentifier(expr.name)) return expr.name;
  if (ts.isPropertyAccessExpression(expr) && ts.isPrivateIdentifier(expr.name)) return expr.name;
  return null;
}

for (const file of files) {
  const source = program.getSourceFile(file);
  const site = rel(file);
  if (!source || !site) continue;
  const visit = (node) => {
    if (ts.isCallExpression(node) || ts.isNewExpression(node) || ts.isDecorator(node)) {
      const nameNode = calleeName(node);
      if (nameNode && node.expression.kind !== ts.SyntaxKind.SuperKeyword) {
        const start = nameNode.getStart(source);
        const where = source.getLineAndCharacterOfPosition(start);
        const shape = shapeOf(node, nameNode);
        for (const def of service.getDefinitionAtPosition(file, start) || []) {
          const target = rel(def.fileName);
          if (!target || def.fileName.endsWith(".d.ts")) continue;
          const targetSource = program.getSourceFile(def.fileName);
          if (!targetSource) continue;
          const at = targetSource.getLineAndCharacterOfPosition(def.textSpan.start);
          process.stdout.write(
            JSON.stringify({
              path: site,
              line: where.line + 1,
              column: where.character,
              name: nameNode.text,
              shape,
              target: target,
              target_line: at.line + 1,
              target_name: def.name,
            }) + "\n",
          );
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
}
