#!/bin/bash
# Two builds of Engram, memory off, in the same run: the gateway's added cost before and after a
# change (issue 47: the house rebuilt must not slow the hot path). Each build serves the fake
# upstream (bench/fake-upstream.mjs) in turn, same data directory and key, rounds interleaved
# (A, B, A, B) so a slow minute of the machine falls on both. Results: docs/benchmarks.md.
#   [ROUNDS=2] [MEMORY=on] bash bench/gateway-ab.sh <jar A> <jar B> [seconds per run, default 15]
# MEMORY=on: each build's organization holds 10,000 memories (io.engram.memory.bench.SeedMemories)
# and every request asks a different question with memory on (VARY=true in bench/chat.lua).
# A jar is target/engram.jar of a checkout (its target/lib beside it), for example
#   git worktree add /tmp/before <commit> && (cd /tmp/before && ./engram build)
#   bash bench/gateway-ab.sh /tmp/before/target/engram.jar target/engram.jar
set -euo pipefail
cd "$(dirname "$0")/.."
JAR_A=$1 JAR_B=$2 SECONDS_PER_RUN=${3:-15}
WORK=/tmp/gwab
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
command -v wrk >/dev/null || { echo "wrk is required (apt-get install wrk)"; exit 1; }
rm -rf "$WORK" && mkdir -p "$WORK"
PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT
node bench/fake-upstream.mjs 9100 > "$WORK/upstream.log" 2>&1 & PIDS+=($!)
# Each build keeps its own data directory (a build's migrations are not the other's to read).
export ENGRAM_ADMIN_KEY=benchadminkey0123456789abcdef LOG_LEVEL=warning \
  ENGRAM_REFLECTION_SCHEDULER=false ENGRAM_UPSTREAM_URL=http://127.0.0.1:9100/v1 ENGRAM_UPSTREAM_MODEL=fake-model \
  DEFAULT_MODEL=fake-model
ENGRAM=
start() { # jar
  export ENGRAM_DATA_DIR=$WORK/data-$(echo "$1" | md5sum | cut -c1-8)
  "$JAVA_HOME/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -jar "$1" serve \
    > "$WORK/engram.log" 2>&1 & ENGRAM=$!; PIDS+=($ENGRAM)
  until curl -sf http://127.0.0.1:8000/v1/health >/dev/null; do
    kill -0 $ENGRAM 2>/dev/null || { cat "$WORK/engram.log"; exit 1; }
    sleep 0.5
  done
}
stop() { kill $ENGRAM; wait $ENGRAM 2>/dev/null || true; }
json() { python3 -c "import sys,json;print(json.load(sys.stdin)[\"$1\"])"; }
AUTH="Authorization: Bearer $ENGRAM_ADMIN_KEY"
declare -A KEYS
for jar in "$JAR_A" "$JAR_B"; do
  start "$jar"
  ORG=$(curl -s -X POST http://127.0.0.1:8000/v1/organizations -H "$AUTH" -H 'Content-Type: application/json' \
    -d '{"name":"Bench","plan":"scale"}' | json id)
  KEYS[$jar]=$(curl -s -X POST "http://127.0.0.1:8000/v1/organizations/$ORG/api-keys" -H "$AUTH" \
    -H 'Content-Type: application/json' -d '{"name":"bench","permissions":["inference"],"rate_limit":1000000}' | json token)
  stop
  if [[ "${MEMORY:-off}" == on ]]; then
    [[ -f $WORK/cp.txt ]] || mvn -q test-compile dependency:build-classpath -Dmdep.outputFile=$WORK/cp.txt
    "$JAVA_HOME/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -Xmx2g \
      -cp "target/classes:target/test-classes:$(cat $WORK/cp.txt)" io.engram.memory.bench.SeedMemories \
      "$ENGRAM_DATA_DIR" "$ORG" 10000 > "$WORK/seed.log" 2>&1
  fi
done
LOAD=(MEMORY=off)
[[ "${MEMORY:-off}" == on ]] && LOAD=(VARY=true)
run() { # name jar
  start "$2"
  KEY=${KEYS[$2]}
  # The JIT needs about half a minute of load before the throughput settles.
  env AUTH=$KEY "${LOAD[@]}" wrk -t1 -c16 -d30s -s bench/chat.lua http://127.0.0.1:8000/v1/chat/completions >/dev/null
  echo "$1 $(env AUTH=$KEY "${LOAD[@]}" wrk -t1 -c16 -d${SECONDS_PER_RUN}s --latency -s bench/chat.lua \
    http://127.0.0.1:8000/v1/chat/completions | grep RESULT)"
  stop
}
echo "# memory ${MEMORY:-off}, non-streamed chat completions, wrk -t1 -c16 -d${SECONDS_PER_RUN}s after 30 s of warm-up"
echo "direct $(wrk -t1 -c16 -d${SECONDS_PER_RUN}s --latency -s bench/chat.lua http://127.0.0.1:9100/v1/chat/completions | grep RESULT)"
for round in $(seq 1 "${ROUNDS:-2}"); do
  run "A (before)" "$JAR_A"
  run "B (after) " "$JAR_B"
done
