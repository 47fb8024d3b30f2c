-- wrk script: one `tools/call` of an echo tool per request, every request
-- with a fresh JSON-RPC id (a constant id stalls servers that route by id).
-- MODE: stateless-json | stateless-sse | legacy-sse ; SESSION: for legacy-sse;
-- TOOL: the tool's name (default echo).
local mode = os.getenv("MODE") or "stateless-json"
local session = os.getenv("SESSION")
local tool = os.getenv("TOOL") or "echo"
local counter = 0

local meta = '"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
  .. '"io.modelcontextprotocol/clientCapabilities":{},'
  .. '"io.modelcontextprotocol/clientInfo":{"name":"wrk","version":"1"}}'

request = function()
  counter = counter + 1
  local headers = { ["Content-Type"] = "application/json" }
  local params = '{"name":"' .. tool .. '","arguments":{"message":"hello from the mcp peer benchmark"}'
  if mode == "legacy-sse" then
    headers["Accept"] = "text/event-stream"
    headers["Mcp-Session-Id"] = session
    headers["MCP-Protocol-Version"] = "2025-11-25"
    params = params .. "}"
  else
    headers["Accept"] = (mode == "stateless-sse") and "text/event-stream" or "application/json, text/event-stream"
    headers["MCP-Protocol-Version"] = "2026-07-28"
    headers["Mcp-Method"] = "tools/call"
    headers["Mcp-Name"] = tool
    params = params .. "," .. meta .. "}"
  end
  local body = '{"jsonrpc":"2.0","id":' .. counter .. ',"method":"tools/call","params":' .. params .. '}'
  return wrk.format("POST", "/mcp", headers, body)
end

done = function(summary, latency, requests)
  io.write(string.format("RESULT rps=%.1f p50_ms=%.3f p99_ms=%.3f errors=%d\n",
    summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
