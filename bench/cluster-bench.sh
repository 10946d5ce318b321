#!/usr/bin/env bash
# Three Engram nodes on one PostgreSQL and one Redis behind HAProxy (deploy/haproxy/haproxy.cfg),
# as the three-node test runs them, measured: the index lag between nodes under 200 writes/s, and
# chat throughput through one node against three behind the balancer. Needs PostgreSQL on
# 127.0.0.1:5432, redis-server and HAProxy (./engram test fetches both). About 3 minutes.
#   bash bench/cluster-bench.sh
#   INDEX=solr THROUGHPUT=false bash bench/cluster-bench.sh   the index lag with the memory index on
#                                           a two-node SolrCloud (emulators/solr), chat throughput left out
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
export ENGRAM_HAPROXY="${ENGRAM_HAPROXY:-${XDG_CACHE_HOME:-$HOME/.cache}/engram/haproxy-2.6/haproxy}"
mvn -B -q -Dstyle.color=never -DskipTests -Dspotless.check.skip=true -Dcheckstyle.skip=true test-compile
mvn -B -q -Dstyle.color=never dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=target/bench.classpath
CP="target/test-classes:target/classes:$(cat target/bench.classpath)"
# The nodes are started from the same class path, with the launcher's JVM flags.
"$JAVA_HOME/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED \
  -Dsurefire.test.class.path="$CP" -Dengram.node.heap=1g \
  -Dcluster.index="${INDEX:-lucene}" -Dcluster.throughput="${THROUGHPUT:-true}" -Dcluster.rates="${RATES:-}" \
  -Dengram.jvm.flags="--add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED" \
  -cp "$CP" io.engram.cluster.ClusterBench 2>&1 | grep -v '^{"@timestamp"'
