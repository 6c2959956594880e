// The parts of codesift's language server protocol the extension uses
// (docs/protocol.md in the codesift repository is the reference).

export const SEARCH = "codesift/search";
export const ROUTE = "codesift/route";
export const STATUS = "codesift/status";
export const REINDEX = "codesift/reindex";
export const INDEX_STATUS = "codesift/indexStatus";

/** Options sent as initializationOptions and with workspace/didChangeConfiguration. */
export interface ServerOptions {
  embeddings?: boolean;
  watch?: boolean;
  quietMs?: number;
  maxWaitMs?: number;
  index?: Record<string, unknown>;
  search?: Record<string, unknown>;
  embedding?: Record<string, unknown>;
  rerank?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface SearchParams {
  query: string;
  top_k?: number;
  /** `exclude` leaves out results in test files (the server's language-aware rule);
   * `auto` too, unless the query asks for test code (quoted text, a pasted line of
   * code, a test's name or a test file's path). */
  tests?: "include" | "exclude" | "auto";
  layers?: string[];
  languages?: string[];
  paths?: string[];
  snippet_chars?: number;
  max_tokens?: number;
  include_graph?: boolean;
  folders?: string[];
  /** false: an unscoped search over several folders searches every one, without routing. */
  route?: boolean;
  as_of?: string;
  since?: string;
  until?: string;
}

export interface SearchResult {
  folder: string;
  uri: string;
  path: string;
  start_line: number; // 1-based, inclusive
  end_line: number;
  kind: string;
  qualified_name: string;
  layer: string;
  language: string;
  score: number;
  snippet: string;
  snippet_start_line: number;
  truncated: boolean;
  /** Whether the result is in a test file, by the server's rule (absent from older servers). */
  is_test?: boolean;
  provenance: { stream: string; rank: number; score: number }[];
  chunk_id: string;
  node_id: string | null;
  history?: {
    created: string | null;
    changed: string | null;
    commit: string | null;
    subject: string | null;
    source: string;
  } | null;
  /** The document collection of a resource ("" or absent for a workspace result). */
  collection?: string;
  /** Collection resources that mention this code result (absent from older servers). */
  related?: RelatedResource[];
}

/** A collection resource that mentions a code result. */
export interface RelatedResource {
  collection: string;
  path: string;
  start_line: number;
  end_line: number;
  title: string;
  /** The mention found: a qualified name, a name, a file or a table. */
  term: string;
}

/** A document collection's resource listed beside the code results. */
export interface ResourceResult extends Omit<SearchResult, "folder" | "uri"> {
  collection: string;
  title: string;
  uri: string | null;
}

export interface RouteMatch {
  name: string;
  kind: "repository" | "collection";
  uri: string | null;
  confidence: number;
  rationale: string;
  matched: string[];
}

export interface RouteResponse {
  query: string;
  terms: string[];
  repositories: RouteMatch[];
  collections: RouteMatch[];
}

export interface VectorCoverage {
  enabled: boolean;
  embedded: number;
  embeddable: number;
  coverage: number;
  /** Vectors the server holds in memory for the vector stream (absent from older servers). */
  in_memory?: number;
  memory_mib?: number;
}

export type FolderState = "starting" | "scanning" | "indexing" | "embedding" | "ready" | "error";

export interface FolderCompleteness {
  folder: string;
  uri: string;
  state: FolderState;
  complete: boolean;
  files_done: number;
  files_total: number;
  files_ratio: number;
  vectors: VectorCoverage;
}

export interface SearchResponse {
  query: string;
  results: SearchResult[];
  streams: {
    folder: string;
    stream: string;
    candidates: number;
    ms: number;
    error: string | null;
    /** Its weight in this search's fusion. */
    weight?: number | null;
    /** The feedback stream's words added to the query. */
    added_terms?: string[];
  }[];
  took_ms: number;
  tokens: number;
  truncated_by_budget: boolean;
  complete: boolean;
  index: FolderCompleteness[];
  /** The best resources of the searched folders' document collections (absent from older servers). */
  resources?: ResourceResult[];
  /** The folders an unscoped search was routed to ([]: none passed, every folder searched;
   * null or absent: not routed). */
  routed?: string[] | null;
  /** The folders in the router's order, best first, in which their results were
   * merged (null or absent: not routed, merged by score alone). */
  folder_order?: string[] | null;
}

/** The codesift/indexStatus notification. */
export interface IndexStatus extends FolderCompleteness {
  chunks_done: number;
  chunks_total: number;
  pending: { paths: number; rescan: boolean; busy: boolean; watcher_paths: number };
}

export interface StatusFolder {
  name: string;
  uri: string;
  root: string;
  database: string;
  state: FolderState;
  complete: boolean;
  files?: number;
  nodes?: number;
  edges?: number;
  chunks?: number;
  vectors: VectorCoverage;
  warnings: string[];
}

export interface StatusResponse {
  time: string;
  folders: StatusFolder[];
}

export interface ReindexParams {
  paths?: string[];
  folders?: string[];
  wait?: boolean;
  timeout_ms?: number;
}

export interface ReindexResponse {
  queued: ({ folder: string; paths: string[] } | { folder: string; rescan: true })[];
  done: boolean | null;
}
