-- An encode whose text and subject (normalized) match a durable memory of the same boundary
-- reinforces that memory instead of writing a second copy (docs/memory.md, "No duplicates"): the
-- digest of the normalized subject and text, looked up by organization. Memories written before
-- this version get theirs from a job at start (NULL until then).
ALTER TABLE memories ADD COLUMN text_digest TEXT;
CREATE INDEX memories_by_text_digest ON memories (org_id, text_digest);

-- What an encode of a near duplicate of a durable memory does (keep, merge or candidate), and the
-- similarity of the embeddings from which a memory is a near duplicate (docs/memory.md).
ALTER TABLE memory_settings ADD COLUMN near_duplicates TEXT;
ALTER TABLE memory_settings ADD COLUMN near_duplicate_similarity REAL;
