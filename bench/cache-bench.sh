#!/bin/bash
# The response cache and the request log on one Engram in front of the fake upstream (issue 44):
# the same memory-off chat at 16 connections with the organization's cache off (every request
# reaches the model) and on (every request after the first is a hit), in one run, then what the
# request log keeps per 100,000 requests (its table and index pages in SQLite, after every record
# was written). Results: docs/benchmarks.md.
#   [JAR=target/engram.jar] [JAVA_OPTS="-Xlog:gc:file=/tmp/gc.log"] bash bench/cache-bench.sh [seconds per run, default 15]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib/gateway.sh
SECONDS_PER_RUN=${1:-15}
JAR=${JAR:-target/engram.jar}
bench_begin /tmp/cachebench
fake_upstream 9100
export ENGRAM_DATA_DIR=$WORK/data ENGRAM_ADMIN_KEY=benchadminkey0123456789abcdef LOG_LEVEL=warning \
  ENGRAM_REFLECTION_SCHEDULER=false ENGRAM_UPSTREAM_URL=http://127.0.0.1:9100/v1 ENGRAM_UPSTREAM_MODEL=fake-model \
  DEFAULT_MODEL=fake-model
start_engram "$JAR" ${JAVA_OPTS:-}
bench_organization
cache() { # true|false
  curl -sf -X PATCH "http://127.0.0.1:8000/v1/organizations/$ORG/config" -H "Authorization: Bearer $ENGRAM_ADMIN_KEY" \
    -H 'Content-Type: application/json' -d "{\"cache\":{\"enabled\":$1}}" >/dev/null
}
load() { env AUTH=$KEY MEMORY=off wrk -t1 -c16 -d"$1"s --latency -s bench/chat.lua http://127.0.0.1:8000/v1/chat/completions; }
load 30 >/dev/null # the JIT's warm-up
for round in 1 2; do
  cache false
  echo "round $round cache off $(load "$SECONDS_PER_RUN" | grep RESULT)"
  cache true
  echo "round $round cache on  $(load "$SECONDS_PER_RUN" | grep RESULT)"
done
stop_engram
python3 - "$ENGRAM_DATA_DIR/engram.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("SELECT COUNT(*) FROM request_log").fetchone()[0]
pages = db.execute("SELECT name, SUM(pgsize) FROM dbstat WHERE name LIKE '%request_log%' GROUP BY name").fetchall()
total = sum(size for _, size in pages)
print(f"request log: {rows} records, {total} bytes in its table and index ({dict(pages)}): "
      f"{total / rows * 100000 / 1e6:.1f} MB per 100,000 requests")
PY
