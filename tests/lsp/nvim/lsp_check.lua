-- Drives `codesift serve` through Neovim's built-in LSP client (Neovim 0.7+), headless.
-- Environment: CODESIFT_WS (workspace folder), CODESIFT_PYTHON, CODESIFT_OUT (JSON
-- results are written there), CODESIFT_LOG (server log file).
local root = os.getenv("CODESIFT_WS")
local out = os.getenv("CODESIFT_OUT")
local results = {}

local function finish()
  local file = io.open(out, "w")
  file:write(vim.fn.json_encode(results))
  file:close()
  vim.cmd("qall!")
end

local ok, err = pcall(function()
  local client_id = vim.lsp.start_client({
    name = "codesift",
    cmd = { os.getenv("CODESIFT_PYTHON"), "-m", "codesift.cli", "serve", "--log-file", os.getenv("CODESIFT_LOG") },
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = "ws" } },
    init_options = { embeddings = false },
  })
  results.client_id = client_id
  vim.cmd("edit " .. root .. "/billing.py")
  vim.lsp.buf_attach_client(0, client_id)
  local client = vim.lsp.get_client_by_id(client_id)
  results.initialized = vim.wait(30000, function() return client.initialized == true end, 50)
  local uri = vim.uri_from_bufnr(0)

  local ready = client.request_sync("codesift/reindex", { wait = true }, 60000, 0)
  results.ready = ready and ready.result and ready.result.done

  local symbols = client.request_sync("workspace/symbol", { query = "retry_fail" }, 10000, 0)
  results.symbols = {}
  for _, s in ipairs((symbols and symbols.result) or {}) do
    table.insert(results.symbols, { name = s.name, uri = s.location.uri, line = s.location.range.start.line })
  end

  local hover = client.request_sync("textDocument/hover", {
    textDocument = { uri = uri }, position = { line = 3, character = 5 },
  }, 10000, 0)
  results.hover = hover and hover.result and hover.result.contents.value

  local items = client.request_sync("textDocument/prepareCallHierarchy", {
    textDocument = { uri = uri }, position = { line = 8, character = 6 },
  }, 10000, 0)
  results.prepared = {}
  results.incoming = {}
  if items and items.result then
    for _, item in ipairs(items.result) do table.insert(results.prepared, item.name) end
    local incoming = client.request_sync("callHierarchy/incomingCalls", { item = items.result[1] }, 10000, 0)
    for _, call in ipairs((incoming and incoming.result) or {}) do
      table.insert(results.incoming, call.from.name)
    end
  end

  client.stop()
  results.stopped = vim.wait(20000, function() return client.is_stopped() end, 50)
end)
if not ok then results.error = tostring(err) end
finish()
