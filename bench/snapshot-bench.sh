#!/bin/bash
# Snapshot and restore times for an organization with 100,000 memories (bench/seed-100k.sh) and
# a 1 GB file in its default instance: a snapshot, a restore into a folder, and a restore over the
# live files (which takes a safety snapshot first). Results: docs/benchmarks.md.
#   bash bench/snapshot-bench.sh            (seeds /tmp/bench/data first: about 3 minutes)
#   SEEDED=1 bash bench/snapshot-bench.sh   (reuses /tmp/bench/data)
set -euo pipefail
cd "$(dirname "$0")/.."
[[ -n "${SEEDED:-}" ]] || bash bench/seed-100k.sh
source /tmp/bench/env
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
export ENGRAM_DATA_DIR=/tmp/bench/data ENGRAM_ADMIN_KEY=benchadminkey0123456789abcdef \
  ENGRAM_REFLECTION_SCHEDULER=false LOG_LEVEL=${LOG_LEVEL:-warning}
./engram serve > /tmp/bench/snapshot-serve.log 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true' EXIT
until curl -sf http://127.0.0.1:8000/v1/health >/dev/null; do kill -0 $PID 2>/dev/null || { cat /tmp/bench/snapshot-serve.log; exit 1; }; sleep 0.5; done
AUTH="Authorization: Bearer $ENGRAM_ADMIN_KEY"
json() { python3 -c "import sys,json;print(json.load(sys.stdin)$1)"; }
timed() { local start end; start=$(date +%s.%N); "$@" > /tmp/bench/last.json; end=$(date +%s.%N); python3 -c "print(f'{$end-$start:.2f} s')"; }
NANO=$(curl -s http://127.0.0.1:8000/v1/organizations/$ORG/instances -H "$AUTH" | json '["data"][0]["id"]')
head -c $((1024 * 1024 * 1024)) /dev/urandom > /tmp/bench/1g.bin
curl -sf -T /tmp/bench/1g.bin -H "$AUTH" http://127.0.0.1:8000/v1/nano/$NANO/storage/files/training_data/1g.bin >/dev/null
rm -f /tmp/bench/1g.bin
echo "snapshot (100k memories, 1 GB file): $(timed curl -sf -X POST -H "$AUTH" -H 'Content-Type: application/json' -d '{}' http://127.0.0.1:8000/v1/nano/$NANO/snapshot)"
SNAP=$(json '["id"]' < /tmp/bench/last.json)
echo "  $(python3 -c 'import json;d=json.load(open("/tmp/bench/last.json"));print(d["status"], d["files"], "files", d["bytes"], "bytes")')"
du -sh /tmp/bench/data/snapshots/$SNAP | sed 's/^/  on disk (blobs are links): /'
echo "restore into a folder:              $(timed curl -sf -X POST -H "$AUTH" -H 'Content-Type: application/json' -d "{\"snapshot_id\":\"$SNAP\",\"restore_path\":\"data/restored/\"}" http://127.0.0.1:8000/v1/nano/$NANO/restore)"
head -c 1024 /dev/urandom | curl -sf -T - -H "$AUTH" http://127.0.0.1:8000/v1/nano/$NANO/storage/files/training_data/1g.bin >/dev/null
echo "restore over live (safety first):   $(timed curl -sf -X POST -H "$AUTH" -H 'Content-Type: application/json' -d "{\"snapshot_id\":\"$SNAP\",\"restore_path\":\"/\"}" http://127.0.0.1:8000/v1/nano/$NANO/restore)"
cat /tmp/bench/last.json; echo
