// `codesift.*` settings -> the server's initializationOptions.
//
// Only values the person actually set are sent for the `index` / `search`
// sections: the server applies client options over each folder's
// .codesift.toml, so sending built-in defaults would silently undo a folder's
// own file. `embeddings` and `watch` are server-wide switches and always sent.

import type { ServerOptions } from "./protocol";

/** The slice of vscode.WorkspaceConfiguration this module reads. */
export interface ConfigReader {
  get<T>(key: string, defaultValue: T): T;
  inspect<T>(key: string):
    | { globalValue?: T; workspaceValue?: T; workspaceFolderValue?: T }
    | undefined;
}

export interface SearchDefaults {
  /** top_k as the person set it; undefined: the server's search.top_k applies. */
  resultCount?: number;
  /** snippet_chars as the person set it; undefined: the server's search.snippet_chars. */
  snippetWidth?: number;
  debounceMs: number;
  includeTests: boolean;
}

export interface ExtensionSettings {
  interpreter: string;
  search: SearchDefaults;
  serverOptions: ServerOptions;
}

const WEIGHTS: Record<string, string> = {
  lexical: "weight_lexical",
  doc: "weight_doc",
  symbol: "weight_symbol",
  symbolProse: "weight_symbol_prose",
  vector: "weight_vector",
  vectorClose: "weight_vector_close",
  feedback: "weight_feedback",
};
const PRIORS: Record<string, string> = {
  definition: "prior_definition",
  tests: "prior_tests",
  path: "prior_path",
  pathShort: "prior_path_short",
  headers: "prior_headers",
};

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The value set at any level (folder over workspace over user), or undefined. */
function explicit<T>(config: ConfigReader, key: string): T | undefined {
  const seen = config.inspect<T>(key);
  if (!seen) return undefined;
  return seen.workspaceFolderValue ?? seen.workspaceValue ?? seen.globalValue;
}

/** Object settings: the keys set at any level, merged (folder over workspace over user). */
function explicitObject(config: ConfigReader, key: string): Record<string, unknown> {
  const seen = config.inspect<Record<string, unknown>>(key);
  const merged: Record<string, unknown> = {};
  for (const level of [seen?.globalValue, seen?.workspaceValue, seen?.workspaceFolderValue]) {
    if (isObject(level)) Object.assign(merged, level);
  }
  return merged;
}

/** A setting the person set, clamped to what the server accepts; undefined when unset. */
function explicitInt(config: ConfigReader, key: string, low: number, high: number): number | undefined {
  const value = explicit<number>(config, key);
  if (typeof value !== "number" || !Number.isFinite(value)) return undefined;
  return clampInt(value, low, high, low);
}

function clampInt(value: unknown, low: number, high: number, fallback: number): number {
  if (typeof value !== "number" || !Number.isFinite(value)) return fallback;
  return Math.min(high, Math.max(low, Math.round(value)));
}

/** Deep merge of plain objects: `extra` wins, nested objects are merged. */
function mergeOptions(base: Record<string, unknown>, extra: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(extra)) {
    const current = out[key];
    out[key] = isObject(current) && isObject(value) ? mergeOptions(current, value) : value;
  }
  return out;
}

/** The initializationOptions for these settings (also sent on configuration changes). */
export function toServerOptions(config: ConfigReader): ServerOptions {
  const options: ServerOptions = {
    embeddings: config.get<boolean>("embeddings.enabled", true) !== false,
    watch: config.get<boolean>("watch", true) !== false,
  };
  const index: Record<string, unknown> = {};
  const location = explicit<string>(config, "index.location");
  if (typeof location === "string" && location.trim()) index.db_path = location.trim();
  const exclude = explicit<string[]>(config, "index.exclude");
  if (Array.isArray(exclude) && exclude.length) {
    index.exclude = exclude.filter((p) => typeof p === "string" && p.trim());
  }

  const search: Record<string, unknown> = {};
  const rrfK = explicit<number>(config, "fusion.rrfK");
  if (rrfK !== undefined) search.rrf_k = rrfK;
  const cap = explicit<number>(config, "fusion.candidateCap");
  if (cap !== undefined) search.candidate_cap = cap;
  for (const [name, value] of Object.entries(explicitObject(config, "fusion.weights"))) {
    if (name in WEIGHTS) search[WEIGHTS[name]] = value;
  }
  for (const [name, value] of Object.entries(explicitObject(config, "ranking.priors"))) {
    if (name in PRIORS) search[PRIORS[name]] = value;
  }
  const evidence = explicit<number>(config, "ranking.fileEvidence");
  if (evidence !== undefined) search.file_evidence = evidence;
  const diversity = explicit<number>(config, "ranking.fileDiversity");
  if (diversity !== undefined) search.file_diversity = diversity;

  const rerank: Record<string, unknown> = {};
  const rerankOn = explicit<boolean>(config, "rerank.enabled");
  if (rerankOn !== undefined) rerank.enabled = rerankOn;
  const modelPath = explicit<string>(config, "rerank.modelPath");
  if (typeof modelPath === "string" && modelPath.trim()) rerank.model_path = modelPath.trim();
  const threshold = explicit<number>(config, "rerank.threshold");
  if (threshold !== undefined) rerank.threshold = threshold;

  if (Object.keys(index).length) options.index = index;
  if (Object.keys(search).length) options.search = search;
  if (Object.keys(rerank).length) options.rerank = rerank;
  const extra = config.get<Record<string, unknown>>("serverOptions", {});
  return isObject(extra) ? (mergeOptions(options, extra) as ServerOptions) : options;
}

// Result count and snippet width are sent only when the person set them: otherwise
// the server's search.top_k and search.snippet_chars apply (each folder's
// .codesift.toml, or the server's defaults; package.json shows those defaults, and
// tests/unit/test_config_docs.py compares them with the server's).
export function readSettings(config: ConfigReader): ExtensionSettings {
  return {
    interpreter: String(config.get<string>("interpreter", "") ?? "").trim(),
    search: {
      resultCount: explicitInt(config, "search.resultCount", 1, 200),
      snippetWidth: explicitInt(config, "search.snippetWidth", 80, 4000),
      debounceMs: clampInt(config.get<number>("search.debounceMs", 150), 0, 2000, 150),
      includeTests: config.get<boolean>("search.includeTests", true) !== false,
    },
    serverOptions: toServerOptions(config),
  };
}

export type SettingsChange = "none" | "restart" | "notify" | "client";

/**
 * What a settings change needs: a restart when the server process itself changes
 * (its interpreter), a didChangeConfiguration when its options change (the server
 * reopens only the folders whose settings changed), and nothing for settings the
 * extension alone reads ("client").
 */
export function settingsChange(before: ExtensionSettings, after: ExtensionSettings): SettingsChange {
  if (before.interpreter !== after.interpreter) return "restart";
  if (JSON.stringify(before.serverOptions) !== JSON.stringify(after.serverOptions)) return "notify";
  if (JSON.stringify(before.search) !== JSON.stringify(after.search)) return "client";
  return "none";
}
