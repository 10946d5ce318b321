#!/bin/bash
# Benchmark set-up: a fresh $BENCH_DIR/data with one organization holding 100,000 seeded memories.
# Writes ORG, TOKEN (memory scopes) and ADMIN (admin API key) to $BENCH_DIR/env. About 3 minutes.
#   bash bench/seed-100k.sh [COUNT]     another count (300000 for the rebuild measurements)
#   BENCH_DIR=/tmp/bench300 ...         another directory
#   ORGS=1000 bash bench/seed-100k.sh 1000000
#                                       the memories spread evenly over that many organizations,
#                                       each with a memory token ($BENCH_DIR/tokens, one a line:
#                                       what bench/retrieve.lua spreads its requests over when
#                                       TOKENS names it); ORG/TOKEN/ADMIN are the first one's.
#                                       Texts and vectors come from a pool of 100,000 embedded
#                                       once (each organization draws distinct ones; a vector
#                                       reused by another organization gets a little noise).
set -e
COUNT=${1:-100000}
ORGS=${ORGS:-1}
BENCH_DIR=${BENCH_DIR:-/tmp/bench}
cd "$(dirname "$0")/.."
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64} MAVEN_OPTS="--sun-misc-unsafe-memory-access=allow"
rm -rf $BENCH_DIR/data && mkdir -p $BENCH_DIR
export ENGRAM_DATA_DIR=$BENCH_DIR/data ENGRAM_ADMIN_KEY=benchadminkey0123456789abcdef RATE_LIMIT_REQUESTS=1000000 ENGRAM_REFLECTION_SCHEDULER=false LOG_LEVEL=warning
./engram build >/dev/null
./engram serve > $BENCH_DIR/serve1.log 2>&1 &
PID=$!
until curl -sf http://127.0.0.1:8000/v1/health >/dev/null; do kill -0 $PID 2>/dev/null || { cat $BENCH_DIR/serve1.log; exit 1; }; sleep 0.5; done
python3 - "$ORGS" "$BENCH_DIR" <<'PY'
import json, sys, urllib.request
count, out = int(sys.argv[1]), sys.argv[2]
def post(path, body):
    request = urllib.request.Request("http://127.0.0.1:8000" + path, json.dumps(body).encode(), {
        "Authorization": "Bearer benchadminkey0123456789abcdef", "Content-Type": "application/json"})
    with urllib.request.urlopen(request) as response:
        return json.load(response)
orgs, tokens = [], []
for n in range(count):
    org = post("/v1/organizations", {"name": "Bench %d" % n, "plan": "growth"})["id"]
    orgs.append(org)
    tokens.append(post("/v1/organizations/%s/tokens" % org,
        {"name": "bench", "scopes": ["memory:read", "memory:write", "memory:control"]})["token"])
admin = post("/v1/organizations/%s/api-keys" % orgs[0],
    {"name": "bench", "permissions": ["admin"], "rate_limit": 1000000})["token"]
open(out + "/orgs", "w").write("\n".join(orgs) + "\n")
open(out + "/tokens", "w").write("\n".join(tokens) + "\n")
open(out + "/env", "w").write("ORG=%s TOKEN=%s ADMIN=%s\n" % (orgs[0], tokens[0], admin))
PY
kill $PID; wait $PID || true
mvn -q test-compile dependency:build-classpath -Dmdep.outputFile=/tmp/cp.txt
$JAVA_HOME/bin/java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -Xmx4g \
  -cp target/classes:target/test-classes:$(cat /tmp/cp.txt) \
  io.engram.memory.bench.SeedMemories $BENCH_DIR/data $BENCH_DIR/orgs $COUNT
echo seeded
