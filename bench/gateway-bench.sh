#!/bin/bash
# Gateway overhead benchmark: the same load tool (wrk, 1 thread, 16 connections) against
#   1. the fake upstream directly (bench/fake-upstream.mjs, loopback, answers at once),
#   2. Engram in front of it, memory off,
#   3. Portkey's open-source gateway (@portkey-ai/gateway from npm) in front of it,
#   4. Engram with memory on, the organization holding 10,000 memories, every request a different
#      question (VARY=true in bench/chat.lua: nothing cached can answer it),
#   5. Engram, memory off, on a routed model of the organization's own over two deployments of one
#      priority group (weighted): the fake upstream and a second one that answers 503 to every
#      tenth request (the gateway retries those on the other deployment), and the same over two
#      healthy deployments: two providers on the same fake upstream, so that the upstream side is
#      the single deployment's and only what the routing costs differs,
# then time to first chunk of streamed replies (bench/first-chunk.mjs) direct and through Engram.
# Portkey is installed into /tmp/portkey (not into the project). Results: docs/benchmarks.md.
#   bash bench/gateway-bench.sh [seconds per run, default 20]
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib/gateway.sh
SECONDS_PER_RUN=${1:-20}
PORTKEY_VERSION=1.15.2
bench_begin /tmp/gwbench

if [[ ! -f /tmp/portkey/node_modules/@portkey-ai/gateway/build/start-server.js ]]; then
  mkdir -p /tmp/portkey && (cd /tmp/portkey && npm init -y >/dev/null && npm install --no-audit --no-fund "@portkey-ai/gateway@$PORTKEY_VERSION" >/dev/null)
fi

fake_upstream 9100
fake_upstream 9101 10
(cd /tmp/portkey && exec node node_modules/@portkey-ai/gateway/build/start-server.js --port=8787 > "$WORK/portkey.log" 2>&1) & PIDS+=($!)

# Engram: one organization (plan scale: 100 concurrent requests, no hourly token cap) with 10,000 memories.
export ENGRAM_DATA_DIR=$WORK/data ENGRAM_ADMIN_KEY=benchadminkey0123456789abcdef LOG_LEVEL=warning \
  ENGRAM_REFLECTION_SCHEDULER=false ENGRAM_UPSTREAM_URL=http://127.0.0.1:9100/v1 ENGRAM_UPSTREAM_MODEL=fake-model \
  DEFAULT_MODEL=fake-model
./engram build >/dev/null
start_engram target/engram.jar
bench_organization
AUTH="Authorization: Bearer $ENGRAM_ADMIN_KEY"
# The organization's own route: two providers, one model over both.
provider() { curl -s -X POST "http://127.0.0.1:8000/v1/organizations/$ORG/providers" -H "$AUTH" \
  -H 'Content-Type: application/json' -d "{\"name\":\"$1\",\"kind\":\"openai\",\"base_url\":\"$2\"}" | json id; }
