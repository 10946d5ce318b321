-- Responses (POST /v1/responses) kept for previous_response_id and GET /v1/responses/{id}: the
-- whole conversation up to and including the answer (JSON messages), and the response object.
CREATE TABLE responses (
  id             TEXT PRIMARY KEY,
  org_id         TEXT NOT NULL REFERENCES organizations (id),
  credential_id  TEXT,
  conversation   TEXT NOT NULL,
  response       TEXT NOT NULL,
  created_at     BIGINT NOT NULL
);
CREATE INDEX responses_org ON responses (org_id, id);
