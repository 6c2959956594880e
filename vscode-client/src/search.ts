// codesift: Search - a QuickPick that asks codesift/search as the person types.
//
// Each keystroke restarts a short debounce; when it fires, the previous request
// is cancelled (vscode-languageclient turns that into $/cancelRequest) and a new
// one is sent. A response is shown only if it answers the latest query. Every
// item has `alwaysShow`, so VS Code's own label matching never hides a result.

import * as vscode from "vscode";
import type { ResourceResult, SearchParams, SearchResponse, SearchResult } from "./protocol";
import {
  describeFilters,
  parseQuery,
  searchParams,
  visibleResults,
  type ParsedQuery,
  type SearchFilters,
} from "./query";
import type { SearchDefaults } from "./settings";

export interface ResultItem extends vscode.QuickPickItem {
  result?: SearchResult;
}

export interface SearchDeps {
  request(params: SearchParams, token: vscode.CancellationToken): Promise<SearchResponse>;
  open(result: SearchResult): Promise<void> | void;
  defaults(): SearchDefaults;
  log?: (message: string) => void;
}

const KIND_ICONS: Record<string, string> = {
  function: "symbol-function",
  method: "symbol-method",
  constructor: "symbol-constructor",
  class: "symbol-class",
  struct: "symbol-struct",
  union: "symbol-struct",
  interface: "symbol-interface",
  trait: "symbol-interface",
  protocol: "symbol-interface",
  enum: "symbol-enum",
  module: "symbol-module",
  namespace: "symbol-namespace",
  package: "symbol-package",
  type: "symbol-class",
  constant: "symbol-constant",
  variable: "symbol-variable",
  field: "symbol-field",
  property: "symbol-property",
  macro: "symbol-misc",
  section: "markdown",
  text: "file-text",
};

export function kindIcon(result: Pick<SearchResult, "kind" | "layer">): string {
  if (result.layer === "doc") return "markdown";
  return KIND_ICONS[result.kind] ?? "symbol-misc";
}

export function firstSnippetLine(snippet: string): string {
  for (const line of snippet.split(/\r?\n/)) {
    const trimmed = line.trim();
    if (trimmed) return trimmed.length > 160 ? `${trimmed.slice(0, 159)}…` : trimmed;
  }
  return "";
}

export function resultItem(result: SearchResult, multiFolder: boolean): ResultItem {
  const place = multiFolder && result.folder ? `${result.folder}/${result.path}` : result.path;
  const name = result.qualified_name || result.path;
  const related = result.related ?? [];
  const mentioned = related.length
    ? ` · mentioned in ${related[0].collection}: ${related[0].title}${related.length > 1 ? ` (+${related.length - 1})` : ""}`
    : "";
  return {
    label: `$(${kindIcon(result)}) ${name}`,
    description: `${place}:${result.start_line}`,
    detail: firstSnippetLine(result.snippet) + mentioned,
    alwaysShow: true,
    result,
  };
}

/** A collection resource: its title, the collection and path:line; opens like a result. */
export function resourceItem(resource: ResourceResult): ResultItem {
  const item: ResultItem = {
    label: `$(book) ${resource.title || resource.path}`,
    description: `${resource.collection} · ${resource.path}:${resource.start_line}`,
    detail: firstSnippetLine(resource.snippet),
    alwaysShow: true,
  };
  if (resource.uri) item.result = { ...resource, folder: resource.collection, uri: resource.uri };
  return item;
}

function separator(label: string): ResultItem {
  return { label, kind: vscode.QuickPickItemKind.Separator, alwaysShow: true };
}

function messageItem(label: string, detail?: string): ResultItem {
  return { label, detail, alwaysShow: true };
}

interface FilterButton extends vscode.QuickInputButton {
  filter: "code" | "docs" | "tests" | "since";
}

/** Presets the "since" button cycles through (the server reads relative times). */
export const SINCE_PRESETS: (string | undefined)[] = [undefined, "1d", "1w", "1mo"];

export function nextSince(current: string | undefined): string | undefined {
  const at = SINCE_PRESETS.indexOf(current);
  return SINCE_PRESETS[(at + 1) % SINCE_PRESETS.length];
}

