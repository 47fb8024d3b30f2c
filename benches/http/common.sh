# Shared by the HTTP benchmark scripts (sourced, not run).

# wait_ready PORT: waits (up to 5 s) until something answers HTTP on PORT.
wait_ready() {
  for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$1/" && return 0; sleep 0.1; done
  echo "nothing answers on port $1" >&2
  return 1
}

# open_session PORT: initializes a 2025-11-25 session on the server at PORT
# and prints its Mcp-Session-Id (for call.lua's legacy-sse mode).
open_session() {
  local session
  session=$(curl -s -D - -o /dev/null -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \
    -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"wrk","version":"1"}}}' \
    "http://127.0.0.1:$1/mcp" | tr -d '\r' | awk -F': ' 'tolower($1)=="mcp-session-id"{print $2}')
  curl -s -o /dev/null -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \
    -H "mcp-session-id: $session" -H 'mcp-protocol-version: 2025-11-25' \
    -d '{"jsonrpc":"2.0","method":"notifications/initialized"}' "http://127.0.0.1:$1/mcp"
  echo "$session"
}

# start_pair BIN FLOOR_PORT TOOLPORT_PORT: starts the floor and the echo server
# from BIN on 127.0.0.1, stops both when the script exits, waits until both
# answer. Their PIDs are left in $floor and $toolport.
start_pair() {
  "$1/echo_floor" "127.0.0.1:$2" 2>/dev/null & floor=$!
  "$1/echo_server" "127.0.0.1:$3" 2>/dev/null & toolport=$!
  trap 'kill $floor $toolport 2>/dev/null' EXIT
  wait_ready "$2"
  wait_ready "$3"
}
