#!/bin/bash
# S3 import/export throughput against the s3rver emulator: a file exported by a job (AWS SDK v2,
# whole signed bodies, 64 MiB multipart parts, read back to check) and imported back (ranged GET,
# SHA-256, fsync marks every 8 MB, rename into the instance), against the emulator's own speed
# with curl (PUT and GET of the same file, no SDK, no checks). Results: docs/benchmarks.md.
#   bash bench/object-store-bench.sh [size in MB, default 1024]
set -euo pipefail
cd "$(dirname "$0")/.."
MB=${1:-1024}
WORK=/tmp/object-store-bench
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64} MAVEN_OPTS="--sun-misc-unsafe-memory-access=allow"
rm -rf "$WORK" && mkdir -p "$WORK/s3"
PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT
rate() { python3 -c "import sys; print(f'{float(sys.argv[1]):.2f} s  {$MB/float(sys.argv[1]):.0f} MB/s')" "$1"; }
timed() { local start end; start=$(date +%s.%N); "$@" >/dev/null 2>&1; end=$(date +%s.%N); python3 -c "print($end-$start)"; }
json() { python3 -c "import sys,json;print(json.load(sys.stdin)$1)"; }

[[ -d emulators/node_modules ]] || (cd emulators && npm ci --no-audit --no-fund --loglevel=error)
emulators/node_modules/.bin/s3rver -d "$WORK/s3" -a 127.0.0.1 -p 4599 --configure-bucket engram-bench \
  > "$WORK/s3rver.log" 2>&1 & PIDS+=($!)
until curl -s -o /dev/null http://127.0.0.1:4599/; do sleep 0.2; done
head -c $((MB * 1024 * 1024)) /dev/urandom > "$WORK/source.bin"
sync

# s3rver checks a V4 request's key id and date, not its signature: enough for curl to reach it.
s3curl() {
  curl -sf -H "x-amz-content-sha256: UNSIGNED-PAYLOAD" -H "x-amz-date: $(date -u +%Y%m%dT%H%M%SZ)" \
    -H "Authorization: AWS4-HMAC-SHA256 Credential=S3RVER/$(date -u +%Y%m%d)/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0" "$@"
}
t=$(timed s3curl -T "$WORK/source.bin" http://127.0.0.1:4599/engram-bench/raw.bin)
echo "s3rver PUT (curl)       $(rate "$t")"
t=$(timed s3curl -o /dev/null http://127.0.0.1:4599/engram-bench/raw.bin)
echo "s3rver GET (curl)       $(rate "$t")"

export ENGRAM_DATA_DIR=$WORK/data ENGRAM_ADMIN_KEY=benchadminkey0123456789abcdef LOG_LEVEL=warning \
  ENGRAM_REFLECTION_SCHEDULER=false API_PORT=8124 ENGRAM_S3_ENDPOINT=http://127.0.0.1:4599
./engram build >/dev/null
"$JAVA_HOME/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -jar target/engram.jar serve \
  > "$WORK/engram.log" 2>&1 & PIDS+=($!)
until curl -sf http://127.0.0.1:8124/v1/health >/dev/null; do sleep 0.5; done
AUTH="Authorization: Bearer $ENGRAM_ADMIN_KEY"
BASE=http://127.0.0.1:8124
ORG=$(curl -s -X POST $BASE/v1/organizations -H "$AUTH" -H 'Content-Type: application/json' \
  -d '{"name":"Bench","plan":"scale"}' | json '["id"]')
NANO=$(curl -s $BASE/v1/organizations/$ORG/instances -H "$AUTH" | json '["data"][0]["id"]')
curl -sf -T "$WORK/source.bin" -H "$AUTH" -H 'Content-Type: application/octet-stream' \
  $BASE/v1/nano/$NANO/storage/files/results/big.bin >/dev/null
curl -sf -X POST $BASE/v1/nano/$NANO/storage/s3 -H "$AUTH" -H 'Content-Type: application/json' \
  -d '{"bucket":"engram-bench","region":"us-east-1","access_key_id":"S3RVER","secret_access_key":"S3RVER"}' >/dev/null

job() { # POST a job, wait for it to end; prints the seconds from request to end
  local route=$1 body=$2 start end location status
  start=$(date +%s.%N)
  location=$(curl -s -D - -o /dev/null -X POST "$BASE/v1/nano/$NANO/storage/$route" -H "$AUTH" \
    -H 'Content-Type: application/json' -d "$body" | tr -d '\r' | awk -F': ' 'tolower($1)=="location"{print $2}')
  while true; do
    status=$(curl -s "$BASE$location" -H "$AUTH" | json '["status"]')
    [[ $status == succeeded || $status == failed ]] && break
    sleep 0.05
  done
  end=$(date +%s.%N)
  [[ $status == succeeded ]] || { echo "job $route $status" >&2; curl -s "$BASE$location" -H "$AUTH" >&2; exit 1; }
  python3 -c "print($end-$start)"
}
t=$(job export '{"source":"results/big.bin","destination":"s3://engram-bench/exported/big.bin"}')
echo "Engram export job       $(rate "$t")"
t=$(job import '{"source":"s3://engram-bench/exported/big.bin","destination":"data/back.bin"}')
echo "Engram import job       $(rate "$t")"
curl -sf -o "$WORK/back.bin" -H "$AUTH" $BASE/v1/nano/$NANO/storage/files/data/back.bin
cmp "$WORK/source.bin" "$WORK/back.bin" && echo "bytes identical"
