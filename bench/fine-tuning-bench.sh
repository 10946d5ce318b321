#!/usr/bin/env bash
# Fine-tuning throughput on this machine: LoRA steps (batch 4) on the demo model and on larger
# Llama models of random weights, tokens per second, step time, peak memory (one JVM per model),
# and the forward pass of the batch in PyTorch against the local engine's Java one. Results:
# docs/benchmarks.md.
#   bash bench/fine-tuning-bench.sh
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
export JAVA_HOME="${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}"
mvn -B -q -Dstyle.color=never -DskipTests -Dspotless.check.skip=true -Dcheckstyle.skip=true test-compile
mvn -B -q -Dstyle.color=never dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=target/bench.classpath
run() { # hidden layers intermediate heads kv-heads steps
  "$JAVA_HOME/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -Xmx${HEAP:-1g} \
    -cp "target/test-classes:target/classes:$(cat target/bench.classpath)" \
    io.engram.bench.FineTuningBench "$@" 2>&1 | grep -v -E '^WARNING|WARN '
  echo
}
run 0 2 128 4 2 60           # the demo model (engram-tiny-untrained)
run 512 8 1408 8 4 20        # ~26M parameters
HEAP=3g run 1024 16 2816 16 8 6   # ~200M parameters
