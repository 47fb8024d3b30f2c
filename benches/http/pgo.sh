#!/usr/bin/env bash
# Profile-guided builds of the floor, the echo server and the `toolport`
# binary, with the `profiling` profile (release code generation plus line
# tables, so perf can still name source lines; `strip -g` a binary before
# shipping it). All are built instrumented; each serves a training load in
# its own process; all are rebuilt with the merged profile into target/pgo.
# The floor gets the same treatment, so the ratio stays like for like.
# Toolport's training is broader than what the benchmarks measure: all three
# HTTP modes at concurrency 1, 16 and 64, with the policy layers off and on,
# and `toolport serve --demo` the same way.
#
# Usage: benches/http/pgo.sh [seconds per training run], then for example
#   BINDIR=target/pgo/profiling/examples AGAINST=floor benches/http/layers.sh 3 15
#   BINDIR=target/pgo/profiling/examples benches/http/run.sh 5 3
# Needs wrk and the toolchain's llvm-profdata (rustup component add llvm-tools).
set -euo pipefail
cd "$(dirname "$0")/../.."
source benches/http/common.sh
TRAIN=${1:-3}
command -v wrk >/dev/null || { echo "wrk is needed (apt-get install wrk)"; exit 1; }
profdata=$(find "$(rustc --print sysroot)/lib/rustlib" -name llvm-profdata -type f | head -n 1)
[ -n "$profdata" ] || { echo "llvm-profdata is needed (rustup component add llvm-tools)"; exit 1; }
profiles=$PWD/target/pgo-profiles
rm -rf "$profiles"
mkdir -p "$profiles"
build() { # target dir, RUSTFLAGS
  RUSTFLAGS="$2" cargo build --profile profiling -q --target-dir "$1" -p toolport-http --example echo_floor --example echo_server
  RUSTFLAGS="$2" cargo build --profile profiling -q --target-dir "$1" -p toolport --bin toolport
}
build target/pgo-generate "-Cprofile-generate=$profiles"
gen=target/pgo-generate/profiling/examples
load() { # port mode concurrency [session]
  MODE=$2 SESSION=${4:-} wrk -t1 -c"$3" -d"${TRAIN}s" -s benches/http/call.lua "http://127.0.0.1:$1/mcp" | grep '^RESULT'
}
serve() { # port command...: starts the command instrumented, its pid in $pid
  local port=$1
  shift
  LLVM_PROFILE_FILE="$profiles/%p-%m.profraw" "$@" >/dev/null 2>&1 &
  pid=$!
  wait_ready "$port"
}
stop() { # Ctrl-C to $pid, so the profile is written on the way out
  kill -INT "$pid"
  wait "$pid"
}
every_mode() { # label port
  local session
  session=$(open_session "$2")
  for c in 1 16 64; do
    for mode in stateless-json stateless-sse legacy-sse; do
      echo "$1 $mode $(load "$2" $mode $c "$session")"
    done
  done
}

serve 19041 "$gen/echo_floor" 127.0.0.1:19041
for c in 1 16 64; do echo "floor $(load 19041 stateless-json $c)"; done
stop
for layers in off on; do
  serve 19042 "$gen/echo_server" 127.0.0.1:19042 "$layers"
  every_mode "echo server, layers $layers" 19042
  stop
  rm -f "${TMPDIR:-/tmp}/toolport-echo-audit-$pid.jsonl"
done
serve 19043 target/pgo-generate/profiling/toolport serve --demo --bind 127.0.0.1:19043
every_mode "toolport serve --demo" 19043
stop

# Only the servers' profiles (named by pid): build scripts run during the
# instrumented build leave default_*.profraw there too.
"$profdata" merge -o "$profiles/merged.profdata" "$profiles"/[0-9]*.profraw
build target/pgo "-Cprofile-use=$profiles/merged.profdata"
echo "PGO builds: target/pgo/profiling/examples/echo_floor, echo_server; target/pgo/profiling/toolport"
