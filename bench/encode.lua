-- wrk script: encode a new memory per request, with varied text so each is embedded and indexed
-- for real. Usage: wrk -t2 -c8 -d30s -s bench/encode.lua -H "Authorization: Bearer $TOKEN" \
--                  http://127.0.0.1:8000/v1/memory
local subjects = {"Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark", "Wayne", "Wonka"}
local facts = {
  "renewed its contract for another year", "asked for a discount on the enterprise tier",
  "prefers invoices in euros", "reported a bug in the export feature", "moved its offices to Berlin",
  "hired a new head of procurement", "wants weekly status calls on Tuesdays", "uses single sign-on with Okta",
}
local headers = {}
local n = 0

init = function(args)
  for name, value in pairs(wrk.headers) do
    headers[name] = value
  end
  headers["Content-Type"] = "application/json"
  math.randomseed(os.time() + (args[1] and tonumber(args[1]) or 0))
end

request = function()
  n = n + 1
  local subject = subjects[math.random(#subjects)]
  local text = subject .. " " .. facts[math.random(#facts)] .. " (note " .. n .. "-" .. math.random(1000000) .. ")"
  return wrk.format("POST", nil, headers,
    '{"text":"' .. text .. '","subject":"' .. subject .. '","memoryKind":"fact"}')
end
