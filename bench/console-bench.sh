#!/bin/bash
# Console page loads with 10,000 memories: starts Engram on a fresh data directory, seeds an
# organization (an owner, an assistant, 10,000 memories through the API), then loads each console
# page 10 times in headless Chromium (bench/console-load.mjs) and prints median and worst.
#   bash bench/console-bench.sh [path to engram.jar, default target/engram.jar]
# Needs chromium, chromium-driver and node. Results: docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
JAR=${1:-target/engram.jar}
export JAVA_HOME=${JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
DATA=$(mktemp -d /tmp/engram-console-bench.XXXX)
PORT=8017
export ENGRAM_DATA_DIR=$DATA ENGRAM_ADMIN_KEY=benchadminkey0123456789abcdef API_PORT=$PORT \
  RATE_LIMIT_REQUESTS=1000000 LOG_LEVEL=warning
"$JAVA_HOME/bin/java" --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED -jar "$JAR" serve \
  > "$DATA/serve.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true; rm -rf "$DATA"' EXIT
B=http://127.0.0.1:$PORT
until curl -sf $B/v1/health >/dev/null; do kill -0 $PID 2>/dev/null || { cat "$DATA/serve.log"; exit 1; }; sleep 0.5; done
A="Authorization: Bearer $ENGRAM_ADMIN_KEY"; J='Content-Type: application/json'
ORG=$(curl -sf $B/v1/organizations -H "$A" -H "$J" -d '{"name":"Bench","plan":"growth"}' | jq -r .id)
curl -sf $B/v1/organizations/$ORG/users -H "$A" -H "$J" \
  -d '{"email":"owner@bench.example","role":"owner","password":"a long bench passphrase"}' >/dev/null
TOKEN=$(curl -sf $B/v1/organizations/$ORG/tokens -H "$A" -H "$J" \
  -d '{"name":"seed","scopes":["memory:read","memory:write"]}' | jq -r .token)
KEY=$(curl -sf $B/v1/organizations/$ORG/api-keys -H "$A" -H "$J" -d '{"name":"seed","permissions":["admin"]}' | jq -r .token)
curl -sf $B/api/assistants -H "Authorization: Bearer $KEY" -H "$J" -d '{"name":"Bench desk","type":"org_shared"}' >/dev/null
echo "seeding 10,000 memories..."
node --input-type=module -e '
const [base, token] = process.argv.slice(1);
const words = ["report","meeting","budget","Berlin","customer","invoice","launch","review","Friday","design","contract","hiring"];
let next = 0;
async function worker() {
  while (next < 10000) {
    const i = next++;
    const text = `Memory ${i}: the ${words[i % 12]} for ${words[(i * 7) % 12]} moved to ${words[(i * 5) % 12]} week ${i % 52}`;
    const r = await fetch(base + "/v1/memory", {method: "POST", headers: {"Authorization": "Bearer " + token,
      "Content-Type": "application/json"}, body: JSON.stringify({text})});
    if (r.status !== 201) throw new Error(await r.text());
  }
}
await Promise.all(Array.from({length: 8}, worker));
' "$B" "$TOKEN"
node bench/console-load.mjs "$B" owner@bench.example "a long bench passphrase" "${LOADS:-10}"
