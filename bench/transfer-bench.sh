#!/bin/bash
# Export and import throughput: seeds COUNT memories (bench/seed-100k.sh), exports them (with and
# without vectors), imports the export into a second organization (vectors kept), imports the
# first COMPUTED lines of the vector-less export into a third (the model runs), and sends the
# first import again (everything already there). Prints memories per second for each.
#   bash bench/transfer-bench.sh [COUNT] [COMPUTED]     defaults 20000 and 2000
set -e
COUNT=${1:-20000}
COMPUTED=${2:-2000}
BENCH_DIR=${BENCH_DIR:-/tmp/bench-transfer}
export BENCH_DIR
cd "$(dirname "$0")/.."
bash bench/seed-100k.sh "$COUNT" >/dev/null
source $BENCH_DIR/env
export ENGRAM_DATA_DIR=$BENCH_DIR/data ENGRAM_ADMIN_KEY=benchadminkey0123456789abcdef RATE_LIMIT_REQUESTS=1000000 ENGRAM_REFLECTION_SCHEDULER=false LOG_LEVEL=info LOG_FORMAT=text
./engram serve > $BENCH_DIR/serve2.log 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null' EXIT
until curl -sf http://127.0.0.1:8000/v1/health/ready >/dev/null; do kill -0 $PID 2>/dev/null || { cat $BENCH_DIR/serve2.log; exit 1; }; sleep 0.5; done
organization() {
  local org
  org=$(curl -s -X POST http://127.0.0.1:8000/v1/organizations -H "Authorization: Bearer $ENGRAM_ADMIN_KEY" -H 'Content-Type: application/json' -d "{\"name\":\"$1\",\"plan\":\"growth\"}" | python3 -c 'import sys,json;print(json.load(sys.stdin)["id"])')
  curl -s -X POST http://127.0.0.1:8000/v1/organizations/$org/tokens -H "Authorization: Bearer $ENGRAM_ADMIN_KEY" -H 'Content-Type: application/json' -d '{"name":"bench","scopes":["memory:read","memory:write"]}' | python3 -c 'import sys,json;print(json.load(sys.stdin)["token"])'
}
rate() { python3 -c "import sys; n,s=float(sys.argv[1]),float(sys.argv[2]); print(f'{n:.0f} memories in {s:.2f} s: {n/s:,.0f} memories/s')" "$1" "$2"; }
timed() { local start=$(date +%s.%N); "$@"; local end=$(date +%s.%N); python3 -c "print($end-$start)"; }
S=$(timed curl -sf -o $BENCH_DIR/export.jsonl "http://127.0.0.1:8000/v1/memory/export" -H "Authorization: Bearer $TOKEN")
echo "export with vectors ($(du -h $BENCH_DIR/export.jsonl | cut -f1)): $(rate $COUNT $S)"
S=$(timed curl -sf -o $BENCH_DIR/light.jsonl "http://127.0.0.1:8000/v1/memory/export?embeddings=false" -H "Authorization: Bearer $TOKEN")
echo "export without vectors ($(du -h $BENCH_DIR/light.jsonl | cut -f1)): $(rate $COUNT $S)"
SECOND=$(organization second)
S=$(timed curl -sf -o $BENCH_DIR/import.json -X POST "http://127.0.0.1:8000/v1/memory/import" -H "Authorization: Bearer $SECOND" -H 'Content-Type: application/x-ndjson' --data-binary @$BENCH_DIR/export.jsonl)
echo "import, vectors kept: $(rate $COUNT $S)  $(python3 -c 'import json,sys;d=json.load(open(sys.argv[1]));print({k:d[k] for k in ("imported","vectorsKept","vectorsComputed","tookMs")})' $BENCH_DIR/import.json)"
S=$(timed curl -sf -o $BENCH_DIR/again.json -X POST "http://127.0.0.1:8000/v1/memory/import" -H "Authorization: Bearer $SECOND" -H 'Content-Type: application/x-ndjson' --data-binary @$BENCH_DIR/export.jsonl)
echo "the same import again (all already there): $(rate $COUNT $S)"
head -n "$COMPUTED" $BENCH_DIR/light.jsonl > $BENCH_DIR/light-part.jsonl
THIRD=$(organization third)
S=$(timed curl -sf -o $BENCH_DIR/computed.json -X POST "http://127.0.0.1:8000/v1/memory/import" -H "Authorization: Bearer $THIRD" -H 'Content-Type: application/x-ndjson' --data-binary @$BENCH_DIR/light-part.jsonl)
echo "import, vectors computed: $(rate $COMPUTED $S)"
echo "where the imports' time went (server log):"
grep -o 'import into organization [^ ]*: .*' $BENCH_DIR/serve2.log || true
