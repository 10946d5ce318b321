-- wrk script: retrieval with includeContext over varied questions (each one embedded, searched
-- lexically and by vector, ranked with activation, and written into a context block).
-- Usage: wrk -t2 -c8 -d30s -s bench/retrieve.lua -H "Authorization: Bearer $TOKEN" \
--        http://127.0.0.1:8000/v1/memory/retrieve
local subjects = {"Acme", "Globex", "Initech", "Umbrella", "Hooli", "Wonka", "Tyrell", "Aperture", "Oscorp", "Monarch"}
local topics = {
  "the enterprise plan", "invoices in euros", "single sign-on", "the analytics dashboard", "the renewal terms",
  "the audit log", "the Salesforce integration", "purchase order approvals", "the mobile app", "on-site training",
}
local forms = {
  "What does %s think about %s?", "Did %s ask about %s recently?", "Any problems at %s with %s?",
  "What is the status of %s and %s?",
}
local headers = {}
-- FILTERED=1: each retrieval is one of 10,000 end users' (bench/seed-100k.sh spreads half the
-- memories across them) with a metadata filter on one of ten teams. FILTERED=2: one of the end
-- users, without the filter (what the filter itself costs is the difference of the two).
local filtered = os.getenv("FILTERED") == "1"
local asUser = filtered or os.getenv("FILTERED") == "2"
-- TOKENS=<file>: each retrieval as one of the organizations whose memory tokens the file lists,
-- one a line (bench/seed-100k.sh with ORGS writes it), picked at random.
local tokens = {}
if os.getenv("TOKENS") then
  for line in io.lines(os.getenv("TOKENS")) do
    if #line > 0 then tokens[#tokens + 1] = line end
  end
end

init = function(args)
  for name, value in pairs(wrk.headers) do
    headers[name] = value
  end
  headers["Content-Type"] = "application/json"
  math.randomseed(os.time())
end

request = function()
  if #tokens > 0 then
    headers["Authorization"] = "Bearer " .. tokens[math.random(#tokens)]
  end
  local query = string.format(forms[math.random(#forms)], subjects[math.random(#subjects)],
    topics[math.random(#topics)])
  local narrowing = ""
  if filtered then
    narrowing = string.format(',"userId":"user-%d","filters":{"team":"team-%d"}',
      math.random(0, 9999), math.random(0, 9))
  elseif asUser then
    narrowing = string.format(',"userId":"user-%d"', math.random(0, 9999))
  end
  return wrk.format("POST", nil, headers,
    '{"query":"' .. query .. '","limit":10,"includeContext":true' .. narrowing .. '}')
end
