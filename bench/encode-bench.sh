#!/bin/bash
# Encode throughput of one node: a new memory per request (bench/encode.lua), 8 connections, 20 s
# after a 10 s warm-up, into an empty organization; CPU per encode from the process's user and
# system time. On SQLite by default; pass a PostgreSQL JDBC URL to run there (its schema is
# emptied first). Results: docs/benchmarks.md, "Encode".
#   bash bench/encode-bench.sh ["jdbc:postgresql://127.0.0.1:5432/test?user=postgres&currentSchema=encode_bench"]
set -euo pipefail
cd "$(dirname "$0")/.."
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64} MAVEN_OPTS="--sun-misc-unsafe-memory-access=allow"
command -v wrk >/dev/null || { echo "wrk is required (apt-get install wrk)"; exit 1; }
WORK=/tmp/encode-bench
rm -rf "$WORK" && mkdir -p "$WORK"
export ENGRAM_DATA_DIR=$WORK/data ENGRAM_ADMIN_KEY=benchadminkey0123456789abcdef RATE_LIMIT_REQUESTS=1000000 \
  ENGRAM_REFLECTION_SCHEDULER=false LOG_LEVEL=warning
if [[ -n "${1:-}" ]]; then
  export DATABASE_URL="$1"
  schema=$(sed -n 's/.*currentSchema=\([a-z_0-9]*\).*/\1/p' <<< "$1")
  psql -h 127.0.0.1 -U postgres -d test -qc "DROP SCHEMA IF EXISTS $schema CASCADE; CREATE SCHEMA $schema"
fi
./engram build >/dev/null
"$JAVA_HOME/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -jar target/engram.jar \
  serve > "$WORK/engram.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true' EXIT
until curl -sf http://127.0.0.1:8000/v1/health >/dev/null; do
  kill -0 $PID 2>/dev/null || { cat "$WORK/engram.log"; exit 1; }; sleep 0.5
done
json() { python3 -c "import sys,json;print(json.load(sys.stdin)[\"$1\"])"; }
ORG=$(curl -s -X POST http://127.0.0.1:8000/v1/organizations -H "Authorization: Bearer $ENGRAM_ADMIN_KEY" \
  -H 'Content-Type: application/json' -d '{"name":"Bench","plan":"scale"}' | json id)
TOKEN=$(curl -s -X POST "http://127.0.0.1:8000/v1/organizations/$ORG/tokens" -H "Authorization: Bearer $ENGRAM_ADMIN_KEY" \
  -H 'Content-Type: application/json' -d '{"name":"bench","scopes":["memory:read","memory:write"]}' | json token)
encode=(-s bench/encode.lua -H "Authorization: Bearer $TOKEN" http://127.0.0.1:8000/v1/memory)
wrk -t2 -c8 -d10s "${encode[@]}" >/dev/null
before=($(awk '{print $14, $15}' /proc/$PID/stat))
out=$(wrk -t2 -c8 -d20s --latency "${encode[@]}")
after=($(awk '{print $14, $15}' /proc/$PID/stat))
echo "$out" | grep -E 'Requests/sec|Non-2xx|^ +(50|99)%'
count=$(echo "$out" | awk '/requests in/ {print $1}')
ticks=$(( after[0] - before[0] + after[1] - before[1] ))
echo "CPU per encode: $(( ticks * 1000000 / $(getconf CLK_TCK) / count )) us"
