# What the gateway benchmarks share (sourced from bench/*.sh, run from the project's root): a fresh
# work directory, the processes stopped at exit, the fake upstream, Engram started and waited for,
# and an organization with an inference key.

# bench_begin WORK: JAVA_HOME, wrk required, WORK emptied, every process in PIDS stopped at exit.
bench_begin() {
  WORK=$1
  export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64} MAVEN_OPTS="--sun-misc-unsafe-memory-access=allow"
  command -v wrk >/dev/null || { echo "wrk is required (apt-get install wrk)"; exit 1; }
  rm -rf "$WORK" && mkdir -p "$WORK"
  PIDS=()
  trap 'for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done' EXIT
}

# fake_upstream PORT [FAIL_EVERY]: bench/fake-upstream.mjs on PORT (every FAIL_EVERY-th answer a 503).
fake_upstream() {
  node bench/fake-upstream.mjs "$@" > "$WORK/upstream-$1.log" 2>&1 & PIDS+=($!)
}

# start_engram JAR [JAVA OPTION...]: serves with the environment as exported, on port 8000, once
# /v1/health answers; ENGRAM is its process id.
start_engram() {
  local jar=$1; shift
  "$JAVA_HOME/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED "$@" -jar "$jar" \
    serve > "$WORK/engram.log" 2>&1 & ENGRAM=$!; PIDS+=($ENGRAM)
  until curl -sf http://127.0.0.1:8000/v1/health >/dev/null; do
    kill -0 $ENGRAM 2>/dev/null || { cat "$WORK/engram.log"; exit 1; }
    sleep 0.5
  done
}

stop_engram() {
  kill $ENGRAM; wait $ENGRAM 2>/dev/null || true
}

json() { python3 -c "import sys,json;print(json.load(sys.stdin)[\"$1\"])"; }

# bench_organization [PLAN]: ORG (plan scale by default) and KEY, an inference key without a
# rate limit to speak of, made by the operator (ENGRAM_ADMIN_KEY).
bench_organization() {
  local auth="Authorization: Bearer $ENGRAM_ADMIN_KEY"
  ORG=$(curl -s -X POST http://127.0.0.1:8000/v1/organizations -H "$auth" -H 'Content-Type: application/json' \
    -d "{\"name\":\"Bench\",\"plan\":\"${1:-scale}\"}" | json id)
  KEY=$(curl -s -X POST "http://127.0.0.1:8000/v1/organizations/$ORG/api-keys" -H "$auth" \
    -H 'Content-Type: application/json' -d '{"name":"bench","permissions":["inference"],"rate_limit":1000000}' | json token)
}

# seed_memories ORG COUNT: COUNT memories into ORG's data directory (Engram stopped), as
# io.engram.memory.bench.SeedMemories writes them.
seed_memories() {
  [[ -f $WORK/cp.txt ]] || mvn -q test-compile dependency:build-classpath -Dmdep.outputFile=$WORK/cp.txt
  "$JAVA_HOME/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -Xmx2g \
    -cp "target/classes:target/test-classes:$(cat $WORK/cp.txt)" io.engram.memory.bench.SeedMemories \
    "$ENGRAM_DATA_DIR" "$1" "$2" > "$WORK/seed.log" 2>&1
}

# seeded_engram JAR [JAVA OPTION...]: the fake upstream on 9100, Engram on $WORK/data with the
# bench's settings, ORG and KEY made, 10,000 memories seeded into ORG, then Engram serving again
# (with the options): what the profiles of the memory path start from.
seeded_engram() {
  local jar=$1; shift
  fake_upstream 9100
  export ENGRAM_DATA_DIR=$WORK/data ENGRAM_ADMIN_KEY=benchadminkey0123456789abcdef LOG_LEVEL=warning \
    ENGRAM_REFLECTION_SCHEDULER=false ENGRAM_UPSTREAM_URL=http://127.0.0.1:9100/v1 ENGRAM_UPSTREAM_MODEL=fake-model \
    DEFAULT_MODEL=fake-model
  [[ -f $jar ]] || ./engram build >/dev/null
  start_engram "$jar"
  bench_organization
  stop_engram
  seed_memories "$ORG" 10000
  start_engram "$jar" "$@"
}
