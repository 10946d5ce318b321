-- wrk script: PATCH an assistant's capabilities, alternating between two valid sets so every
-- request writes a new version (validation, compare-and-set update and version insert each time).
-- Usage: wrk ... -s bench/patch-capabilities.lua -H "Authorization: Bearer $KEY" \
--          http://127.0.0.1:8000/api/assistants/$ASSISTANT/capabilities
local bodies = {
  '{"capabilities":["answer_questions","create_orders","track_orders"],"capabilityConfigs":' ..
    '{"create_orders":{"allowedOrderTypes":["purchase","restock"],"maxOrdersPerDay":25,"requiresApproval":true}}}',
  '{"capabilities":["answer_questions","create_orders","manage_tasks"],"capabilityConfigs":' ..
    '{"create_orders":{"allowedOrderTypes":["purchase"],"maxOrdersPerDay":40,"requiresApproval":false}}}',
}
local n = 0

-- wrk.format uses only the headers it is given, so the -H headers (Authorization) are copied in.
local headers = {}

init = function()
  for name, value in pairs(wrk.headers) do
    headers[name] = value
  end
  headers["Content-Type"] = "application/json"
end

request = function()
  n = n + 1
  return wrk.format("PATCH", nil, headers, bodies[(n % 2) + 1])
end