export function filterButtons(filters: SearchFilters): FilterButton[] {
  const state = (on: boolean) => (on ? "on" : "off");
  return [
    {
      filter: "code",
      iconPath: new vscode.ThemeIcon(filters.code ? "code" : "circle-slash"),
      tooltip: `Code results: ${state(filters.code)} (+code / -code)`,
    },
    {
      filter: "docs",
      iconPath: new vscode.ThemeIcon(filters.docs ? "book" : "circle-slash"),
      tooltip: `Documentation results: ${state(filters.docs)} (+docs / -docs)`,
    },
    {
      filter: "tests",
      iconPath: new vscode.ThemeIcon(filters.tests ? "beaker" : "circle-slash"),
      tooltip: `Test files: ${
        filters.tests ? "included" : filters.testsStrict ? "left out" : "left out unless the query asks for test code"
      } (+tests / -tests)`,
    },
    {
      filter: "since",
      iconPath: new vscode.ThemeIcon(filters.since ? "history" : "clock"),
      tooltip: filters.since
        ? `Changed since ${filters.since}; click for the next range (or type since:2w, since:v1.2.0)`
        : "Any time; click to show only code changed in the last day, week, month (or type since:2w)",
    },
  ];
}

export class SearchSession {
  readonly filters: SearchFilters;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private running: vscode.CancellationTokenSource | undefined;
  private generation = 0;
  private disposables: vscode.Disposable[] = [];
  private multiFolder: boolean;
  /** Settles when the latest query has been answered (tests wait on it). */
  idle: Promise<void> = Promise.resolve();

  constructor(
    private readonly pick: vscode.QuickPick<ResultItem>,
    private readonly deps: SearchDeps,
    options: { multiFolder?: boolean } = {},
  ) {
    const defaults = deps.defaults();
    this.filters = { code: true, docs: true, tests: defaults.includeTests };
    this.multiFolder = options.multiFolder ?? false;
    pick.placeholder = "Search code and docs (since:2w lang:go path:src/** -tests +docs)";
    pick.matchOnDescription = false;
    pick.matchOnDetail = false;
    pick.title = "codesift";
    pick.buttons = filterButtons(this.filters);
    this.disposables.push(
      pick.onDidChangeValue((value) => this.schedule(value)),
      pick.onDidAccept(() => void this.accept()),
      pick.onDidTriggerButton((button) => this.toggle(button as FilterButton)),
      pick.onDidHide(() => this.dispose()),
    );
  }

  show(initial = ""): void {
    if (initial) this.pick.value = initial;
    this.pick.show();
    if (initial) this.schedule(initial);
  }

