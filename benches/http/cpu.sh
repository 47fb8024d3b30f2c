#!/usr/bin/env bash
# Server CPU per request: Toolport's echo server (2026-07-28 stateless JSON
# tools/call) and the hyper floor under the same wrk load (-t1, CONC
# connections), each measured with `perf stat -e task-clock` on the server's
# PID while wrk runs, alternating ROUNDS times. Prints µs of server CPU per
# request for each, the medians, and the median of the per-pair ratios.
# Usage: benches/http/cpu.sh [seconds] [rounds] [concurrency]
# BINDIR=dir uses the echo_floor and echo_server already built there.
set -euo pipefail
cd "$(dirname "$0")/../.."
source benches/http/common.sh
DURATION=${1:-4}
ROUNDS=${2:-5}
CONC=${3:-16}
command -v wrk >/dev/null || { echo "wrk is needed (apt-get install wrk)"; exit 1; }
command -v perf >/dev/null || { echo "perf is needed (apt-get install linux-perf)"; exit 1; }
bin=${BINDIR:-target/release/examples}
[ -n "${BINDIR:-}" ] || cargo build --release -q -p toolport-http --example echo_floor --example echo_server
FLOOR_PORT=19010; TOOLPORT_PORT=19011
start_pair "$bin" "$FLOOR_PORT" "$TOOLPORT_PORT"

measure() { # pid port: "<cpu ms> <requests>"
  local out rps ms
  out=$(mktemp)
  perf stat -x, -e task-clock -p "$1" -o "$out" -- sleep "$DURATION" &
  local perf_pid=$!
  rps=$(MODE=stateless-json wrk -t1 -c"$CONC" -d"${DURATION}s" -s benches/http/call.lua \
    "http://127.0.0.1:$2/mcp" | sed -n 's/^RESULT rps=\([0-9.]*\).*/\1/p')
  wait "$perf_pid"
  ms=$(awk -F, '/task-clock/{print $1}' "$out")
  rm -f "$out"
  echo "$ms $rps"
}
results=$(mktemp)
for round in $(seq "$ROUNDS"); do
  f=$(measure $floor $FLOOR_PORT)
  t=$(measure $toolport $TOOLPORT_PORT)
  echo "round $round: floor $f, toolport $t (cpu ms, requests/s)" >&2
  echo "$f $t" >> "$results"
done
python3 - "$results" "$DURATION" "$CONC" <<'PY'
import statistics, sys
duration = float(sys.argv[2])
rows = [list(map(float, line.split())) for line in open(sys.argv[1])]
# µs of server CPU per request: task-clock ms over the requests wrk counted.
us = lambda ms, rps: ms * 1000 / (rps * duration)
floor = [us(r[0], r[1]) for r in rows]
toolport = [us(r[2], r[3]) for r in rows]
print(f"{len(rows)} rounds, stateless JSON tools/call, c={sys.argv[3]}")
print("| server | CPU µs/request (median) | × floor (median of pairs) |")
print("|---|---:|---:|")
print(f"| floor | {statistics.median(floor):.1f} | 1.00 |")
print(f"| toolport | {statistics.median(toolport):.1f} | {statistics.median(t / f for f, t in zip(floor, toolport)):.2f} |")
PY
