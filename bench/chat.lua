-- wrk script: a chat completion request. Environment:
--   MODEL (default fake-model), STREAM ("true" to stream), AUTH (bearer secret), MEMORY ("off" sends X-Engram-Memory: off)
--   EXTRA_HEADERS: "name: value|name: value" (Portkey's routing headers)
--   QUERY: the user message (default a short greeting)
local model = os.getenv("MODEL") or "fake-model"
local stream = os.getenv("STREAM") == "true"
local query = os.getenv("QUERY") or "Hello, how are you today?"
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
if os.getenv("AUTH") then wrk.headers["Authorization"] = "Bearer " .. os.getenv("AUTH") end
if os.getenv("MEMORY") == "off" then wrk.headers["X-Engram-Memory"] = "off" end
for pair in string.gmatch(os.getenv("EXTRA_HEADERS") or "", "[^|]+") do
  local name, value = pair:match("^%s*([^:]+):%s*(.*)$")
  wrk.headers[name] = value
end
wrk.body = '{"model":"' .. model .. '","max_tokens":16,"messages":[{"role":"user","content":"' .. query .. '"}]'
  .. (stream and ',"stream":true' or '') .. '}'

function done(summary, latency, requests)
  io.write(string.format("RESULT requests=%d errors=%d non2xx=%d rps=%.0f p50_us=%d p90_us=%d p99_us=%d\n",
    summary.requests, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.errors.status, summary.requests / (summary.duration / 1e6),
    latency:percentile(50), latency:percentile(90), latency:percentile(99)))
end
