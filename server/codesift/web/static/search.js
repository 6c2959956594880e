// The /search console: plain DOM, no framework, no network but this server.
// Every text from the index is put in the page as text (textContent, text
// nodes): a snippet holding <script> or onerror= is shown, never run.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const LAYERS = ["code", "summary", "doc", "ast"];
  const state = { root: null, roots: {}, items: [], selected: -1, enterAt: null, seq: 0 };
  // Keypress -> first result rendered, per search (read by the browser tests).
  window.codesiftTimings = [];

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value);
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return node;
  }

  class Unauthorized extends Error {}

  async function api(method, path, body) {
    const init = { method, headers: {}, credentials: "same-origin" };
    if (body !== undefined) {
      init.headers["content-type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const response = await fetch(path, init);
    if (response.status === 401) throw new Unauthorized("unauthorized");
    let data = null;
    try { data = await response.json(); } catch (e) { data = null; }
    if (!response.ok) {
      const message = data && data.error ? data.error.message : `HTTP ${response.status}`;
      throw new Error(message);
    }
    return data;
  }

  // -- signing in --------------------------------------------------------------------

  function showSignIn() {
    $("console").hidden = true;
    $("sign-in").hidden = false;
    $("sign-out").hidden = true;
    $("who").textContent = "";
    $("token").focus();
  }

  async function start() {
    let me;
    try {
      me = await api("GET", "/api/whoami");
    } catch (e) {
      if (e instanceof Unauthorized) { showSignIn(); return; }
      $("error").textContent = e.message;
      $("console").hidden = false;
      return;
    }
    $("sign-in").hidden = true;
    $("console").hidden = false;
    $("sign-out").hidden = !me.auth;
    $("who").textContent = me.name ? `signed in as ${me.name} (${me.principal})` : "";
    await loadStatus();  // the served roots first: each result names its own
    fromLocation();
    $("q").focus();
  }

  $("sign-in-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    $("sign-in-error").textContent = "";
    try {
      await api("POST", "/api/session", { token: $("token").value });
      $("token").value = "";
      await start();
    } catch (e) {
      $("sign-in-error").textContent = e instanceof Unauthorized ? "That token is not valid." : e.message;
    }
  });

  $("sign-out").addEventListener("click", async () => {
    try { await api("DELETE", "/api/session"); } catch (e) { /* signed out anyway */ }
    $("results").replaceChildren();
    showSignIn();
  });

  // -- the query and its deep link -------------------------------------------------------

  const FIELDS = { q: "q", lang: "f-lang", path: "f-path", layer: "f-layer", as_of: "f-as-of", since: "f-since", until: "f-until", repo: "f-repo" };

  function formParams() {
    const params = new URLSearchParams();
    for (const [name, id] of Object.entries(FIELDS)) {
      const value = $(id).value.trim();
      if (value) params.set(name, value);
    }
    return params;
  }

  function fromLocation() {
    const params = new URLSearchParams(window.location.search);
    for (const [name, id] of Object.entries(FIELDS)) $(id).value = params.get(name) || "";
    if (["lang", "path", "layer", "as_of", "since", "until", "repo"].some((k) => params.get(k))) {
      $("filters").open = true;
    }
    if (params.get("q")) search(params);
  }

  const list = (text) => text.split(",").map((s) => s.trim()).filter(Boolean);

  function request(params) {
    const body = { query: params.get("q"), top_k: 20 };
    if (params.get("lang")) body.lang = list(params.get("lang"));
    if (params.get("path")) body.path = list(params.get("path"));
    if (params.get("layer")) body.layers = [params.get("layer")];
    for (const key of ["as_of", "since", "until"]) if (params.get(key)) body[key] = params.get(key);
    // The repository filter is the engine's: only these sources are searched.
    if (params.get("repo")) body.repo = list(params.get("repo"));
    return body;
  }

  $("q").addEventListener("keydown", (event) => {
    if (event.key === "Enter") state.enterAt = performance.now();
  });

  $("search-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const params = formParams();
    if (!params.get("q")) return;
    if (state.enterAt === null) state.enterAt = performance.now();
    history.pushState(null, "", "/search?" + params.toString());
    search(params);
  });

  window.addEventListener("popstate", fromLocation);

  // -- results ---------------------------------------------------------------------------

  function terms(query) {
    const words = (query.match(/[\p{L}\p{N}_]+/gu) || []).filter((w) => w.length >= 2);
    const parts = new Set();
    for (const word of words) {
      parts.add(word.toLowerCase());
      for (const piece of word.split(/_|(?<=[a-z])(?=[A-Z])/)) if (piece.length >= 2) parts.add(piece.toLowerCase());
    }
    return [...parts].sort((a, b) => b.length - a.length);
  }

  // `text` as text nodes, each query term in a <mark>.
  function marked(text, words) {
    const out = document.createDocumentFragment();
    if (!words.length) { out.append(text); return out; }
    const pattern = new RegExp(words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"), "giu");
    let last = 0;
    for (const match of text.matchAll(pattern)) {
      if (match.index > last) out.append(text.slice(last, match.index));
      out.append(el("mark", { text: match[0] }));
      last = match.index + match[0].length;
    }
    if (last < text.length) out.append(text.slice(last));
    return out;
  }

  function snippet(result, words) {
    const pre = el("pre", { class: "snippet" });
    result.snippet.split("\n").forEach((line, i) => {
      pre.append(el("span", { class: "ln", text: String(result.snippet_start_line + i) }));
      pre.append(marked(line, words), "\n");
    });
    return pre;
  }

  function vscodeLink(result) {
    const root = (result.root && state.roots[result.root]) || state.root;
    if (result.source !== "local" || !root) return null;
    const file = `${root.replace(/\/$/, "")}/${result.path}`;
    const href = "vscode://file" + encodeURI(file.startsWith("/") ? file : "/" + file) + `:${result.start_line}`;
    return el("a", { href, class: "open", text: "open in VS Code" });
  }

  function resultItem(result, words) {
    const name = result.qualified_name || result.path;
    const streams = el("span", { class: "streams" });
    for (const hit of result.provenance) {
      streams.append(el("span", { text: `${hit.stream} #${hit.rank} (${Number(hit.score).toPrecision(3)})` }));
    }
    const graph = el("div", { class: "graph" });
    const file = el("div", { class: "file" });
    const item = el("article", { class: "result", tabindex: "-1" },
      el("div", { class: "head" },
        el("span", { class: "rank", text: `${result.rank}.` }),
        el("span", { class: "cite", text: result.cite }),
        el("span", { class: "kind", text: result.kind }),
        el("span", { class: "name" }, marked(name, words)),
        el("span", { class: "score", text: `score ${Number(result.score).toFixed(4)}` }),
        result.repo ? el("span", { class: "dim repo", text: `[${result.repo}]` }) : null,
        result.root && Object.keys(state.roots).length > 1 ? el("span", { class: "dim root", text: `[${result.root}]` }) : null),
      streams,
      snippet(result, words),
      // The graph endpoint walks the result's own folder or shared repository.
      el("div", { class: "actions" },
        el("button", { type: "button", class: "callers", text: "callers", onclick: () => neighbours(result, "callers", graph) }),
        el("button", { type: "button", class: "callees", text: "callees", onclick: () => neighbours(result, "callees", graph) }),
        el("button", { type: "button", class: "show-file", text: "file", onclick: () => fileLines(result, words, file) }),
        vscodeLink(result)),
      graph,
      file);
    item.codesift = { result, graph, file, words };
    return item;
  }

  function render(data, params) {
    const words = terms(data.query);
    const results = data.results;
    const groups = $("results");
    groups.replaceChildren();
    state.items = [];
    state.selected = -1;
    for (const layer of LAYERS) {
      const ofLayer = results.filter((r) => r.layer === layer);
      if (!ofLayer.length) continue;
      const section = el("section", { class: "layer", "data-layer": layer },
        el("h2", { text: `${layer} (${ofLayer.length})` }));
      for (const result of ofLayer) {
        const item = resultItem(result, words);
        state.items.push(item);
        section.append(item);
      }
      groups.append(section);
    }
    const others = results.filter((r) => !LAYERS.includes(r.layer));
    for (const result of others) groups.append(resultItem(result, words));
    const streams = data.streams
      .map((s) => `${s.source === "shared" ? "shared " : ""}${s.stream} ${s.candidates}${s.error ? " (failed)" : ""}`)
      .join(", ");
    $("summary").textContent = results.length
      ? `${results.length} results in ${Math.round(data.took_ms)} ms (streams: ${streams})`
      : `no results for "${data.query}"`;
    renderResources(data.resources || []);
    if (data.warnings && data.warnings.length) $("error").textContent = data.warnings.map((w) => w.message).join("; ");
  }

  function renderResources(resources) {
    const body = $("resources-body");
    body.replaceChildren();
    if (!resources.length) { body.append("none"); body.className = "dim"; return; }
    body.className = "";
    const ul = el("ul");
    for (const r of resources) {
      ul.append(el("li", {}, el("span", { class: "dim", text: `[${r.collection}] ` }),
        el("span", { class: "cite", text: r.cite }), " ", el("span", { text: r.title })));
    }
    body.append(ul);
  }

  async function search(params) {
    const seq = ++state.seq;
    $("error").textContent = "";
    $("summary").textContent = "searching…";
    const startedAt = state.enterAt !== null ? state.enterAt : performance.now();
    state.enterAt = null;
    let data;
    try {
      data = await api("POST", "/api/search", request(params));
    } catch (e) {
      if (seq !== state.seq) return;
      if (e instanceof Unauthorized) { showSignIn(); return; }
      $("summary").textContent = "";
      $("error").textContent = e.message;
      return;
    }
    if (seq !== state.seq) return;
    render(data, params);
    window.codesiftTimings.push({ query: data.query, ms: performance.now() - startedAt, results: data.results.length });
    document.body.dataset.searched = String(window.codesiftTimings.length);
    route(params.get("q"), seq);
  }

  // -- callers and callees -------------------------------------------------------------------

  async function neighbours(result, direction, box) {
    box.replaceChildren(el("span", { class: "dim", text: `${direction}…` }));
    const name = result.qualified_name || result.path;
    let walk;
    try {
      const where = result.repo || result.root;
      walk = await api("POST", "/api/graph", where ? { name, direction, depth: 1, repo: [where] } : { name, direction, depth: 1 });
    } catch (e) {
      if (e instanceof Unauthorized) { showSignIn(); return; }
      box.replaceChildren(el("span", { class: "error", text: e.message }));
      return;
    }
    const nodes = new Map(walk.nodes.map((n) => [n.id, n]));
    const roots = new Set(walk.roots);
    const ul = el("ul", { class: `graph-${direction}` });
    for (const edge of walk.edges) {
      const into = direction === "callers" && roots.has(edge.target) && !roots.has(edge.source);
      const out = direction === "callees" && roots.has(edge.source);
      if (!into && !out) continue;
      const other = into ? nodes.get(edge.source) : (edge.target !== null ? nodes.get(edge.target) : null);
      const label = other ? other.qualified_name : `${edge.target_name} (unresolved)`;
      ul.append(el("li", {},
        el("span", { class: "kind", text: `${edge.kind} ` }),
        el("span", { class: "name", text: label }), " ",
        el("span", { class: "cite", text: other ? other.cite : "" }),
        el("span", { class: "dim", text: ` at line ${edge.line}` })));
    }
    if (!ul.children.length) ul.append(el("li", { class: "dim", text: `no ${direction} found` }));
    box.replaceChildren(el("strong", { text: `${direction} of ${name}` }), ul);
  }

  // -- the file around a result ---------------------------------------------------------------

  // The result's lines and some around them, from /api/file (its root or shared
  // repository), the query's words marked and the result's own lines set off.
  // A second press hides them.
  async function fileLines(result, words, box) {
    if (box.childElementCount) { box.replaceChildren(); return; }
    const span = Math.max(0, result.end_line - result.start_line);
    const params = new URLSearchParams({
      path: result.path,
      line: String(result.start_line + Math.floor(span / 2)),
      context: String(Math.min(200, Math.ceil(span / 2) + 8)),
    });
    if (result.repo) params.set("repo", result.repo);
    else if (result.root) params.set("root", result.root);
    box.replaceChildren(el("span", { class: "dim", text: "file…" }));
    let found;
    try {
      found = await api("GET", "/api/file?" + params.toString());
    } catch (e) {
      if (e instanceof Unauthorized) { showSignIn(); return; }
      box.replaceChildren(el("span", { class: "error", text: e.message }));
      return;
    }
    const pre = el("pre", { class: "file-lines" });
    found.lines.forEach((line, i) => {
      const number = found.start_line + i;
      const own = number >= result.start_line && number <= result.end_line;
      const row = el("span", { class: own ? "line own" : "line" },
        el("span", { class: "ln", text: String(number) }));
      // A shared repository's line no stored chunk holds comes back null.
      if (line === null) row.append(el("span", { class: "dim", text: "(not stored)" }));
      else row.append(marked(line, words));
      pre.append(row, "\n");
    });
    const where = result.repo ? `${result.repo}/${found.path}` : found.path;
    box.replaceChildren(
      el("strong", { text: `${where}: lines ${found.start_line}-${found.end_line} of ${found.total_lines}` }),
      pre);
  }

  // -- routing and status -------------------------------------------------------------------

  async function route(query, seq) {
    const body = $("routing-body");
    let found;
    try {
      found = await api("POST", "/api/route", { query, limit: 3 });
    } catch (e) {
      if (seq === state.seq) { body.className = "error"; body.textContent = e.message; }
      return;
    }
    if (seq !== state.seq) return;
    body.className = "";
    body.replaceChildren();
    for (const pool of ["repositories", "collections"]) {
      body.append(el("h3", { text: pool }));
      if (!found[pool].length) body.append(el("p", { class: "dim", text: "none" }));
      for (const match of found[pool]) {
        body.append(el("div", { class: "route-item" },
          el("meter", { min: "0", max: "1", value: String(match.confidence) }), " ",
          el("strong", { text: match.name }), " ",
          el("span", { class: "dim", text: Number(match.confidence).toFixed(2) }),
          el("div", { class: "dim", text: match.rationale })));
      }
    }
  }

  async function loadStatus() {
    const body = $("status-body");
    let status;
    try {
      status = await api("GET", "/api/status");
    } catch (e) {
      body.className = "error";
      body.textContent = e.message;
      return;
    }
    state.root = status.root;
    state.roots = {};
    for (const one of status.roots || []) state.roots[one.name] = one.root;
    body.className = "";
    const vectors = (status.index && status.index.vectors) || {};
    const coverage = vectors.enabled
      ? `${vectors.embedded || 0} of ${vectors.embeddable || 0} (${Math.round((vectors.coverage || 0) * 100)}%)`
      : "off";
    const rows = [
      ["root", status.roots ? status.roots.map((r) => `${r.name} (${r.root})`).join(", ") : status.root],
      ["files", String(status.files)],
      ["definitions", String(status.nodes)],
      ["chunks", String(status.chunks)],
      ["vectors", coverage],
      ["state", (status.index && status.index.state) || ""],
    ];
    if (status.shared) rows.push(["shared", status.shared.message || `${status.shared.repositories.length} repositories`]);
    const dl = el("dl");
    for (const [key, value] of rows) dl.append(el("dt", { text: key }), el("dd", { text: value }));
    body.replaceChildren(dl);
  }

  // -- keys ---------------------------------------------------------------------------------

  function select(index) {
    if (!state.items.length) return;
    index = Math.max(0, Math.min(state.items.length - 1, index));
    if (state.selected >= 0 && state.items[state.selected]) state.items[state.selected].classList.remove("selected");
    state.selected = index;
    const item = state.items[index];
    item.classList.add("selected");
    item.focus({ preventScroll: true });
    item.scrollIntoView({ block: "nearest" });
  }

  document.addEventListener("keydown", (event) => {
    const typing = event.target instanceof HTMLInputElement || event.target instanceof HTMLSelectElement;
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (typing) {
      if (event.key === "ArrowDown" && event.target.id === "q" && state.items.length) { event.preventDefault(); select(0); }
      if (event.key === "Escape") event.target.blur();
      return;
    }
    const current = state.items[state.selected];
    switch (event.key) {
      case "/": event.preventDefault(); $("q").focus(); $("q").select(); break;
      case "j": case "ArrowDown": event.preventDefault(); select(state.selected + 1); break;
      case "k": case "ArrowUp": event.preventDefault(); select(state.selected - 1); break;
      case "c": if (current) neighbours(current.codesift.result, "callers", current.codesift.graph); break;
      case "e": if (current) neighbours(current.codesift.result, "callees", current.codesift.graph); break;
      case "f": if (current) fileLines(current.codesift.result, current.codesift.words, current.codesift.file); break;
      case "o": if (current) { const link = current.querySelector("a.open"); if (link) link.click(); } break;
      case "Escape": $("q").focus(); break;
      default: break;
    }
  });

  start();
})();
