-- End users and sessions (docs/memory.md, "End users and sessions"): a memory (and a business
-- event) may belong to one end user of the organization's app, and may say which session or
-- thread it came from. NULL end user: shared by the organization (or its agent). Not user_id,
-- which is the signed-in person who wrote the row.
ALTER TABLE memories ADD COLUMN end_user_id TEXT;
ALTER TABLE memories ADD COLUMN session_id TEXT;
CREATE INDEX memories_by_end_user ON memories (org_id, end_user_id, id);
ALTER TABLE business_events ADD COLUMN end_user_id TEXT;
ALTER TABLE business_events ADD COLUMN session_id TEXT;

-- A context token may be bound to one end user: it reads and writes that user's memories (and the
-- shared ones) and no other user's.
ALTER TABLE credentials ADD COLUMN end_user_id TEXT;
