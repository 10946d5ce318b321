#!/bin/bash
# What sharing the limits through Redis adds to a chat request: one node, the same organization
# (plan seed: a concurrency limit and an hourly token budget, so every check runs: the key's rate
# window, a concurrency slot taken and given back, the hour's tokens reserved and settled), wrk with
# one connection against the fake upstream, without and then with REDIS_URL. Results:
# docs/benchmarks.md.
#   bash bench/redis-chat-path.sh [seconds per run, default 20]
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN=${1:-20}
WORK=/tmp/redis-chat-bench
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64} MAVEN_OPTS="--sun-misc-unsafe-memory-access=allow"
command -v wrk >/dev/null || { echo "wrk is required (apt-get install wrk)"; exit 1; }
rm -rf "$WORK" && mkdir -p "$WORK"
PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT
node bench/fake-upstream.mjs 9100 > "$WORK/upstream.log" 2>&1 & PIDS+=($!)
export ENGRAM_DATA_DIR=$WORK/data ENGRAM_ADMIN_KEY=benchadminkey0123456789abcdef LOG_LEVEL=warning \
  ENGRAM_REFLECTION_SCHEDULER=false ENGRAM_UPSTREAM_URL=http://127.0.0.1:9100/v1 ENGRAM_UPSTREAM_MODEL=fake-model \
  DEFAULT_MODEL=fake-model DATABASE_URL="jdbc:postgresql://127.0.0.1:5432/test?user=postgres&currentSchema=redis_chat_bench"
psql -h 127.0.0.1 -U postgres -d test -qc 'DROP SCHEMA IF EXISTS redis_chat_bench CASCADE; CREATE SCHEMA redis_chat_bench'
./engram build >/dev/null
json() { python3 -c "import sys,json;print(json.load(sys.stdin)[\"$1\"])"; }
run() { # $1: label; REDIS_URL as exported (or not)
  "$JAVA_HOME/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -jar target/engram.jar \
    serve > "$WORK/engram.log" 2>&1 & local engram=$!; PIDS+=($engram)
  until curl -sf http://127.0.0.1:8000/v1/health >/dev/null; do
    kill -0 $engram 2>/dev/null || { cat "$WORK/engram.log"; exit 1; }; sleep 0.5
  done
  local auth="Authorization: Bearer $ENGRAM_ADMIN_KEY" org key
  org=$(curl -s -X POST http://127.0.0.1:8000/v1/organizations -H "$auth" -H 'Content-Type: application/json' \
    -d "{\"name\":\"Bench\",\"plan\":\"${PLAN:-seed}\"}" | json id)
  key=$(curl -s -X POST "http://127.0.0.1:8000/v1/organizations/$org/api-keys" -H "$auth" -H 'Content-Type: application/json' \
    -d '{"name":"bench","permissions":["inference"],"rate_limit":1000000}' | json token)
  AUTH=$key MEMORY=off MODEL=fake-model wrk -t1 -c1 -d5s -s bench/chat.lua http://127.0.0.1:8000/v1/chat/completions >/dev/null
  echo "== $1"
  AUTH=$key MEMORY=off MODEL=fake-model wrk -t1 -c1 -d${SECONDS_PER_RUN}s --latency -s bench/chat.lua \
    http://127.0.0.1:8000/v1/chat/completions | grep -E 'Requests/sec|^ +(50|90|99)%'
  kill $engram; wait $engram 2>/dev/null || true
}
unset REDIS_URL
run "limits in process (no REDIS_URL)"
REDIS_URL=redis://127.0.0.1:6379 run "limits in Redis (REDIS_URL)"
