# Sourced by the bench scripts that drive wrk at an MCP endpoint.

# write_tools_call_lua FILE
# The wrk script of the HTTP benchmarks: every request a POST of one tools/call, as a
# Streamable HTTP client sends it (it accepts JSON or an SSE stream).
write_tools_call_lua() {
  cat > "$1" <<'LUA'
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"ping"}}}'
LUA
}