  private schedule(value: string): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.updateTitle(value);
    const generation = ++this.generation;
    if (!parseQuery(value, this.filters).text.trim()) {
      this.cancelRunning();
      this.pick.busy = false;
      this.pick.items = [];
      this.idle = Promise.resolve();
      return;
    }
    let settle: () => void = () => undefined;
    this.idle = new Promise<void>((resolve) => (settle = resolve));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.run(value, generation).finally(settle);
    }, this.deps.defaults().debounceMs);
    // A newer query supersedes the older one at once, even while debouncing.
    const superseded = this.running;
    if (superseded) {
      this.running = undefined;
      superseded.cancel();
      superseded.dispose();
    }
  }

  private cancelRunning(): void {
    const running = this.running;
    this.running = undefined;
    running?.cancel();
    running?.dispose();
  }

  private async run(value: string, generation: number): Promise<void> {
    this.cancelRunning();
    const source = new vscode.CancellationTokenSource();
    this.running = source;
    const defaults = this.deps.defaults();
    const query = parseQuery(value, this.filters);
    const params = searchParams(query, defaults);
    this.pick.busy = true;
    try {
      const response = await this.deps.request(params, source.token);
      if (generation !== this.generation || source.token.isCancellationRequested) return;
      this.render(response, query, defaults.resultCount);
    } catch (error) {
      if (generation !== this.generation || source.token.isCancellationRequested) return;
      const message = error instanceof Error ? error.message : String(error);
      this.deps.log?.(`search failed: ${message}`);
      this.pick.items = [messageItem("$(error) codesift could not search", message)];
    } finally {
      if (this.running === source) {
        this.running = undefined;
        source.dispose();
      }
      if (generation === this.generation) this.pick.busy = false;
    }
  }

  private render(response: SearchResponse, query: ParsedQuery, resultCount: number | undefined): void {
    const results = visibleResults(response.results, query, resultCount);
    const items: ResultItem[] = [];
    const routed = response.routed;
    if (this.multiFolder && routed) {
      // Which folders the router chose for an unscoped search (none: every folder).
      items.push(separator(routed.length ? `Routed to ${routed.join(", ")}` : "Searched every folder"));
    }
    items.push(...results.map((r) => resultItem(r, this.multiFolder)));
    const resources = query.filters.docs ? (response.resources ?? []) : [];
    if (resources.length) {
      items.push(separator("Document collections"), ...resources.map(resourceItem));
    }
    if (!items.some((i) => i.result)) {
      items.push(messageItem("No results", response.complete ? undefined : "The index is still being built."));
    } else if (!response.complete) {
      const indexing = response.index.filter((f) => !f.complete);
      const detail = indexing
        .map((f) => `${f.folder}: ${f.state}${f.files_total ? ` ${Math.round(f.files_ratio * 100)}%` : ""}`)
        .join(", ");
      items.push(messageItem("$(sync~spin) The index is still being built; results may be missing", detail));
    }
    this.pick.items = items;
  }

  private toggle(button: FilterButton): void {
    if (button.filter === "since") this.filters.since = nextSince(this.filters.since);
    else this.filters[button.filter] = !this.filters[button.filter];
    if (button.filter === "tests") this.filters.testsStrict = false; // the button's "off" is auto
    if (!this.filters.code && !this.filters.docs) {
      // Both off means nothing to search: switch the other one back on.
      this.filters[button.filter === "code" ? "docs" : "code"] = true;
    }
    this.pick.buttons = filterButtons(this.filters);
    this.schedule(this.pick.value);
  }

  private updateTitle(value: string): void {
    const summary = describeFilters(parseQuery(value, this.filters));
    this.pick.title = summary ? `codesift · ${summary}` : "codesift";
  }

  private async accept(): Promise<void> {
    const item = this.pick.selectedItems[0] ?? this.pick.activeItems[0];
    if (!item?.result) return;
    this.pick.hide();
    await this.deps.open(item.result);
  }

  dispose(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.generation++;
    this.cancelRunning();
    for (const d of this.disposables) d.dispose();
    this.disposables = [];
    this.pick.dispose();
  }
}

// -- opening a result --------------------------------------------------------------

const highlight = { decoration: undefined as vscode.TextEditorDecorationType | undefined };

/** The editor range of a result (its 1-based inclusive lines). */
export function resultRange(result: Pick<SearchResult, "start_line" | "end_line">): vscode.Range {
  const start = Math.max(0, result.start_line - 1);
  const end = Math.max(start, result.end_line - 1);
  return new vscode.Range(start, 0, end, Number.MAX_SAFE_INTEGER);
}

/** Opens the file at the result, puts the cursor on its first line and highlights its lines briefly. */
export async function openResult(result: SearchResult, highlightMs = 1500): Promise<void> {
  const uri = vscode.Uri.parse(result.uri);
  const range = resultRange(result);
  const editor = await vscode.window.showTextDocument(uri, {
    selection: new vscode.Range(range.start, range.start),
    preview: true,
  });
  const lastLine = Math.min(range.end.line, editor.document.lineCount - 1);
  const shown = new vscode.Range(range.start, editor.document.lineAt(lastLine).range.end);
  editor.revealRange(shown, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  highlight.decoration?.dispose();
  const decoration = vscode.window.createTextEditorDecorationType({
    isWholeLine: true,
    backgroundColor: new vscode.ThemeColor("editor.rangeHighlightBackground"),
  });
  highlight.decoration = decoration;
  editor.setDecorations(decoration, [shown]);
  setTimeout(() => {
    decoration.dispose();
    if (highlight.decoration === decoration) highlight.decoration = undefined;
  }, highlightMs);
}
