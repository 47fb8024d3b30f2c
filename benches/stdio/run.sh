#!/usr/bin/env bash
# Sequential tools/call round trips over stdio: `toolport serve --demo
# --stdio` (its echo tool) against the floor, a blocking std::io line-echo
# server (crates/toolport/examples/stdio_floor.rs). The driver
# (crates/toolport/examples/stdio_calls.rs) does the MCP handshake, 1,000
# untimed calls, then CALLS timed ones, one in flight at a time. Floor and
# Toolport alternate, ROUNDS times, so a noisy neighbour on a shared machine
# hits both alike; the table reports medians and the median of the per-pair
# ratios. Usage: benches/stdio/run.sh [rounds] [calls]
# BINDIR=dir uses the toolport binary already built there and the examples in
# dir/examples (for example BINDIR=target/profiling).
set -euo pipefail
cd "$(dirname "$0")/../.."
ROUNDS=${1:-7}
CALLS=${2:-10000}
bin=${BINDIR:-target/release}
[ -n "${BINDIR:-}" ] ||
  cargo build --release -q -p toolport --bin toolport --example stdio_floor --example stdio_calls
results=$(mktemp)
trap 'rm -f "$results"' EXIT
rate() { # command...: the driver's calls/s against that stdio server
  "$bin/examples/stdio_calls" --calls "$CALLS" -- "$@" | sed -n 's/^calls_per_second=//p'
}
for round in $(seq "$ROUNDS"); do
  floor=$(rate "$bin/examples/stdio_floor")
  toolport=$(TOOLPORT_LOG=warn rate "$bin/toolport" serve --demo --stdio)
  echo "round $round: floor $floor calls/s, toolport $toolport calls/s" >&2
  echo "$floor $toolport" >> "$results"
done
python3 - "$results" "$CALLS" <<'PY'
import statistics, sys
pairs = [tuple(map(float, line.split())) for line in open(sys.argv[1])]
floor = statistics.median(f for f, _ in pairs)
toolport = statistics.median(t for _, t in pairs)
ratio = statistics.median(t / f for f, t in pairs)
print(f"{len(pairs)} rounds of {int(sys.argv[2]):,} sequential calls")
print("| server | calls/s (median) | µs/call | × floor (median of pairs) |")
print("|---|---:|---:|---:|")
print(f"| floor (std::io line echo) | {floor:,.0f} | {1e6 / floor:.1f} | 1.00 |")
print(f"| toolport serve --demo --stdio | {toolport:,.0f} | {1e6 / toolport:.1f} | {ratio:.2f} |")
PY
