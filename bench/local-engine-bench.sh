#!/usr/bin/env bash
# The in-process engine's settings on this machine: MODEL_QUANTIZATION (none, int4) and BATCH_SIZE /
# ENABLE_FLASH_ATTENTION (prompt tokens per forward pass) on Llama models of random weights: load
# time, quantized weight bytes, resident memory, prompt and reply tokens per second (one JVM per
# setting). Results: docs/benchmarks.md.
#   bash bench/local-engine-bench.sh [rounds]
set -euo pipefail
ROUNDS="${1:-5}"
source "$(dirname "${BASH_SOURCE[0]}")/test-classpath.sh"
run() { # hidden layers intermediate heads quantization batch flash
  bench_java -Xmx2g io.engram.bench.LocalEngineBench "$@" "$ROUNDS" 2>&1 | grep -v -E '^WARNING|WARN |INFO '
}
for shape in "512 8 1408 8" "1024 12 2816 16"; do
  run $shape none 256 true
  run $shape int4 256 true
  run $shape none 256 false
done
