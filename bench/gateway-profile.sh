#!/bin/bash
# Where a chat's time and memory go: one Engram in front of the fake upstream
# (bench/fake-upstream.mjs), an organization with 10,000 memories, a JFR recording of each path
# under the gateway bench's load (wrk -t1 -c16, bench/chat.lua) after the JIT's warm-up:
#   off     memory off (X-Engram-Memory: off)
#   memory  memory on, every request a different question (VARY=true)
# and, for each, what bench/jfr-top.py reads from it: CPU samples by the project's frames
# (inclusive) and by leaf frame, allocation by site, and what threads waited on (monitors, parks,
# socket and file reads). The recordings stay in $WORK for `jfr view` / JDK Mission Control.
#   [JAR=target/engram.jar] [PATHS="off memory"] bash bench/gateway-profile.sh [seconds recorded per path, default 20]
# Results: docs/benchmarks.md (issue 43).
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_RUN=${1:-20}
JAR=${JAR:-target/engram.jar}
WORK=${WORK:-/tmp/gwprofile}
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64} MAVEN_OPTS="--sun-misc-unsafe-memory-access=allow"
command -v wrk >/dev/null || { echo "wrk is required (apt-get install wrk)"; exit 1; }
rm -rf "$WORK" && mkdir -p "$WORK"
PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT
node bench/fake-upstream.mjs 9100 > "$WORK/upstream.log" 2>&1 & PIDS+=($!)
export ENGRAM_DATA_DIR=$WORK/data ENGRAM_ADMIN_KEY=benchadminkey0123456789abcdef LOG_LEVEL=warning \
  ENGRAM_REFLECTION_SCHEDULER=false ENGRAM_UPSTREAM_URL=http://127.0.0.1:9100/v1 ENGRAM_UPSTREAM_MODEL=fake-model \
  DEFAULT_MODEL=fake-model
[[ -f $JAR ]] || ./engram build >/dev/null
start_engram() {
  "$JAVA_HOME/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED "$@" -jar "$JAR" \
    serve > "$WORK/engram.log" 2>&1 & ENGRAM=$!; PIDS+=($ENGRAM)
  until curl -sf http://127.0.0.1:8000/v1/health >/dev/null; do
    kill -0 $ENGRAM 2>/dev/null || { cat "$WORK/engram.log"; exit 1; }
    sleep 0.5
  done
}
start_engram
json() { python3 -c "import sys,json;print(json.load(sys.stdin)[\"$1\"])"; }
AUTH="Authorization: Bearer $ENGRAM_ADMIN_KEY"
ORG=$(curl -s -X POST http://127.0.0.1:8000/v1/organizations -H "$AUTH" -H 'Content-Type: application/json' \
  -d '{"name":"Bench","plan":"scale"}' | json id)
KEY=$(curl -s -X POST "http://127.0.0.1:8000/v1/organizations/$ORG/api-keys" -H "$AUTH" -H 'Content-Type: application/json' \
  -d '{"name":"bench","permissions":["inference"],"rate_limit":1000000}' | json token)
kill $ENGRAM; wait $ENGRAM 2>/dev/null || true
[[ -f $WORK/cp.txt ]] || mvn -q test-compile dependency:build-classpath -Dmdep.outputFile=$WORK/cp.txt
"$JAVA_HOME/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -Xmx2g \
  -cp "target/classes:target/test-classes:$(cat $WORK/cp.txt)" io.engram.memory.bench.SeedMemories "$ENGRAM_DATA_DIR" "$ORG" 10000 \
  > "$WORK/seed.log" 2>&1
# The profile settings, with method samples every 2 ms (10 ms by default), allocation samples, monitor
# waits over 10 ms; thread parks and socket and file reads over 1 ms are what the requests waited on.
start_engram -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints
URL=http://127.0.0.1:8000/v1/chat/completions
record() { # name [env...]
  local name=$1; shift
  env AUTH=$KEY "$@" wrk -t1 -c16 -d30s -s bench/chat.lua "$URL" >/dev/null   # the JIT's warm-up
  jcmd $ENGRAM JFR.start name="$name" settings=profile \
    jdk.ExecutionSample#period=2ms jdk.ThreadPark#threshold=1ms jdk.SocketRead#threshold=1ms jdk.FileRead#threshold=1ms >/dev/null
  local result; result=$(env AUTH=$KEY "$@" wrk -t1 -c16 -d${SECONDS_PER_RUN}s --latency -s bench/chat.lua "$URL" | grep RESULT)
  jcmd $ENGRAM JFR.stop name="$name" filename="$WORK/$name.jfr" >/dev/null
  echo "## $name: $result"
  python3 bench/jfr-top.py "$WORK/$name.jfr" "$(echo "$result" | sed 's/.*requests=\([0-9]*\).*/\1/')"
}
for path in ${PATHS:-off memory}; do
  case $path in
    off) record off MEMORY=off ;;
    memory) record memory VARY=true ;;
  esac
done
