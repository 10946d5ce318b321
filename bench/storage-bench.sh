#!/bin/bash
# Instance storage throughput against the raw disk: a 1 GB file written and read by dd (with
# fsync, as Engram's uploads are), then uploaded (PUT, streamed, SHA-256, fsync, atomic rename)
# and downloaded (GET) through Engram with curl, on the same disk. Results: docs/benchmarks.md.
#   bash bench/storage-bench.sh [size in MB, default 1024]
set -euo pipefail
cd "$(dirname "$0")/.."
MB=${1:-1024}
WORK=/tmp/storage-bench
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64} MAVEN_OPTS="--sun-misc-unsafe-memory-access=allow"
rm -rf "$WORK" && mkdir -p "$WORK"
PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT
seconds() { python3 -c "import sys; print(f'{float(sys.argv[1]):.2f}')" "$1"; }
rate() { python3 -c "import sys; print(f'{$MB/float(sys.argv[1]):.0f} MB/s')" "$1"; }
timed() { local start end; start=$(date +%s.%N); "$@" >/dev/null 2>&1; end=$(date +%s.%N); python3 -c "print($end-$start)"; }

head -c $((MB * 1024 * 1024)) /dev/urandom > "$WORK/source.bin"
sync
t=$(timed dd if="$WORK/source.bin" of="$WORK/dd.bin" bs=1M conv=fsync)
echo "dd write (fsync)      $(seconds "$t") s  $(rate "$t")"
cold() { sync; echo 3 > /proc/sys/vm/drop_caches 2>/dev/null || echo "(page cache not dropped: not root)"; }
cold
t=$(timed dd if="$WORK/dd.bin" of=/dev/null bs=1M)
echo "dd read (cold cache)  $(seconds "$t") s  $(rate "$t")"
rm -f "$WORK/dd.bin"

export ENGRAM_DATA_DIR=$WORK/data ENGRAM_ADMIN_KEY=benchadminkey0123456789abcdef LOG_LEVEL=warning \
  ENGRAM_REFLECTION_SCHEDULER=false API_PORT=8123
./engram build >/dev/null
"$JAVA_HOME/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -jar target/engram.jar serve \
  > "$WORK/engram.log" 2>&1 & PIDS+=($!)
until curl -sf http://127.0.0.1:8123/v1/health >/dev/null; do sleep 0.5; done
AUTH="Authorization: Bearer $ENGRAM_ADMIN_KEY"
json() { python3 -c "import sys,json;print(json.load(sys.stdin)$1)"; }
ORG=$(curl -s -X POST http://127.0.0.1:8123/v1/organizations -H "$AUTH" -H 'Content-Type: application/json' \
  -d '{"name":"Bench","plan":"scale"}' | json '["id"]')
NANO=$(curl -s http://127.0.0.1:8123/v1/organizations/$ORG/instances -H "$AUTH" | json '["data"][0]["id"]')
URL=http://127.0.0.1:8123/v1/nano/$NANO/storage/files/data/big.bin
t=$(timed curl -sf -T "$WORK/source.bin" -H "$AUTH" -H 'Content-Type: application/octet-stream' "$URL")
echo "Engram upload (PUT)   $(seconds "$t") s  $(rate "$t")"
cold
t=$(timed curl -sf -o /dev/null -H "$AUTH" "$URL")
echo "Engram download (GET, cold cache) $(seconds "$t") s  $(rate "$t")"
curl -sf -o "$WORK/back.bin" -H "$AUTH" "$URL"
cmp "$WORK/source.bin" "$WORK/back.bin" && echo "bytes identical"
echo "engram heap after: $(jcmd $(pgrep -f 'engram.jar serve' | head -1) GC.heap_info 2>/dev/null | grep -m1 'used' || true)"
