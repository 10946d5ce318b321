#!/bin/bash
# Retrieval at 100,000 memories: rebuilds the index of /tmp/bench/data (made by bench/seed-100k.sh),
# then retrieves with includeContext at 1, 2, 4 and 8 connections (wrk, 30 s each after a warm-up).
#   bash bench/retrieve-bench.sh [path to engram.jar, default target/engram.jar]
#   BENCH_DIR=/tmp/bench1m ...                another seeded directory; where it holds many
#                                             organizations (ORGS=... bench/seed-100k.sh), each
#                                             retrieval is one of theirs, picked at random
#   FILTERED=1 bash bench/retrieve-bench.sh   as one of 10,000 end users, with a metadata filter
#   COMPARE=1 bash bench/retrieve-bench.sh    all three in one run on one index: unfiltered (the
#                                             organization), an end user, an end user + a filter
#   CONNECTIONS="2" ROUNDS=3 COMPARE=1 ...     only those connection counts, both alternated 3 times
# Results: docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
JAR=${1:-target/engram.jar}
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
BENCH_DIR=${BENCH_DIR:-/tmp/bench}
source <(sed 's/ /\n/g' $BENCH_DIR/env)
[ -f $BENCH_DIR/tokens ] && [ "$(wc -l < $BENCH_DIR/tokens)" -gt 1 ] && export TOKENS=$BENCH_DIR/tokens
export ENGRAM_DATA_DIR=$BENCH_DIR/data ENGRAM_ADMIN_KEY=benchadminkey0123456789abcdef RATE_LIMIT_REQUESTS=1000000 \
  ENGRAM_REFLECTION_SCHEDULER=false LOG_LEVEL=warning
rm -rf $BENCH_DIR/data/index
"$JAVA_HOME/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -jar "$JAR" serve \
  > $BENCH_DIR/retrieve-serve.log 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true' EXIT
T0=$SECONDS
until curl -sf http://127.0.0.1:8000/v1/health >/dev/null; do
  kill -0 $PID 2>/dev/null || { cat $BENCH_DIR/retrieve-serve.log; exit 1; }
  sleep 0.5
done
echo "serving after $((SECONDS - T0)) s (the index rebuilt or filled from the database)"
# Whatever else must be quiet before measuring (solr-bench.sh: Solr's merges after the fill).
[ -n "${SETTLE:-}" ] && "$SETTLE"
URL=http://127.0.0.1:8000/v1/memory/retrieve
wrk -t1 -c1 -d10s -s bench/retrieve.lua -H "Authorization: Bearer $TOKEN" $URL >/dev/null
run() {
  for C in ${CONNECTIONS:-1 2 4 8}; do
    echo "$1 c=$C $(wrk -t1 -c$C -d30s --latency -s bench/retrieve.lua -H "Authorization: Bearer $TOKEN" $URL \
      | grep -E 'Requests/sec|^ +(50|90|99)%' | tr -s ' ' | tr '\n' ' ')"
  done
}
# How the memory index answered (with Solr: searches sent to the shard's core or to the collection).
index_searches() {
  curl -s -H "Authorization: Bearer $ENGRAM_ADMIN_KEY" http://127.0.0.1:8000/metrics \
    | grep '^engram_memory_index_searches_total' | tr '\n' ' ' || true
}
trap 'S=$(index_searches); [ -n "$S" ] && echo "index searches: $S"; kill $PID 2>/dev/null || true' EXIT
if [ "${COMPARE:-}" = 1 ]; then
  for ROUND in $(seq "${ROUNDS:-1}"); do
    export FILTERED=0
    run unfiltered
    export FILTERED=2
    run "end user"
    export FILTERED=1
    run "end user + filter"
  done
else
  export FILTERED=${FILTERED:-0}
  run "$([ "$FILTERED" = 1 ] && echo filtered || echo unfiltered)"
fi
