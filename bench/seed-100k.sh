#!/bin/bash
# Benchmark set-up: a fresh /tmp/bench/data with one organization holding 100,000 seeded memories.
# Writes ORG, TOKEN (memory scopes) and ADMIN (admin API key) to /tmp/bench/env. About 3 minutes.
set -e
cd "$(dirname "$0")/.."
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64} MAVEN_OPTS="--sun-misc-unsafe-memory-access=allow"
rm -rf /tmp/bench/data && mkdir -p /tmp/bench
export ENGRAM_DATA_DIR=/tmp/bench/data ENGRAM_ADMIN_KEY=benchadminkey0123456789abcdef RATE_LIMIT_REQUESTS=1000000 ENGRAM_REFLECTION_SCHEDULER=false LOG_LEVEL=warning
./engram build >/dev/null
./engram serve > /tmp/bench/serve1.log 2>&1 &
PID=$!
until curl -sf http://127.0.0.1:8000/v1/health >/dev/null; do kill -0 $PID 2>/dev/null || { cat /tmp/bench/serve1.log; exit 1; }; sleep 0.5; done
ORG=$(curl -s -X POST http://127.0.0.1:8000/v1/organizations -H "Authorization: Bearer $ENGRAM_ADMIN_KEY" -H 'Content-Type: application/json' -d '{"name":"Bench","plan":"growth"}' | python3 -c 'import sys,json;print(json.load(sys.stdin)["id"])')
TOKEN=$(curl -s -X POST http://127.0.0.1:8000/v1/organizations/$ORG/tokens -H "Authorization: Bearer $ENGRAM_ADMIN_KEY" -H 'Content-Type: application/json' -d '{"name":"bench","scopes":["memory:read","memory:write","memory:control"]}' | python3 -c 'import sys,json;print(json.load(sys.stdin)["token"])')
ADMIN=$(curl -s -X POST http://127.0.0.1:8000/v1/organizations/$ORG/api-keys -H "Authorization: Bearer $ENGRAM_ADMIN_KEY" -H 'Content-Type: application/json' -d '{"name":"bench","permissions":["admin"],"rate_limit":1000000}' | python3 -c 'import sys,json;print(json.load(sys.stdin)["token"])')
echo "ORG=$ORG TOKEN=$TOKEN ADMIN=$ADMIN" > /tmp/bench/env
kill $PID; wait $PID || true
mvn -q test-compile dependency:build-classpath -Dmdep.outputFile=/tmp/cp.txt
$JAVA_HOME/bin/java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -Xmx2g \
  -cp target/classes:target/test-classes:$(cat /tmp/cp.txt) \
  io.engram.memory.bench.SeedMemories /tmp/bench/data $ORG 100000
echo seeded
