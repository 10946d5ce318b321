#!/bin/bash
# What one chat costs in CPU, native time included (ONNX Runtime, SQLite, the kernel, the JIT,
# the GC), which JFR does not see: one Engram in front of the fake upstream, an organization with
# 10,000 memories, the gateway bench's load (wrk -t1 -c16, bench/chat.lua) for 45 s of warm-up,
# then async-profiler (Maven Central: tools.profiler:async-profiler, linux-x64) attached for
# SECONDS under the same load; bench/cpu-per-chat.py prints µs of CPU per chat by where it went.
#   [JAR=target/engram.jar] [MEMORY=on|off] bash bench/cpu-profile.sh [seconds profiled, default 20]
# Results: docs/benchmarks.md (issue 43). The collapsed stacks stay in $WORK/cpu.collapsed.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib/gateway.sh
SECONDS_PER_RUN=${1:-20}
JAR=${JAR:-target/engram.jar}
PROFILER=4.1
bench_begin "${WORK:-/tmp/cpuprofile}"
AP=$HOME/.m2/repository/tools/profiler/async-profiler/$PROFILER/async-profiler-$PROFILER-linux-x64.jar
[[ -f $AP ]] || mvn -q dependency:get -Dartifact=tools.profiler:async-profiler:$PROFILER:jar:linux-x64
(cd "$WORK" && unzip -oq "$AP")
seeded_engram "$JAR"
LOAD=(MEMORY=off)
[[ "${MEMORY:-on}" == on ]] && LOAD=(VARY=true)
load() { env AUTH=$KEY "${LOAD[@]}" wrk -t1 -c16 -d"$1"s --latency -s bench/chat.lua http://127.0.0.1:8000/v1/chat/completions; }
load 45 >/dev/null
"$JAVA_HOME/bin/jcmd" $ENGRAM JVMTI.agent_load "$WORK/linux-x64/libasyncProfiler.so" \
  "\"start,event=cpu,interval=1000000,file=$WORK/cpu.collapsed,collapsed,timeout=$SECONDS_PER_RUN\"" >/dev/null
RESULT=$(load "$SECONDS_PER_RUN" | grep RESULT)
sleep 2
echo "memory ${MEMORY:-on} $RESULT"
python3 bench/cpu-per-chat.py "$WORK/cpu.collapsed" "$(sed -E 's/.*requests=([0-9]+).*/\1/' <<< "$RESULT")"
stop_engram
