#!/bin/bash
# Two builds of Engram, memory off, in the same run: the gateway's added cost before and after a
# change (issue 47: the house rebuilt must not slow the hot path). Each build serves the fake
# upstream (bench/fake-upstream.mjs) in turn, same data directory and key, rounds interleaved
# (A, B, A, B) so a slow minute of the machine falls on both. Each line ends with the server's CPU
# time per request in the measured run (cpu_us_per_request). Results: docs/benchmarks.md.
#   [ROUNDS=2] [MEMORY=on] [BUDGET_B=on] [TRACES_B=on] bash bench/gateway-ab.sh <jar A> <jar B> [seconds per run, default 15]
# BUDGET_B=on: build B's organization has a budget in money (docs/budgets.md) every chat is
# reserved against and settled with (a build with budgets, against one without: issue 44).
# TRACES_B=on: build B exports every request's spans (always sampled) over OTLP/HTTP to the fake
# upstream's /v1/traces, every 200 ms from a queue of 65,536 (docs/inference.md, "Traces").
# MEMORY=on: each build's organization holds 10,000 memories (io.engram.memory.bench.SeedMemories)
# and every request asks a different question with memory on (VARY=true in bench/chat.lua).
# A jar is target/engram.jar of a checkout (its target/lib beside it), for example
#   git worktree add /tmp/before <commit> && (cd /tmp/before && ./engram build)
#   bash bench/gateway-ab.sh /tmp/before/target/engram.jar target/engram.jar
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib/gateway.sh
JAR_A=$1 JAR_B=$2 SECONDS_PER_RUN=${3:-15}
bench_begin /tmp/gwab
fake_upstream 9100
# Each build keeps its own data directory (a build's migrations are not the other's to read).
export ENGRAM_ADMIN_KEY=benchadminkey0123456789abcdef LOG_LEVEL=warning \
  ENGRAM_REFLECTION_SCHEDULER=false ENGRAM_UPSTREAM_URL=http://127.0.0.1:9100/v1 ENGRAM_UPSTREAM_MODEL=fake-model \
  DEFAULT_MODEL=fake-model
start() { # jar
  export ENGRAM_DATA_DIR=$WORK/data-$(echo "$1" | md5sum | cut -c1-8)
  if [[ "${TRACES_B:-off}" == on && "$1" == "$JAR_B" ]]; then
    OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:9100 OTEL_TRACES_SAMPLER=always_on \
      OTEL_BSP_SCHEDULE_DELAY=200 OTEL_BSP_MAX_QUEUE_SIZE=65536 start_engram "$1"
  else
    start_engram "$1"
  fi
}
declare -A KEYS
for jar in "$JAR_A" "$JAR_B"; do
  start "$jar"
  bench_organization
  KEYS[$jar]=$KEY
  if [[ "${BUDGET_B:-off}" == on && "$jar" == "$JAR_B" ]]; then
    curl -sf -X POST "http://127.0.0.1:8000/v1/organizations/$ORG/budgets" -H "Authorization: Bearer $ENGRAM_ADMIN_KEY" \
      -H 'Content-Type: application/json' -d '{"scope":"organization","period":"month","limit":1000000}' >/dev/null
  fi
  stop_engram
  if [[ "${MEMORY:-off}" == on ]]; then
    seed_memories "$ORG" 10000
  fi
done
# The server's CPU time (user and system, in clock ticks) from /proc: what a request costs the
# gateway whatever else the machine does, steadier than the throughput on two shared cores.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
cpu_per_request() { # before after "RESULT requests=N ..."
  local requests
  requests=$(sed -E 's/.*requests=([0-9]+).*/\1/' <<< "$3")
  echo "cpu_us_per_request=$(( ($2 - $1) * 1000000 / $(getconf CLK_TCK) / requests ))"
}
LOAD=(MEMORY=off)
[[ "${MEMORY:-off}" == on ]] && LOAD=(VARY=true)
run() { # name jar
  start "$2"
  KEY=${KEYS[$2]}
  # The JIT needs about half a minute of load before the throughput settles.
  env AUTH=$KEY "${LOAD[@]}" wrk -t1 -c16 -d30s -s bench/chat.lua http://127.0.0.1:8000/v1/chat/completions >/dev/null
  local cpu_before result
  cpu_before=$(cpu_ticks "$ENGRAM")
  result=$(env AUTH=$KEY "${LOAD[@]}" wrk -t1 -c16 -d${SECONDS_PER_RUN}s --latency -s bench/chat.lua \
    http://127.0.0.1:8000/v1/chat/completions | grep RESULT)
  echo "$1 $result $(cpu_per_request "$cpu_before" "$(cpu_ticks "$ENGRAM")" "$result")"
  if [[ "${TRACES_B:-off}" == on && "$2" == "$JAR_B" ]]; then
    echo "  spans: $(curl -sf http://127.0.0.1:8000/metrics -H "Authorization: Bearer $ENGRAM_ADMIN_KEY" \
      | grep '^engram_trace_spans_total' | tr '\n' ' ')"
  fi
  stop_engram
}
echo "# memory ${MEMORY:-off}, non-streamed chat completions, wrk -t1 -c16 -d${SECONDS_PER_RUN}s after 30 s of warm-up"
echo "direct $(wrk -t1 -c16 -d${SECONDS_PER_RUN}s --latency -s bench/chat.lua http://127.0.0.1:9100/v1/chat/completions | grep RESULT)"
for round in $(seq 1 "${ROUNDS:-2}"); do
  run "A (before)" "$JAR_A"
  run "B (after) " "$JAR_B"
done
