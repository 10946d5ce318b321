#!/bin/bash
# The memory index on Solr against the embedded one, in one run on one data set: retrieval at
# 100,000 memories (bench/seed-100k.sh's /tmp/bench/data) at 1 and 8 connections, first on the
# embedded Lucene index, then on a two-node SolrCloud (a ZooKeeper and two Solr processes from
# emulators/solr, built by ./engram test) that Engram fills from the database at start. Also
# prints the fill's time, and Solr's disk and heap for those memories.
#   bash bench/solr-bench.sh [path to engram.jar]       CONNECTIONS="1 8" by default
#   BEFORE=<another engram.jar> ...     then, on the same filled collection, that build and this one
#                                           again (an A/B of a change to the Solr path, both warm);
#                                           ROUNDS=N alternates them N times
#   BENCH_DIR=/tmp/bench1m SOLR_HEAP=2g bash bench/solr-bench.sh   another seeded directory (such as
#                                           1,000,000 memories over 1,000 organizations:
#                                           ORGS=1000 BENCH_DIR=/tmp/bench1m bench/seed-100k.sh 1000000)
# Results: docs/benchmarks.md, "The memory index on Solr".
set -euo pipefail
cd "$(dirname "$0")/.."
JAR=${1:-target/engram.jar}
export CONNECTIONS=${CONNECTIONS:-1 8}
SOLR_JAVA=${ENGRAM_SOLR_JAVA:-/usr/lib/jvm/java-17-openjdk-amd64/bin/java}
[ -x "$SOLR_JAVA" ] || SOLR_JAVA=java
CP="emulators/solr/target/classes:$(cat emulators/solr/target/classpath.txt)"
WORK=$(mktemp -d /tmp/solr-bench.XXXX)
PIDS=()
trap 'kill "${PIDS[@]}" 2>/dev/null || true' EXIT
free_port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
ready() { until grep -q '^ready' "$1"; do sleep 0.5; done; }
ZK=$(free_port)
"$SOLR_JAVA" -Xmx256m -cp "$CP" io.engram.emulators.SolrNode zk "$WORK/zk" "$ZK" > "$WORK/zk.log" 2>&1 &
PIDS+=($!)
ready "$WORK/zk.log"
URLS=""
for N in 1 2; do
  P=$(free_port)
  "$SOLR_JAVA" -Xmx${SOLR_HEAP:-1g} -XX:+UseG1GC -cp "$CP" io.engram.emulators.SolrNode node "$WORK/node$N" "$P" "127.0.0.1:$ZK/solr" \
    > "$WORK/node$N.log" 2>&1 &
  PIDS+=($!)
  URLS="$URLS${URLS:+,}http://127.0.0.1:$P/solr"
done
ready "$WORK/node1.log"; ready "$WORK/node2.log"
echo "== embedded (Lucene) index"
bash bench/retrieve-bench.sh "$JAR"
# The embedded run's server must be gone (it holds the data directory's lock) before the next.
while pgrep -f "engram.jar serve" >/dev/null; do sleep 0.5; done
echo "== Solr index (2 nodes, 2 shards x 2 replicas)"
# After a fill Solr merges its segments for minutes (at 1,000,000 memories, longer than the
# measurement): wait until its processes have used under 5 % of a core for 15 s in a row, at
# most SETTLE_MAX seconds (1,800), so a node kept busy by something else cannot hang the bench.
settle_solr() {
  local quiet=0 before after
  T_SETTLE=$SECONDS
  before=$(solr_cpu_ticks)
  while [ $quiet -lt 3 ]; do
    if [ $((SECONDS - T_SETTLE)) -ge "${SETTLE_MAX:-1800}" ]; then
      echo "Solr still busy after $((SECONDS - T_SETTLE)) s of waiting: measuring anyway"
      return
    fi
    sleep 5
    after=$(solr_cpu_ticks)
    if [ $(( (after - before) * 100 / (5 * $(getconf CLK_TCK)) )) -lt 5 ]; then quiet=$((quiet + 1)); else quiet=0; fi
    before=$after
  done
  echo "Solr quiet after $((SECONDS - T_SETTLE)) s of waiting (merges done)"
}
solr_cpu_ticks() { # user + system CPU ticks of the Solr nodes (fields 14 and 15 of /proc/PID/stat)
  local total=0 pid
  for pid in $SOLR_PIDS; do total=$((total + $(awk '{print $14 + $15}' "/proc/$pid/stat"))); done
  echo $total
}
export -f settle_solr solr_cpu_ticks
export SOLR_PIDS="${PIDS[*]:1}"
on_solr() {
  while pgrep -f "engram.jar serve" >/dev/null; do sleep 0.5; done
  SETTLE=settle_solr ENGRAM_MEMORY_INDEX=solr ENGRAM_SOLR_URL="$URLS" ENGRAM_SOLR_COLLECTION=bench bash bench/retrieve-bench.sh "$1"
}
on_solr "$JAR"
if [ -n "${BEFORE:-}" ]; then
  # The first run after the fill finds Solr's caches cold: it is not one of the compared rows.
  for ROUND in $(seq "${ROUNDS:-1}"); do
    echo "== Solr index, round $ROUND, before: $BEFORE"
    on_solr "$BEFORE"
    echo "== Solr index, round $ROUND, after: $JAR (again)"
    on_solr "$JAR"
  done
fi
echo "Solr on disk: $(du -sh "$WORK/node1" | cut -f1) + $(du -sh "$WORK/node2" | cut -f1) (each holds one replica of both shards)"
set +e
for U in ${URLS//,/ }; do
  curl -s "$U/admin/info/system?wt=json" | python3 -c 'import sys,json;j=json.load(sys.stdin)["jvm"]["memory"]["raw"];print("Solr heap used %.0f MB of %.0f" % (j["used"]/2**20, j["max"]/2**20))'
  curl -s "$U/admin/metrics?group=core&prefix=INDEX.sizeInBytes&wt=json" | python3 -c 'import sys,json;m=json.load(sys.stdin)["metrics"];print("  index bytes per core:", {k.split(".")[-1]:v["INDEX.sizeInBytes"] for k,v in m.items()})'
done
