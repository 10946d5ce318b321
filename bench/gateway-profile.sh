#!/bin/bash
# Where a chat's time and memory go: one Engram in front of the fake upstream
# (bench/fake-upstream.mjs), an organization with 10,000 memories, a JFR recording of each path
# under the gateway bench's load (wrk -t1 -c16, bench/chat.lua) after the JIT's warm-up:
#   off     memory off (X-Engram-Memory: off)
#   memory  memory on, every request a different question (VARY=true)
# and, for each, what bench/jfr-top.py reads from it: CPU samples by the project's frames
# (inclusive) and by leaf frame, allocation by site, and what threads waited on (monitors, parks,
# socket and file reads). The recordings stay in $WORK for `jfr view` / JDK Mission Control.
#   [JAR=target/engram.jar] [PATHS="off memory"] bash bench/gateway-profile.sh [seconds recorded per path, default 20]
# Results: docs/benchmarks.md (issue 43).
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib/gateway.sh
SECONDS_PER_RUN=${1:-20}
JAR=${JAR:-target/engram.jar}
bench_begin "${WORK:-/tmp/gwprofile}"
# The profile settings, with method samples every 2 ms (10 ms by default), allocation samples, monitor
# waits over 10 ms; thread parks and socket and file reads over 1 ms are what the requests waited on.
seeded_engram "$JAR" -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints
URL=http://127.0.0.1:8000/v1/chat/completions
record() { # name [env...]
  local name=$1; shift
  env AUTH=$KEY "$@" wrk -t1 -c16 -d30s -s bench/chat.lua "$URL" >/dev/null   # the JIT's warm-up
  jcmd $ENGRAM JFR.start name="$name" settings=profile \
    jdk.ExecutionSample#period=2ms jdk.ThreadPark#threshold=1ms jdk.SocketRead#threshold=1ms jdk.FileRead#threshold=1ms >/dev/null
  local result; result=$(env AUTH=$KEY "$@" wrk -t1 -c16 -d${SECONDS_PER_RUN}s --latency -s bench/chat.lua "$URL" | grep RESULT)
  jcmd $ENGRAM JFR.stop name="$name" filename="$WORK/$name.jfr" >/dev/null
  echo "## $name: $result"
  python3 bench/jfr-top.py "$WORK/$name.jfr" "$(echo "$result" | sed 's/.*requests=\([0-9]*\).*/\1/')"
}
for path in ${PATHS:-off memory}; do
  case $path in
    off) record off MEMORY=off ;;
    memory) record memory VARY=true ;;
  esac
done
