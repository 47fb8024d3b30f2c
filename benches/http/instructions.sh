#!/usr/bin/env bash
# What one stateless JSON tools/call costs the CPU, counted rather than timed:
# instructions, L1 cache misses and branch mispredictions per request of the
# floor and of Toolport's echo server (layers off), both run under valgrind's
# cachegrind in the same invocation. Counts do not move with a noisy
# neighbour the way requests/s do, so a change of a few hundred instructions
# shows. Each server answers 500 and then 2500 calls (16 keep-alive
# connections taken in turn); the difference divided by 2000 leaves out
# start-up. Usage: benches/http/instructions.sh; BINDIR=dir uses the
# echo_floor and echo_server already built there (to compare commits). Built
# with the `profiling` profile, so cg_annotate can name source lines.
set -euo pipefail
cd "$(dirname "$0")/../.."
command -v valgrind >/dev/null || { echo "valgrind is needed (apt-get install valgrind)"; exit 1; }
bin=${BINDIR:-target/profiling/examples}
[ -n "${BINDIR:-}" ] || cargo build --profile profiling -q -p toolport-http --example echo_server --example echo_floor
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
count() { # label port binary [arguments after the address...]
  local label=$1 port=$2 binary=$3; shift 3
  for calls in 500 2500; do
    valgrind --tool=cachegrind --cache-sim=yes --branch-sim=yes \
      --cachegrind-out-file="$out/$label.$calls" "$binary" "127.0.0.1:$port" "$@" >/dev/null 2>"$out/$label.log" &
    local pid=$!
    for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.2; done
    python3 benches/http/keepalive_calls.py "$port" "$calls"
    kill -TERM "$pid"; wait "$pid" 2>/dev/null || true
  done
}
count floor 19031 "$bin/echo_floor"
count toolport 19032 "$bin/echo_server" off stateless
python3 - "$out" <<'PY'
import sys
out = sys.argv[1]
names = "Ir I1mr ILmr Dr D1mr DLmr Dw D1mw DLmw Bc Bcm Bi Bim".split()
def per_call(label):
    totals = {}
    for calls in (500, 2500):
        line = next(l for l in open(f"{out}/{label}.{calls}") if l.startswith("summary:"))
        totals[calls] = dict(zip(names, map(int, line.split()[1:])))
    return {n: (totals[2500][n] - totals[500][n]) / 2000 for n in names}
rows = {label: per_call(label) for label in ("floor", "toolport")}
columns = [("instructions", ["Ir"]), ("L1i misses", ["I1mr"]), ("L1d misses", ["D1mr", "D1mw"]),
           ("mispredicted branches", ["Bcm", "Bim"])]
print("| per call | " + " | ".join(c for c, _ in columns) + " |")
print("|---|" + "---:|" * len(columns))
for label, row in rows.items():
    print(f"| {label} | " + " | ".join(f"{sum(row[k] for k in keys):,.0f}" for _, keys in columns) + " |")
ratio = {c: sum(rows["toolport"][k] for k in keys) / max(1, sum(rows["floor"][k] for k in keys)) for c, keys in columns}
print("| toolport / floor | " + " | ".join(f"{ratio[c]:.2f}" for c, _ in columns) + " |")
PY
