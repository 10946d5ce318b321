#!/usr/bin/env bash
# Runs the JMH micro-benchmarks of src/test/java/io/engram/bench (all, or those matching $1).
#   bench/jmh.sh                        every benchmark
#   bench/jmh.sh OrganizationConfig     one class
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/test-classpath.sh"
bench_java org.openjdk.jmh.Main "${1:-io.engram.bench}" "${@:2}"
