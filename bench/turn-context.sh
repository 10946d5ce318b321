#!/usr/bin/env bash
# What a turn's vector would gain from the turn before it, on the vectors alone
# (io.engram.memory.TurnContextBench): hit@5/10/20 per development set for the turn's own vector,
# the previous turn and this one embedded together, the larger of both, their sum.
#   bash bench/turn-context.sh [set ...]     default: locomo-dev friendsqa
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/test-classpath.sh"
bench_java -Xmx4g io.engram.memory.TurnContextBench "$@" 2>&1 | grep -v -E '^WARNING|WARN |INFO '
