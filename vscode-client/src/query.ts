// What the person types into codesift: Search -> codesift/search params.
//
// Prefixes inside the query (anywhere, separated by spaces) refine it and are
// removed from the query text:
//   since:2w  until:2025-03-01  as_of:v1.2.0   git time filters
//   lang:python                                 languages (repeatable)
//   path:src/**                                 path globs (repeatable)
//   +tests / -tests                             include or leave out test files (the
//                                               beaker button's "off" leaves them out
//                                               unless the query asks for test code)
//   +code / -code, +docs / -docs                layers
// The buttons of the QuickPick set the same filters; a prefix wins over a button.

import type { SearchParams, SearchResult } from "./protocol";

export interface SearchFilters {
  code: boolean;
  docs: boolean;
  tests: boolean;
  /** `-tests` typed: test files left out whatever the query (else, with `tests`
   * off, the server keeps them for a query that asks for test code). */
  testsStrict?: boolean;
  since?: string;
}

export interface ParsedQuery {
  text: string;
  filters: SearchFilters;
  until?: string;
  asOf?: string;
  languages: string[];
  paths: string[];
}

const CODE_LAYERS = ["code", "summary"];
const DOC_LAYERS = ["doc"];

export function parseQuery(raw: string, base: SearchFilters): ParsedQuery {
  const filters: SearchFilters = { ...base };
  const words: string[] = [];
  const parsed: ParsedQuery = { text: "", filters, languages: [], paths: [] };
  for (const word of raw.split(/\s+/)) {
    if (!word) continue;
    const match = /^(since|until|as_of|asof|lang|path):(.+)$/i.exec(word);
    if (match) {
      const value = match[2];
      switch (match[1].toLowerCase()) {
        case "since":
          filters.since = value;
          break;
        case "until":
          parsed.until = value;
          break;
        case "as_of":
        case "asof":
          parsed.asOf = value;
          break;
        case "lang":
          parsed.languages.push(value.toLowerCase());
          break;
        case "path":
          parsed.paths.push(value);
          break;
      }
      continue;
    }
    const toggle = /^([+-])(tests|code|docs)$/i.exec(word);
    if (toggle) {
      const on = toggle[1] === "+";
      const name = toggle[2].toLowerCase() as "tests" | "code" | "docs";
      filters[name] = on;
      if (name === "tests") filters.testsStrict = !on;
      continue;
    }
    words.push(word);
  }
  parsed.text = words.join(" ");
  return parsed;
}

export interface RequestShape {
  /** Unset: the server's search.top_k applies. */
  resultCount?: number;
  /** Unset: the server's search.snippet_chars applies. */
  snippetWidth?: number;
}

/**
 * The codesift/search params the extension sends for a parsed query. Test files are
 * left out by the server, by its language-aware rule: `tests: "auto"` (kept for a
 * query that asks for test code: a quoted text, a pasted line, a test's name or
 * path), or `"exclude"` after `-tests`; top_k and snippet_chars are sent only when
 * the person set them.
 */
export function searchParams(query: ParsedQuery, shape: RequestShape): SearchParams {
  const { filters } = query;
  const layers = [...(filters.code ? CODE_LAYERS : []), ...(filters.docs ? DOC_LAYERS : [])];
  const params: SearchParams = {
    query: query.text,
    layers: layers.length ? layers : [...CODE_LAYERS, ...DOC_LAYERS],
  };
  if (shape.resultCount !== undefined) params.top_k = shape.resultCount;
  if (shape.snippetWidth !== undefined) params.snippet_chars = shape.snippetWidth;
  if (!filters.tests) params.tests = filters.testsStrict ? "exclude" : "auto";
  if (query.languages.length) params.languages = query.languages;
  if (query.paths.length) params.paths = query.paths;
  if (filters.since) params.since = filters.since;
  if (query.until) params.until = query.until;
  if (query.asOf) params.as_of = query.asOf;
  return params;
}

/**
 * The results to show: the server's page as it is (it left out test files when
 * asked to), cut to the result count when the person set one. A result the server
 * flags `is_test` is dropped too when `-tests` leaves them out whatever the query
 * (with `auto`, the server kept those the query asked for).
 */
export function visibleResults(results: SearchResult[], query: ParsedQuery, resultCount?: number): SearchResult[] {
  const strict = !query.filters.tests && query.filters.testsStrict === true;
  const kept = strict ? results.filter((r) => r.is_test !== true) : results;
  return resultCount === undefined ? kept : kept.slice(0, resultCount);
}

/** A one-line summary of the active filters, for the QuickPick title. */
export function describeFilters(query: ParsedQuery): string {
  const parts: string[] = [];
  const { filters } = query;
  if (filters.code && !filters.docs) parts.push("code only");
  else if (filters.docs && !filters.code) parts.push("docs only");
  if (!filters.tests) parts.push("no tests");
  if (filters.since) parts.push(`since ${filters.since}`);
  if (query.until) parts.push(`until ${query.until}`);
  if (query.asOf) parts.push(`as of ${query.asOf}`);
  if (query.languages.length) parts.push(query.languages.join(", "));
  if (query.paths.length) parts.push(query.paths.join(", "));
  return parts.join(" · ");
}
