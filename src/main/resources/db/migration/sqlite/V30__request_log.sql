-- Every model request of an organization (docs/inference.md, "The request log"): who sent it,
-- which model and deployment answered after how many attempts, how it ended, how long each part
-- took, what it used and cost, whether the cache answered, which memories went into it (ids and
-- scores, JSON) and, only where the organization turned it on, its messages and answer sealed with
-- ENGRAM_SECRET_KEY. Kept for the plan's retention (purged hourly).
CREATE TABLE request_log (
  id                 TEXT PRIMARY KEY,
  org_id             TEXT NOT NULL REFERENCES organizations (id),
  at                 BIGINT NOT NULL,
  route              TEXT NOT NULL,
  credential_id      TEXT,
  assistant_id       TEXT,
  agent              TEXT,
  model              TEXT NOT NULL,
  deployment         TEXT,
  attempts           INTEGER NOT NULL,
  status             INTEGER NOT NULL,
  error_code         TEXT,
  queue_ms           BIGINT NOT NULL,
  first_token_ms     BIGINT,
  total_ms           BIGINT NOT NULL,
  prompt_tokens      BIGINT NOT NULL,
  completion_tokens  BIGINT NOT NULL,
  memory_tokens      BIGINT NOT NULL,
  cost_nanos         BIGINT NOT NULL,
  cache              TEXT,
  memories           TEXT NOT NULL,
  messages_sealed    TEXT,
  answer_sealed      TEXT
);
CREATE INDEX request_log_by_org_and_time ON request_log (org_id, at, id);
