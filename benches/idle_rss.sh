#!/usr/bin/env bash
# Idle memory of `toolport serve --demo` (HTTP) and of `toolport serve --demo
# --stdio`: started, ready, no requests, then /proc/PID/status read one second
# later. Prints VmRSS and what it is made of (anonymous memory, mapped file
# pages of the binary, threads). Usage: benches/idle_rss.sh [binary]
# (default target/release/toolport, built if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
source benches/http/common.sh
binary=${1:-target/release/toolport}
[ -x "$binary" ] || cargo build --release -q -p toolport --bin toolport
report() { # label pid
  sleep 1
  awk -v label="$1" '/^(VmRSS|RssAnon|RssFile|Threads):/ {v[$1]=$2}
    END {printf "%-28s VmRSS %6.1f MiB  anon %6.1f MiB  file %6.1f MiB  threads %d\n", label,
      v["VmRSS:"]/1024, v["RssAnon:"]/1024, v["RssFile:"]/1024, v["Threads:"]}' "/proc/$2/status"
}
PORT=19051
TOOLPORT_LOG=warn "$binary" serve --demo --bind "127.0.0.1:$PORT" 2>/dev/null & http=$!
trap 'kill $http 2>/dev/null || true' EXIT
wait_ready "$PORT"
report "serve --demo (HTTP)" "$http"
kill "$http"; wait "$http" 2>/dev/null || true
# stdio: both ends pipes, as an MCP client starts it; its input stays open
# (and empty) while we look.
sleep 5 | TOOLPORT_LOG=warn "$binary" serve --demo --stdio > >(cat >/dev/null) 2>/dev/null & stdio=$!
trap 'kill $stdio 2>/dev/null || true' EXIT
report "serve --demo --stdio" "$stdio"
kill "$stdio"; wait "$stdio" 2>/dev/null || true
ls -l "$binary"
