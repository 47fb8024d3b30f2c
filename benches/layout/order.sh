#!/usr/bin/env bash
# Writes crates/toolport/layout/start.ld, a linker script: the functions a
# release `toolport` runs to start, idle and answer its first requests. The
# link puts them together before the rest of the code (build.rs), so starting
# and idling touch ~1-2 MiB of code instead of pages spread over the whole
# binary (docs/performance.md, idle RSS).
#
# How: a plain release build with the linker's map kept (TOOLPORT_LINK_MAP),
# then that very binary under callgrind: `serve --demo` over HTTP (a
# 2026-07-28 call and a 2025-11-25 session), `serve --demo --stdio`, and a
# bare `serve` (the packs) in a scratch folder; each run's functions are
# looked up in the map (functions.py). Symbol names carry a hash of the build
# settings, so the order is made from the release profile itself; after a
# toolchain or dependency upgrade, run this again (stale names are ignored by
# the linker and the script's patterns still group the functions, so an old
# file costs a little memory, never correctness).
# Needs valgrind and curl. Usage: benches/layout/order.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
# The binary under study is linked in the default layout (TOOLPORT_LAYOUT=off):
# valgrind names the code of an object only inside its .text section.
TOOLPORT_LAYOUT=off TOOLPORT_LINK_MAP="$work/toolport.map" \
  cargo build --release -q -p toolport --bin toolport --example stdio_calls
cp target/release/toolport "$work/toolport"
bin="$work/toolport"
starts=()
answers=()

# wait_health PORT: valgrind starts slowly; up to 120 s.
wait_health() {
  for _ in $(seq 1200); do curl -sf -o /dev/null "http://127.0.0.1:$1/health" && return 0; sleep 0.1; done
  echo "nothing answers on port $1" >&2
  return 1
}

post() { # port body [session]: one MCP POST
  curl -s -o /dev/null -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \
    ${3:+-H "mcp-session-id: $3" -H 'mcp-protocol-version: 2025-11-25'} -d "$2" "http://127.0.0.1:$1/mcp"
}

http_run() { # name port args...: starts, calls, idles, stops
  local name=$1 port=$2; shift 2
  (cd "$work" && TOOLPORT_LOG=warn exec valgrind -q --tool=callgrind --dump-instr=yes --callgrind-out-file="$work/$name.cg" \
    "$bin" serve --bind "127.0.0.1:$port" "$@" 2>/dev/null) & local pid=$!
  wait_health "$port"
  sleep 2 # idle: the runtime's timers and the watcher tick
  # What it ran to start and idle, apart from what it runs to answer.
  callgrind_control -d "$pid" > /dev/null 2>&1
  starts+=("$work/$name.cg.1")
  curl -s -o /dev/null "http://127.0.0.1:$port/ready"
  curl -s -o /dev/null "http://127.0.0.1:$port/metrics"
  local meta='"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"order","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}'
  for _ in 1 2 3; do
    post "$port" '{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{'"$meta"'}}'
    post "$port" '{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{'"$meta"'}}'
    post "$port" '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},'"$meta"'}}'
  done
  local session
  session=$(curl -s -D - -o /dev/null -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' \
    -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"order","version":"1"}}}' \
    "http://127.0.0.1:$port/mcp" | tr -d '\r' | awk -F': ' 'tolower($1)=="mcp-session-id"{print $2}')
  post "$port" '{"jsonrpc":"2.0","method":"notifications/initialized"}' "$session"
  for _ in 1 2 3; do
    post "$port" '{"jsonrpc":"2.0","id":4,"method":"tools/list"}' "$session"
    post "$port" '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}' "$session"
  done
  callgrind_control -d "$pid" > /dev/null 2>&1
  answers+=("$work/$name.cg.2")
  kill -TERM "$pid"; wait "$pid" || true
}

http_run demo 19161 --demo
http_run packs 19162

# stdio: the driver starts the server under callgrind and makes 200 calls.
wrapper="$work/stdio.sh"
printf '#!/bin/sh\nexec valgrind -q --tool=callgrind --dump-instr=yes --callgrind-out-file=%s %s serve --demo --stdio\n' "$work/stdio.cg" "$bin" > "$wrapper"
chmod +x "$wrapper"
TOOLPORT_LOG=warn target/release/examples/stdio_calls --calls 200 -- "$wrapper" > /dev/null

# Start-up first (what an idle server keeps resident), then answering.
python3 benches/layout/functions.py "$work/toolport.map" "$bin" \
  crates/toolport/layout/start.ld \
  "${starts[@]}" "$work/stdio.cg" "${answers[@]}"
echo "now build again (cargo build --release -p toolport) to link in the new layout" >&2
