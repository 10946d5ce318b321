-- The guardrails that fired on each request (docs/guardrails.md): their ids, phases, actions and
-- the kinds they found (JSON, never the text), and the memories a memory_injection guardrail left
-- out of the chat (JSON ids).
ALTER TABLE request_log ADD COLUMN guardrails TEXT NOT NULL DEFAULT '[]';
ALTER TABLE request_log ADD COLUMN memories_left_out TEXT NOT NULL DEFAULT '[]';
