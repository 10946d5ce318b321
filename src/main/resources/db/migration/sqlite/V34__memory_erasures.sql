-- Erasures (docs/memory.md, "Erasure"): a request to forget an end user's (or one filter's)
-- memories everywhere Engram keeps them, run as a job (a node that dies mid-way leaves it to
-- another: lease_until), and its receipt (JSON: what each store removed, the erased memory ids, a
-- digest) once done. The selector is what was asked (JSON), the boundary its agent and end user.
CREATE TABLE memory_erasures (
  id             TEXT PRIMARY KEY,
  org_id         TEXT NOT NULL REFERENCES organizations (id),
  agent          TEXT,
  end_user_id    TEXT,
  selector       TEXT NOT NULL,
  status         TEXT NOT NULL,
  reason         TEXT,
  credential_id  TEXT,
  requested_at   BIGINT NOT NULL,
  completed_at   BIGINT,
  lease_until    BIGINT NOT NULL,
  receipt        TEXT,
  error          TEXT
);
CREATE INDEX memory_erasures_by_org ON memory_erasures (org_id, id);
CREATE INDEX memory_erasures_open ON memory_erasures (status, lease_until);

-- Each memory an erasure erased, written in the transaction that erased it: what its receipt
-- counts and digests, and what its verification checks again, even after the job was resumed.
CREATE TABLE memory_erasure_items (
  erasure_id  TEXT NOT NULL REFERENCES memory_erasures (id),
  memory_id   TEXT NOT NULL,
  PRIMARY KEY (erasure_id, memory_id)
);

-- Which end user a chat ran for (OpenAI's user field, X-Engram-User or a bound token), so that
-- erasing the user removes their conversation history, stored responses and logged messages.
ALTER TABLE conversation_exchanges ADD COLUMN end_user_id TEXT;
CREATE INDEX conversation_exchanges_by_end_user ON conversation_exchanges (org_id, end_user_id);
ALTER TABLE responses ADD COLUMN end_user_id TEXT;
CREATE INDEX responses_by_end_user ON responses (org_id, end_user_id);
ALTER TABLE request_log ADD COLUMN end_user_id TEXT;
CREATE INDEX request_log_by_end_user ON request_log (org_id, end_user_id);
