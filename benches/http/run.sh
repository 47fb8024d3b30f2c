#!/usr/bin/env bash
# tools/call throughput and latency over HTTP: Toolport (2026-07-28 stateless
# JSON, 2026-07-28 SSE, 2025-11-25 session + SSE) side by side with the floor
# (minimal hyper + serde_json echo), at concurrency 1, 16 and 64, with wrk.
# Each concurrency runs the floor and every Toolport mode back to back, ROUNDS
# times; the table reports medians. Usage: benches/http/run.sh [seconds] [rounds]
# BINDIR=dir uses the echo_floor and echo_server already built there.
set -euo pipefail
cd "$(dirname "$0")/../.."
source benches/http/common.sh
DURATION=${1:-5}
ROUNDS=${2:-3}
command -v wrk >/dev/null || { echo "wrk is needed (apt-get install wrk)"; exit 1; }
bin=${BINDIR:-target/release/examples}
[ -n "${BINDIR:-}" ] || cargo build --release -q -p toolport-http --example echo_floor --example echo_server
FLOOR_PORT=19000; TOOLPORT_PORT=19001
start_pair "$bin" "$FLOOR_PORT" "$TOOLPORT_PORT"
session=$(open_session "$TOOLPORT_PORT")

run() { # name port mode concurrency
  local line
  line=$(MODE=$3 SESSION=$session wrk -t1 -c"$4" -d"${DURATION}s" -s benches/http/call.lua "http://127.0.0.1:$2/mcp" | grep '^RESULT')
  echo "$1 c=$4 $line"
}
# Warm up.
MODE=stateless-json wrk -t1 -c16 -d2s -s benches/http/call.lua "http://127.0.0.1:$TOOLPORT_PORT/mcp" >/dev/null
MODE=stateless-json wrk -t1 -c16 -d2s -s benches/http/call.lua "http://127.0.0.1:$FLOOR_PORT/mcp" >/dev/null
results=$(mktemp)
for round in $(seq "$ROUNDS"); do
  for c in 1 16 64; do
    run floor $FLOOR_PORT stateless-json "$c" >> "$results"
    run stateless-json $TOOLPORT_PORT stateless-json "$c" >> "$results"
    run stateless-sse $TOOLPORT_PORT stateless-sse "$c" >> "$results"
    run legacy-sse $TOOLPORT_PORT legacy-sse "$c" >> "$results"
  done
done
python3 - "$results" <<'PY'
import re, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, c, rest = line.split(" ", 2)
    vals = dict(kv.split("=") for kv in rest.split()[1:])
    rows.setdefault((name, c), []).append(vals)
med = lambda xs, k: statistics.median(float(x[k]) for x in xs)
print("| server | c | rps (median) | × floor | p50 ms | p99 ms | errors |")
print("|---|---:|---:|---:|---:|---:|---:|")
for c in ("c=1", "c=16", "c=64"):
    floor = med(rows[("floor", c)], "rps")
    for name in ("floor", "stateless-json", "stateless-sse", "legacy-sse"):
        xs = rows[(name, c)]
        rps = med(xs, "rps")
        errors = sum(int(x["errors"]) for x in xs)
        print(f"| {name} | {c[2:]} | {rps:,.0f} | {rps / floor:.2f} | {med(xs, 'p50_ms'):.3f} | {med(xs, 'p99_ms'):.3f} | {errors} |")
PY
