import type { SearchResponse, SearchResult } from "../../src/protocol";

export function result(overrides: Partial<SearchResult> = {}): SearchResult {
  return {
    folder: "billing",
    uri: "file:///ws/billing/billing.py",
    path: "billing.py",
    start_line: 9,
    end_line: 14,
    kind: "function",
    qualified_name: "billing.retry_failed_charge",
    layer: "code",
    language: "python",
    score: 0.05,
    snippet: "\n    def retry_failed_charge(amount, attempts=3):\n        for _ in range(attempts):",
    snippet_start_line: 9,
    truncated: false,
    provenance: [{ stream: "symbol", rank: 1, score: 1 }],
    chunk_id: "1",
    node_id: "2",
    history: null,
    ...overrides,
  };
}

export function response(results: SearchResult[], complete = true): SearchResponse {
  return {
    query: "q",
    results,
    streams: [],
    took_ms: 1,
    tokens: 10,
    truncated_by_budget: false,
    complete,
    index: [
      {
        folder: "billing",
        uri: "file:///ws/billing",
        state: complete ? "ready" : "indexing",
        complete,
        files_done: complete ? 3 : 1,
        files_total: 3,
        files_ratio: complete ? 1 : 0.3333,
        vectors: { enabled: true, embedded: 0, embeddable: 0, coverage: 1 },
      },
    ],
  };
}
