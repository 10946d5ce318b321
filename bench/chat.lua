-- wrk script: a chat completion request. Environment:
--   MODEL (default fake-model), STREAM ("true" to stream), AUTH (bearer secret), MEMORY ("off" sends X-Engram-Memory: off)
--   EXTRA_HEADERS: "name: value|name: value" (Portkey's routing headers)
--   QUERY: the user message (default a short greeting)
--   VARY ("true"): every request asks a different question (names, topics, companies and a ticket
--     number vary), so nothing cached can answer it: each one embeds and searches anew
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
local function body(text)
  return '{"model":"' .. model .. '","max_tokens":16,"messages":[{"role":"user","content":"' .. text .. '"}]'
    .. (stream and ',"stream":true' or '') .. '}'
end
wrk.body = body(query)

local vary = os.getenv("VARY") == "true"
local names = {"Dana", "Ana", "Luis", "Mei", "Omar", "Sara", "Ken", "Ivy", "Noah", "Lena"}
local topics = {"the enterprise plan", "single sign-on", "the last invoice", "the renewal", "data export",
  "the API limits", "onboarding", "the security review", "the SLA", "audit logs"}
local companies = {"Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark", "Wayne", "Wonka", "Tyrell", "Soylent"}
local counter = 0
function request()
  if not vary then return wrk.format(nil, nil, nil, wrk.body) end
  counter = counter + 1
  local q = string.format("What did %s ask about %s for %s (ticket %d)?",
    names[counter % #names + 1], topics[math.floor(counter / #names) % #topics + 1],
    companies[math.floor(counter / (#names * #topics)) % #companies + 1], 10000 + counter)
  return wrk.format(nil, nil, nil, body(q))
end

function done(summary, latency, requests)
  io.write(string.format("RESULT requests=%d errors=%d non2xx=%d rps=%.0f p50_us=%d p90_us=%d p99_us=%d\n",
    summary.requests, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.errors.status, summary.requests / (summary.duration / 1e6),
    latency:percentile(50), latency:percentile(90), latency:percentile(99)))
end
