#!/usr/bin/env bash
# The gateway hop's cost: one `toolport serve --demo` (release) as the
# upstream, and one `toolport serve --config` gateway in front of it with the
# upstream as an HTTP `[[upstream]]`. wrk calls `echo` directly on the
# upstream and `demo__echo` through the gateway, alternated, ROUNDS times at
# each concurrency; the table reports medians, the ratio gateway / direct,
# the latency the hop adds, and the CPU per call (the upstream's alone when
# called directly; gateway plus upstream through the hop, from /proc, over
# the calls the upstream counted). wrk runs on the same machine: on a
# 2-core machine the gateway's path has three busy processes on two cores.
# Usage: benches/gateway/run.sh [seconds] [rounds] [concurrencies]
#   (BIN=path/to/toolport to use another build)
set -euo pipefail
cd "$(dirname "$0")/../.."
source benches/http/common.sh
DURATION=${1:-5}
ROUNDS=${2:-3}
CONCURRENCY=${3:-"16 64"}
command -v wrk >/dev/null || { echo "wrk is needed (apt-get install wrk)"; exit 1; }
BIN=${BIN:-target/release/toolport}
[ -x "$BIN" ] || cargo build --release -q --bin toolport
UPSTREAM=19120; GATEWAY=19121
work=$(mktemp -d)
cat > "$work/gateway.toml" <<TOML
[http]
bind = "127.0.0.1:$GATEWAY"

[[upstream]]
name = "demo"
url = "http://127.0.0.1:$UPSTREAM/mcp"
required = true
TOML
TOOLPORT_LOG=error TOOLPORT_AUDIT__ENABLED=false "$BIN" serve --demo --bind 127.0.0.1:$UPSTREAM 2>/dev/null & upstream=$!
trap 'kill $upstream ${gateway:-} 2>/dev/null; rm -rf "$work"' EXIT
wait_ready $UPSTREAM
TOOLPORT_LOG=error TOOLPORT_AUDIT__ENABLED=false "$BIN" serve --config "$work/gateway.toml" 2>/dev/null & gateway=$!
wait_ready $GATEWAY
for _ in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$GATEWAY/ready" && break; sleep 0.1; done

calls() { curl -s "http://127.0.0.1:$UPSTREAM/metrics" | awk '/^toolport_tool_calls_total\{tool="echo",outcome="ok"\}/{print $2}'; }
ticks() { # CPU ticks (utime + stime) of the given PIDs
  local n=0 pid
  for pid in "$@"; do n=$((n + $(awk '{print $14 + $15}' "/proc/$pid/stat"))); done
  echo $n
}
run() { # name port tool concurrency pids...
  local name=$1 port=$2 tool=$3 c=$4; shift 4
  local before_t before_c line
  before_t=$(ticks "$@"); before_c=$(calls)
  line=$(TOOL=$tool wrk -t1 -c"$c" -d"${DURATION}s" -s benches/http/call.lua "http://127.0.0.1:$port/mcp" | grep '^RESULT')
  echo "$name:$c $line cpu_us=$(python3 -c "print(($(ticks "$@") - $before_t) * 1e6 / $(getconf CLK_TCK) / ($(calls) - $before_c))")"
}
# Warm up both paths.
for port_tool in "$UPSTREAM echo" "$GATEWAY demo__echo"; do
  set -- $port_tool
  TOOL=$2 wrk -t1 -c16 -d1s -s benches/http/call.lua "http://127.0.0.1:$1/mcp" >/dev/null
done
results=$(mktemp)
for round in $(seq "$ROUNDS"); do
  for c in $CONCURRENCY; do
    run direct $UPSTREAM echo "$c" $upstream >> "$results"
    run gateway $GATEWAY demo__echo "$c" $gateway $upstream >> "$results"
  done
done
python3 - "$results" "$CONCURRENCY" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, _, rest = line.split(" ", 2)
    rows.setdefault(name, []).append(dict(kv.split("=") for kv in rest.split()))
med = lambda xs, k: statistics.median(float(x[k]) for x in xs)
print("| c | direct rps | gateway rps | gateway / direct | added p50 ms | added p99 ms | CPU µs/call direct | CPU µs/call via gateway | errors |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for c in sys.argv[2].split():
    d, g = rows[f"direct:{c}"], rows[f"gateway:{c}"]
    errors = sum(int(x["errors"]) for x in d + g)
    print(f"| {c} | {med(d, 'rps'):,.0f} | {med(g, 'rps'):,.0f} | {med(g, 'rps') / med(d, 'rps'):.2f} | "
          f"{med(g, 'p50_ms') - med(d, 'p50_ms'):.3f} | {med(g, 'p99_ms') - med(d, 'p99_ms'):.3f} | "
          f"{med(d, 'cpu_us'):.1f} | {med(g, 'cpu_us'):.1f} | {errors} |")
PY
