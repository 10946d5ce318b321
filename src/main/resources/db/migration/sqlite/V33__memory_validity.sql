-- Time (docs/memory.md, "Time"): when a memory expires (housekeeping tombstones it then, and
-- retrieval never returns it after), the time it holds for ([valid_from, valid_until); NULL: open),
-- and the memory it replaced (whose valid_until it closed at its own valid_from). Milliseconds.
ALTER TABLE memories ADD COLUMN expires_at BIGINT;
ALTER TABLE memories ADD COLUMN valid_from BIGINT;
ALTER TABLE memories ADD COLUMN valid_until BIGINT;
ALTER TABLE memories ADD COLUMN supersedes TEXT;
CREATE INDEX memories_by_expiry ON memories (expires_at);

-- A default time to live per memory kind, per organization (JSON: kind id to seconds): an encode
-- of that kind without its own expiresAt expires that long after it is written.
ALTER TABLE memory_settings ADD COLUMN ttl_by_kind TEXT;
