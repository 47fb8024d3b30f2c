#!/usr/bin/env bash
# Cost per call with Redis-backed state against in-memory state, and the
# Redis round trips per call, counted. Two `toolport serve --demo` (release)
# run side by side: one with every store in memory, one with `[state] url`
# on a redis-server of its own (loopback, no persistence). Each mode runs on
# both, back to back, ROUNDS times, with wrk at concurrency 16; the table
# reports medians and the ratio Redis / memory. Round trips are counted from
# redis-server's INFO commandstats around a run, divided by the tool calls
# the server counted (`toolport_tool_calls_total`): the commands a client
# sends (a script is one round trip); PING (the pub/sub keeper's, once a
# second) and INFO itself are left out.
# Modes: stateless-json (2026-07-28, no policy that needs the store),
# stateless-json + rate (a per-principal rate limit), legacy-sse (a 2025-11-25
# session, SSE answers: session lookup and event log).
# Usage: benches/replicas/run.sh [seconds] [rounds]   (BIN=path/to/toolport to use another build)
set -euo pipefail
cd "$(dirname "$0")/../.."
source benches/http/common.sh
DURATION=${1:-3}
ROUNDS=${2:-3}
command -v wrk >/dev/null || { echo "wrk is needed (apt-get install wrk)"; exit 1; }
command -v redis-server >/dev/null || { echo "redis-server is needed (apt-get install redis-server)"; exit 1; }
BIN=${BIN:-target/release/toolport}
[ -x "$BIN" ] || cargo build --release -q --bin toolport
REDIS_PORT=19110; MEMORY=19111; SHARED=19112; MEMORY_RATE=19113; SHARED_RATE=19114
KEY=$(python3 -c 'import base64,os;print(base64.b64encode(os.urandom(32)).decode())')
redis-server --bind 127.0.0.1 --port $REDIS_PORT --save '' --appendonly no >/dev/null & redis=$!
pids=($redis)
trap 'kill "${pids[@]}" 2>/dev/null' EXIT
serve() { # port state? rate?
  local env=(TOOLPORT_LOG=error TOOLPORT_SEAL_KEYS=$KEY)
  [ "$2" = shared ] && env+=(TOOLPORT_STATE_URL=redis://127.0.0.1:$REDIS_PORT)
  [ "$3" = rate ] && env+=("TOOLPORT_LIMITS__RATE_PER_PRINCIPAL={ per_second = 1000000, burst = 1000000 }")
  env "${env[@]}" "$BIN" serve --demo --bind 127.0.0.1:$1 2>/dev/null & pids+=($!)
}
serve $MEMORY memory none; serve $SHARED shared none; serve $MEMORY_RATE memory rate; serve $SHARED_RATE shared rate
for p in $MEMORY $SHARED $MEMORY_RATE $SHARED_RATE; do wait_ready $p; done
declare -A sessions
for p in $MEMORY $SHARED; do sessions[$p]=$(open_session $p); done

calls() { curl -s "http://127.0.0.1:$1/metrics" | awk '/^toolport_tool_calls_total\{tool="echo",outcome="ok"\}/{print $2}'; }
# Round trips: the commands a client sends (a script is one, however many
# commands it runs inside, which commandstats counts too).
TRIPS='^cmdstat_(evalsha|eval|script|publish|pubsub|zcard|subscribe|unsubscribe|hello|client|select):'
redis_calls() {
  redis-cli -p $REDIS_PORT info commandstats | tr -d '\r' | grep -E "$TRIPS" |
    awk -F'[:,=]' '{n += $3} END {print n + 0}'
}
run() { # name port mode
  local line
  line=$(MODE=$3 SESSION=${sessions[$2]:-} wrk -t1 -c16 -d"${DURATION}s" -s benches/http/call.lua "http://127.0.0.1:$2/mcp" | grep '^RESULT')
  echo "$1 $line"
}
trips() { # port mode: Redis commands per call over 2000 calls
  local before_r before_c after_r after_c
  before_r=$(redis_calls); before_c=$(calls "$1")
  MODE=$2 SESSION=${sessions[$1]:-} wrk -t1 -c4 -d1s -s benches/http/call.lua "http://127.0.0.1:$1/mcp" >/dev/null
  after_r=$(redis_calls); after_c=$(calls "$1")
  python3 -c "print(f'{($after_r - $before_r) / ($after_c - $before_c):.2f}')"
}
# Warm up.
for p in $MEMORY $SHARED; do MODE=stateless-json wrk -t1 -c16 -d1s -s benches/http/call.lua "http://127.0.0.1:$p/mcp" >/dev/null; done
results=$(mktemp)
for round in $(seq "$ROUNDS"); do
  run memory:stateless-json $MEMORY stateless-json >> "$results"
  run redis:stateless-json $SHARED stateless-json >> "$results"
  run memory:stateless-rate $MEMORY_RATE stateless-json >> "$results"
  run redis:stateless-rate $SHARED_RATE stateless-json >> "$results"
  run memory:legacy-sse $MEMORY legacy-sse >> "$results"
  run redis:legacy-sse $SHARED legacy-sse >> "$results"
done
echo "Redis round trips per tool call: stateless-json $(trips $SHARED stateless-json)," \
  "stateless + rate $(trips $SHARED_RATE stateless-json), legacy-sse $(trips $SHARED legacy-sse)"
python3 - "$results" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    name, _, rest = line.split(" ", 2)
    vals = dict(kv.split("=") for kv in rest.split())
    rows.setdefault(name, []).append(vals)
med = lambda xs, k: statistics.median(float(x[k]) for x in xs)
print("| mode | memory rps | Redis rps | Redis / memory | memory p50 ms | Redis p50 ms | Redis p99 ms | errors |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for mode in ("stateless-json", "stateless-rate", "legacy-sse"):
    m, r = rows[f"memory:{mode}"], rows[f"redis:{mode}"]
    errors = sum(int(x["errors"]) for x in m + r)
    print(f"| {mode} | {med(m, 'rps'):,.0f} | {med(r, 'rps'):,.0f} | {med(r, 'rps') / med(m, 'rps'):.2f} | "
          f"{med(m, 'p50_ms'):.3f} | {med(r, 'p50_ms'):.3f} | {med(r, 'p99_ms'):.3f} | {errors} |")
PY
