#!/usr/bin/env bash
# Fine-tuning throughput on this machine: LoRA steps (batch 4) on the demo model and on larger
# Llama models of random weights, tokens per second, step time, peak memory (one JVM per model),
# and the forward pass of the batch in PyTorch against the local engine's Java one. Results:
# docs/benchmarks.md.
#   bash bench/fine-tuning-bench.sh
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/test-classpath.sh"
run() { # hidden layers intermediate heads kv-heads steps
  bench_java -Xmx${HEAP:-1g} io.engram.bench.FineTuningBench "$@" 2>&1 | grep -v -E '^WARNING|WARN '
  echo
}
run 0 2 128 4 2 60           # the demo model (engram-tiny-untrained)
run 512 8 1408 8 4 20        # ~26M parameters
HEAP=3g run 1024 16 2816 16 8 6   # ~200M parameters
