#!/usr/bin/env bash
# The cost of the policy layers: the echo server with every layer on (gates,
# rate limits, idempotency keys, a deadline, the audit stream to a file,
# Prometheus metrics) against the same server with none, 2026-07-28 stateless
# JSON tools/call with wrk. Both servers run side by side and the load
# alternates between them in short runs, so a noisy neighbour on a shared
# machine hits both alike; the table reports medians and the median of the
# per-pair ratios. Usage: benches/http/layers.sh [seconds] [rounds]
# With AGAINST=floor, the same alternation compares the echo server (layers
# off) with the hyper floor instead: the ratio of issue 3's speed target.
# BINDIR=dir uses the echo_floor and echo_server already built there (for
# example the PGO builds of benches/http/pgo.sh).
set -euo pipefail
cd "$(dirname "$0")/../.."
source benches/http/common.sh
DURATION=${1:-2}
ROUNDS=${2:-15}
command -v wrk >/dev/null || { echo "wrk is needed (apt-get install wrk)"; exit 1; }
bin=${BINDIR:-target/release/examples}
[ -n "${BINDIR:-}" ] || cargo build --release -q -p toolport-http --example echo_server --example echo_floor
OFF_PORT=19011; ON_PORT=19012
if [ "${AGAINST:-layers}" = floor ]; then
  BASE="floor"; OTHER="toolport"
  "$bin/echo_floor" "127.0.0.1:$OFF_PORT" 2>/dev/null & off=$!
  "$bin/echo_server" "127.0.0.1:$ON_PORT" off stateless 2>/dev/null & on=$!
else
  BASE="layers off"; OTHER="layers on"
  "$bin/echo_server" "127.0.0.1:$OFF_PORT" off stateless 2>/dev/null & off=$!
  "$bin/echo_server" "127.0.0.1:$ON_PORT" on stateless 2>/dev/null & on=$!
fi
trap 'kill $off $on 2>/dev/null; rm -f "${TMPDIR:-/tmp}"/toolport-echo-audit-$on.jsonl' EXIT
for port in $OFF_PORT $ON_PORT; do wait_ready "$port"; done
rps() { # port concurrency seconds
  MODE=stateless-json wrk -t1 -c"$2" -d"$3s" -s benches/http/call.lua "http://127.0.0.1:$1/mcp" |
    awk '/^RESULT/ { sub("rps=", "", $2); print $2 }'
}
results=$(mktemp)
for c in 16 64; do
  rps $OFF_PORT "$c" 1 >/dev/null; rps $ON_PORT "$c" 1 >/dev/null # warm up
  for _ in $(seq "$ROUNDS"); do
    echo "$c $(rps $OFF_PORT "$c" "$DURATION") $(rps $ON_PORT "$c" "$DURATION")" >> "$results"
  done
done
python3 - "$results" "$BASE" "$OTHER" <<'PY'
import statistics, sys
base, other = sys.argv[2], sys.argv[3]
rows = {}
for line in open(sys.argv[1]):
    c, off, on = line.split()
    rows.setdefault(c, []).append((float(off), float(on)))
print(f"| c | {base} rps (median) | {other} rps (median) | {other} / {base} (median of pairs) | quartiles | cost |")
print("|---:|---:|---:|---:|---:|---:|")
for c, pairs in rows.items():
    ratios = [on / off for off, on in pairs]
    q = statistics.quantiles(ratios, n=4)
    median = statistics.median(ratios)
    off = statistics.median(p[0] for p in pairs)
    on = statistics.median(p[1] for p in pairs)
    print(f"| {c} | {off:,.0f} | {on:,.0f} | {median:.3f} | {q[0]:.3f}–{q[2]:.3f} | {100 * (1 - median):.1f} % |")
PY
