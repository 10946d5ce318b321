#!/usr/bin/env bash
# Runs the JMH micro-benchmarks of src/test/java/io/engram/bench (all, or those matching $1).
#   bench/jmh.sh                        every benchmark
#   bench/jmh.sh OrganizationConfig     one class
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
mvn -B -q -Dstyle.color=never -DskipTests -Dspotless.check.skip=true -Dcheckstyle.skip=true test-compile
mvn -B -q -Dstyle.color=never dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=target/bench.classpath
exec "$JAVA_HOME/bin/java" --add-modules jdk.incubator.vector \
  -cp "target/test-classes:target/classes:$(cat target/bench.classpath)" \
  org.openjdk.jmh.Main "${1:-io.engram.bench}" "${@:2}"
