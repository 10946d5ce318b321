#!/bin/bash
# TLS listener benchmark (issue 24): one Engram with API_PORT=8000 and API_TLS_PORT=8443 (its
# self-signed certificate), measured with h2load (Debian's nghttp2-client) and openssl:
#   1. requests/s over plain HTTP/1.1 (h2load --h1, 16 connections, kept alive),
#   2. requests/s over TLS 1.3 + HTTP/2 (h2load, 16 connections, 10 streams each),
#   3. requests/s over TLS 1.3 + HTTP/1.1 (h2load --h1 to the TLS port),
#   4. full TLS 1.3 handshakes per second (openssl s_time -new), and connect-and-ask on a new
#      connection each time over TLS against plain (h2load with 1 request per connection).
# Each run asks GET /v1/models with an API key (authenticated: the organization's allowlist and
# connection claim are on the path). Results: docs/benchmarks.md.
#   bash bench/tls-bench.sh [requests per run, default 200000]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-200000}
WORK=/tmp/tlsbench
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64} MAVEN_OPTS="--sun-misc-unsafe-memory-access=allow"
command -v h2load >/dev/null || { echo "h2load is required (apt-get install nghttp2-client)"; exit 1; }
rm -rf "$WORK" && mkdir -p "$WORK"
ENGRAM=
trap '[[ -n "$ENGRAM" ]] && kill $ENGRAM 2>/dev/null || true' EXIT
export ENGRAM_DATA_DIR=$WORK/data ENGRAM_ADMIN_KEY=benchadminkey0123456789abcdef LOG_LEVEL=warning \
  ENGRAM_REFLECTION_SCHEDULER=false API_TLS_PORT=8443
./engram build >/dev/null
"$JAVA_HOME/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -jar target/engram.jar \
  serve > "$WORK/engram.log" 2>&1 & ENGRAM=$!
until curl -sf http://127.0.0.1:8000/v1/health >/dev/null; do
  kill -0 $ENGRAM 2>/dev/null || { cat "$WORK/engram.log"; exit 1; }
  sleep 0.5
done
ORG=$(curl -sf -H "Authorization: Bearer $ENGRAM_ADMIN_KEY" -H 'Content-Type: application/json' \
  -d '{"name":"bench","plan":"scale"}' http://127.0.0.1:8000/v1/organizations | sed 's/.*"id":"\([^"]*\)".*/\1/')
KEY=$(curl -sf -H "Authorization: Bearer $ENGRAM_ADMIN_KEY" -H 'Content-Type: application/json' \
  -d '{"name":"bench","permissions":["inference"],"rate_limit":1000000}' \
  http://127.0.0.1:8000/v1/organizations/$ORG/api-keys | sed 's/.*"token":"\([^"]*\)".*/\1/')
AUTH="Authorization: Bearer $KEY"
summary() { grep -E "^finished in|requests: |TLS Protocol|Application protocol|time for request" ; }

echo "== warm-up"
h2load -n 50000 -c 16 -m 10 -H "$AUTH" https://127.0.0.1:8443/v1/models >/dev/null
h2load --h1 -n 50000 -c 16 -H "$AUTH" http://127.0.0.1:8000/v1/models >/dev/null
echo "== plain HTTP/1.1, 16 connections"
h2load --h1 -n "$N" -c 16 -H "$AUTH" http://127.0.0.1:8000/v1/models | summary
echo "== TLS 1.3 + HTTP/2, 16 connections x 10 streams"
h2load -n "$N" -c 16 -m 10 -H "$AUTH" https://127.0.0.1:8443/v1/models | summary
echo "== TLS 1.3 + HTTP/1.1, 16 connections"
h2load --h1 -n "$N" -c 16 -H "$AUTH" https://127.0.0.1:8443/v1/models | summary
echo "== full TLS 1.3 handshakes (openssl s_time -new, 10 s)"
openssl s_time -connect 127.0.0.1:8443 -new -time 10 2>&1 | grep -E "connections in|connections/user sec"
echo "== a new connection per request: 800 connections (the plan allows 1000), one request each, plain HTTP/1.1 against TLS 1.3 + HTTP/2"
for url in http://127.0.0.1:8000/v1/models https://127.0.0.1:8443/v1/models; do
  flags=(); [[ $url == http:* ]] && flags=(--h1)

  h2load "${flags[@]}" -n 800 -c 800 -t 1 -H "$AUTH" "$url" | summary

done