STEADY=$(provider steady http://127.0.0.1:9100/v1)
FLAKY=$(provider flaky http://127.0.0.1:9101/v1)
SECOND=$(provider second http://127.0.0.1:9100/v1)
curl -sf -o /dev/null -X POST "http://127.0.0.1:8000/v1/organizations/$ORG/models" -H "$AUTH" -H 'Content-Type: application/json' \
  -d "{\"id\":\"pair\",\"deployments\":[{\"provider_id\":\"$STEADY\",\"model\":\"fake-model\"},{\"provider_id\":\"$SECOND\",\"model\":\"fake-model\"}]}"
curl -sf -o /dev/null -X POST "http://127.0.0.1:8000/v1/organizations/$ORG/models" -H "$AUTH" -H 'Content-Type: application/json' \
  -d "{\"id\":\"fleet\",\"deployments\":[{\"provider_id\":\"$STEADY\",\"model\":\"fake-model\"},{\"provider_id\":\"$FLAKY\",\"model\":\"fake-model\"}]}"
stop_engram
seed_memories "$ORG" 10000
start_engram target/engram.jar
until curl -sf -o /dev/null -X POST http://127.0.0.1:8787/v1/chat/completions -H 'Content-Type: application/json' \
  -H 'x-portkey-provider: openai' -H 'x-portkey-custom-host: http://127.0.0.1:9100/v1' -H 'Authorization: Bearer sk-fake' \
  -d '{"model":"fake-model","messages":[{"role":"user","content":"hi"}]}'; do sleep 0.5; done

PORTKEY_HEADERS="x-portkey-provider: openai|x-portkey-custom-host: http://127.0.0.1:9100/v1"
load() { # name url [env...]
  local name=$1 url=$2; shift 2
  env "$@" wrk -t1 -c16 -d5s -s bench/chat.lua "$url" >/dev/null   # warm-up
  echo "$name $(env "$@" wrk -t1 -c16 -d${SECONDS_PER_RUN}s --latency -s bench/chat.lua "$url" | grep RESULT)"
}
# The JIT needs about half a minute of load before Engram's throughput settles.
AUTH=$KEY MEMORY=off wrk -t1 -c16 -d30s -s bench/chat.lua http://127.0.0.1:8000/v1/chat/completions >/dev/null
AUTH=$KEY MEMORY=off STREAM=true wrk -t1 -c16 -d10s -s bench/chat.lua http://127.0.0.1:8000/v1/chat/completions >/dev/null
echo "# non-streamed chat completions, wrk -t1 -c16 -d${SECONDS_PER_RUN}s"
# The three memory-off variants take turns at each position (a run's place in the round moves its
# figure more than what separates them: docs/benchmarks.md), over ROUNDS rounds (default 3).
off() { load "engram-off   " http://127.0.0.1:8000/v1/chat/completions AUTH=$KEY MEMORY=off; }
routed() { load "engram-routed" http://127.0.0.1:8000/v1/chat/completions AUTH=$KEY MEMORY=off MODEL=fleet; }
pair() { load "engram-pair  " http://127.0.0.1:8000/v1/chat/completions AUTH=$KEY MEMORY=off MODEL=pair; }
ORDERS=("off routed pair" "routed pair off" "pair off routed")
for round in $(seq 1 "${ROUNDS:-3}"); do
  load "direct       " http://127.0.0.1:9100/v1/chat/completions
  for variant in ${ORDERS[$(( (round - 1) % 3 ))]}; do $variant; done
  load "portkey      " http://127.0.0.1:8787/v1/chat/completions AUTH=sk-fake "EXTRA_HEADERS=$PORTKEY_HEADERS"
  load "engram-memory" http://127.0.0.1:8000/v1/chat/completions AUTH=$KEY VARY=true
done
curl -s -D - -o /dev/null http://127.0.0.1:8000/v1/chat/completions -H "Authorization: Bearer $KEY" -H 'Content-Type: application/json' \
  -d '{"model":"fake-model","messages":[{"role":"user","content":"What did Dana ask about the enterprise plan for Acme?"}]}' \
  | grep -i 'x-engram-memory' | sed 's/^/memory on: /'
# Guardrails (issue 66): the same chat with a 4 KB prompt, the organization's input and output
# guardrails (personal data and secrets, redact) off and on in turns; the difference is what they add.
echo "# guardrails: a 4 KB prompt, memory off, without and with pii + secrets on input and output"
LONG=$(for i in $(seq 1 60); do printf 'We shipped 1204 units in Q3 and the margin held at 31.5 percent, said the team. '; done | head -c 4096)
guardrail() { curl -sf -X POST "http://127.0.0.1:8000/v1/organizations/$ORG/guardrails" -H "$AUTH" -H 'Content-Type: application/json' \
  -d "{\"name\":\"bench $1\",\"applies_to\":[\"input\",\"output\"],\"check\":{\"type\":\"$1\"},\"action\":\"redact\"}" | json id; }
switch_guardrails() { for id in $GUARD_PII $GUARD_KEYS; do curl -sf -o /dev/null -X PATCH "http://127.0.0.1:8000/v1/organizations/$ORG/guardrails/$id" \
  -H "$AUTH" -H 'Content-Type: application/json' -d "{\"enabled\":$1}"; done; }
GUARD_PII=$(guardrail pii)
GUARD_KEYS=$(guardrail secrets)
for round in 1 2 3; do
  switch_guardrails false
  load "engram-4kb   " http://127.0.0.1:8000/v1/chat/completions AUTH=$KEY MEMORY=off "QUERY=$LONG"
  switch_guardrails true
  load "engram-guards" http://127.0.0.1:8000/v1/chat/completions AUTH=$KEY MEMORY=off "QUERY=$LONG"
done
switch_guardrails false
echo "# streamed, time to first chunk, 5000 requests at concurrency 16"
for round in 1 2; do
  echo "direct      $(node bench/first-chunk.mjs http://127.0.0.1:9100/v1 5000 16)"
  echo "engram-off  $(node bench/first-chunk.mjs http://127.0.0.1:8000/v1 5000 16 "$KEY")"
done
echo "portkey     $(node bench/first-chunk.mjs http://127.0.0.1:8787/v1 5000 16 sk-fake fake-model "$PORTKEY_HEADERS" 2>&1 | tail -1)"
