#!/usr/bin/env bash
# Toolport against the official SDK servers, all serving the same echo tool
# over stateless Streamable HTTP with JSON answers, measured by `toolport bench`
# in one run: Toolport (policy layers off and on), the Python SDK (PyPI mcp),
# the TypeScript SDK (npm @modelcontextprotocol/sdk) and rmcp (crates.io).
# Each concurrency level runs every server back to back, ROUNDS times; the
# table reports medians and ratios to Toolport.
#
# usage: benches/compare.sh [seconds per run] [rounds]
# needs: .venv with mcp==2.3.0 and .ci/npm/sdk (both made by .ci/run)
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${1:-5}
ROUNDS=${2:-3}
OUT=${OUT:-target/bench-compare}
mkdir -p "$OUT"
cargo build --release -q -p toolport -p toolport-http --example echo_server
PEERS_TARGET=${PEERS_TARGET:-$PWD/target/peers}
(cd benches/peers/rmcp-echo && CARGO_TARGET_DIR=$PEERS_TARGET cargo build --release -q)
TS_SDK="$PWD/.ci/npm/sdk/node_modules/@modelcontextprotocol/sdk/dist/esm"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
start() { "$@" >/dev/null 2>&1 & pids+=($!); }
start target/release/examples/echo_server 127.0.0.1:19401 off stateless
start target/release/examples/echo_server 127.0.0.1:19402 on stateless
start .venv/bin/python benches/peers/python_echo.py 19403
TS_SDK=$TS_SDK start node benches/peers/ts_echo.mjs 19404
start "$PEERS_TARGET/release/rmcp-echo" 19405
declare -A url=(
  [toolport]=http://127.0.0.1:19401/mcp [toolport-layers-on]=http://127.0.0.1:19402/mcp
  [python-sdk]=http://127.0.0.1:19403/mcp [typescript-sdk]=http://127.0.0.1:19404/mcp [rmcp]=http://127.0.0.1:19405/mcp
)
order=(toolport toolport-layers-on python-sdk typescript-sdk rmcp)
for name in "${order[@]}"; do
  port=${url[$name]#http://127.0.0.1:}; port=${port%/mcp}
  for _ in $(seq 100); do (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break; sleep 0.1; done
done
# The TypeScript SDK speaks only the handshake era; the others both.
eras=(stateless handshake)
for round in $(seq "$ROUNDS"); do
  for era in "${eras[@]}"; do
    for c in 1 16 64; do
      for name in "${order[@]}"; do
        [ "$era" = stateless ] && [ "$name" = typescript-sdk ] && continue
        target/release/toolport bench --server "${url[$name]}" --era "$era" --concurrency "$c" --duration "$DURATION" \
          --warmup 1 --json "$OUT/$era-$name-c$c-r$round.json" 2>/dev/null || echo "$era $name c=$c round $round failed" >&2
      done
    done
  done
done
python3 - "$OUT" "${order[@]}" <<'PY'
import json, statistics, sys, glob, os
out, names = sys.argv[1], sys.argv[2:]
def runs(era, name, c):
    return [json.load(open(f))["steps"][0] for f in glob.glob(os.path.join(out, f"{era}-{name}-c{c}-r*.json"))]
for era, title in (("stateless", "2026-07-28, stateless"), ("handshake", "2025-11-25, no sessions")):
    print(f"\n{title}\n")
    print("| server | c | calls/s (median) | × toolport | p50 ms | p99 ms | errors |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for c in (1, 16, 64):
        base = statistics.median(s["calls_per_second"] for s in runs(era, "toolport", c))
        for name in names:
            xs = runs(era, name, c)
            if not xs:
                continue
            rps = statistics.median(s["calls_per_second"] for s in xs)
            p50 = statistics.median(s["latency_ms"]["p50"] for s in xs)
            p99 = statistics.median(s["latency_ms"]["p99"] for s in xs)
            print(f"| {name} | {c} | {rps:,.0f} | {rps / base:.3f} | {p50:.3f} | {p99:.3f} | {sum(s['errors'] for s in xs)} |")
PY
