#!/bin/bash
# Benchmark set-up: a fresh $BENCH_DIR/data with one organization holding 100,000 seeded memories.
# Writes ORG, TOKEN (memory scopes) and ADMIN (admin API key) to $BENCH_DIR/env. About 3 minutes.
#   bash bench/seed-100k.sh [COUNT]     another count (300000 for the rebuild measurements)
#   BENCH_DIR=/tmp/bench300 ...         another directory
set -e
COUNT=${1:-100000}
BENCH_DIR=${BENCH_DIR:-/tmp/bench}
cd "$(dirname "$0")/.."
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64} MAVEN_OPTS="--sun-misc-unsafe-memory-access=allow"
rm -rf $BENCH_DIR/data && mkdir -p $BENCH_DIR
export ENGRAM_DATA_DIR=$BENCH_DIR/data ENGRAM_ADMIN_KEY=benchadminkey0123456789abcdef RATE_LIMIT_REQUESTS=1000000 ENGRAM_REFLECTION_SCHEDULER=false LOG_LEVEL=warning
./engram build >/dev/null
./engram serve > $BENCH_DIR/serve1.log 2>&1 &
PID=$!
until curl -sf http://127.0.0.1:8000/v1/health >/dev/null; do kill -0 $PID 2>/dev/null || { cat $BENCH_DIR/serve1.log; exit 1; }; sleep 0.5; done
ORG=$(curl -s -X POST http://127.0.0.1:8000/v1/organizations -H "Authorization: Bearer $ENGRAM_ADMIN_KEY" -H 'Content-Type: application/json' -d '{"name":"Bench","plan":"growth"}' | python3 -c 'import sys,json;print(json.load(sys.stdin)["id"])')
TOKEN=$(curl -s -X POST http://127.0.0.1:8000/v1/organizations/$ORG/tokens -H "Authorization: Bearer $ENGRAM_ADMIN_KEY" -H 'Content-Type: application/json' -d '{"name":"bench","scopes":["memory:read","memory:write","memory:control"]}' | python3 -c 'import sys,json;print(json.load(sys.stdin)["token"])')
ADMIN=$(curl -s -X POST http://127.0.0.1:8000/v1/organizations/$ORG/api-keys -H "Authorization: Bearer $ENGRAM_ADMIN_KEY" -H 'Content-Type: application/json' -d '{"name":"bench","permissions":["admin"],"rate_limit":1000000}' | python3 -c 'import sys,json;print(json.load(sys.stdin)["token"])')
echo "ORG=$ORG TOKEN=$TOKEN ADMIN=$ADMIN" > $BENCH_DIR/env
kill $PID; wait $PID || true
mvn -q test-compile dependency:build-classpath -Dmdep.outputFile=/tmp/cp.txt
$JAVA_HOME/bin/java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -Xmx2g \
  -cp target/classes:target/test-classes:$(cat /tmp/cp.txt) \
  io.engram.memory.bench.SeedMemories $BENCH_DIR/data $ORG $COUNT
echo seeded
