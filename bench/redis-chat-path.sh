#!/bin/bash
# What sharing the limits through Redis adds to a chat request: one node, the same organization,
# against the fake upstream, without and then with REDIS_URL. Every request waits for two Redis
# scripts: the key's rate window and a concurrency slot taken together at the door; the slot given
# back. The organization is on the Scale plan (PLAN=...): a Seed organization's 100,000 tokens an
# hour last a few seconds at these rates, and the rest of the run would measure refusals; with an
# hourly budget a third script reserves the tokens once the prompt is read. Each run warms the JIT for 20 s at 16 connections first (the first seconds measure the
# compiler, not the request), then measures one connection (latency) and 16 (throughput). With
# Redis it also reads engram_redis_command_seconds from /metrics: the commands' own times, as the
# request waited for them. Results: docs/benchmarks.md.
#   bash bench/redis-chat-path.sh [seconds per run, default 15]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib/gateway.sh
SECONDS_PER_RUN=${1:-15}
bench_begin /tmp/redis-chat-bench
fake_upstream 9100
export ENGRAM_DATA_DIR=$WORK/data ENGRAM_ADMIN_KEY=benchadminkey0123456789abcdef LOG_LEVEL=warning \
  ENGRAM_REFLECTION_SCHEDULER=false ENGRAM_UPSTREAM_URL=http://127.0.0.1:9100/v1 ENGRAM_UPSTREAM_MODEL=fake-model \
  DEFAULT_MODEL=fake-model DATABASE_URL="jdbc:postgresql://127.0.0.1:5432/test?user=postgres&currentSchema=redis_chat_bench"
psql -h 127.0.0.1 -U postgres -d test -qc 'DROP SCHEMA IF EXISTS redis_chat_bench CASCADE; CREATE SCHEMA redis_chat_bench'
./engram build >/dev/null
# The Redis commands waited for between two scrapes of /metrics: how many, and their p50/p99
# (the upper bound of the histogram bucket that holds it).
commands() {
  python3 - "$1" "$2" <<'PY'
import re, sys
def buckets(path):
    out = {}
    for line in open(path):
        m = re.match(r'engram_redis_command_seconds_bucket\{le="([^"]+)"\} (\S+)', line)
        if m:
            out[float('inf') if m.group(1) == '+Inf' else float(m.group(1))] = float(m.group(2))
    return out
before, after = buckets(sys.argv[1]), buckets(sys.argv[2])
if not after:
    sys.exit(0)
delta = sorted((le, after[le] - before.get(le, 0)) for le in after)
total = delta[-1][1]
def q(p):
    return next(le for le, n in delta if n >= p * total)
print(f"   Redis commands waited for: {total:.0f}; p50 <= {q(0.5)*1e6:.0f} us, p99 <= {q(0.99)*1e6:.0f} us")
PY
}
run() { # $1: label; REDIS_URL as exported (or not)
  start_engram target/engram.jar
  bench_organization "${PLAN:-scale}"
  local key=$KEY
  local chat=(-s bench/chat.lua http://127.0.0.1:8000/v1/chat/completions)
  export AUTH=$key MEMORY=off MODEL=fake-model
  wrk -t2 -c16 -d20s "${chat[@]}" >/dev/null
  echo "== $1"
  curl -s -H "Authorization: Bearer $ENGRAM_ADMIN_KEY" http://127.0.0.1:8000/metrics > "$WORK/before.prom"
  echo "-- one connection"
  wrk -t1 -c1 -d${SECONDS_PER_RUN}s --latency "${chat[@]}" | grep -E 'Requests/sec|Non-2xx|^ +(50|90|99)%'
  curl -s -H "Authorization: Bearer $ENGRAM_ADMIN_KEY" http://127.0.0.1:8000/metrics > "$WORK/after.prom"
  commands "$WORK/before.prom" "$WORK/after.prom"
  echo "-- 16 connections"
  wrk -t2 -c16 -d${SECONDS_PER_RUN}s --latency "${chat[@]}" | grep -E 'Requests/sec|Non-2xx|^ +(50|99)%'
  curl -s -H "Authorization: Bearer $ENGRAM_ADMIN_KEY" http://127.0.0.1:8000/metrics > "$WORK/loaded.prom"
  commands "$WORK/after.prom" "$WORK/loaded.prom"
  stop_engram
}
unset REDIS_URL
run "limits in process (no REDIS_URL)"
REDIS_URL=redis://127.0.0.1:6379 run "limits in Redis (REDIS_URL)"
