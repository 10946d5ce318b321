-- An encode whose text and subject (normalized) match a durable memory of the same boundary
-- reinforces that memory instead of writing a second copy (docs/memory.md, "No duplicates"): the
-- digest of the normalized subject and text, looked up by organization. Memories written before
-- this version get theirs from a job at start (NULL until then).
ALTER TABLE memories ADD COLUMN text_digest TEXT;
CREATE INDEX memories_by_text_digest ON memories (org_id, text_digest);
