-- Inference usage: tokens per organization, credential, model and calendar hour (hour_start in Unix
-- milliseconds). The tokens-per-hour limit reads the organization's current hour from here, and the
-- usage route reports it. Rows are added to in place (ON CONFLICT ... DO UPDATE), so a table of
-- one row per key and hour stays small whatever the traffic.
CREATE TABLE inference_usage (
  org_id             TEXT NOT NULL REFERENCES organizations (id),
  credential_id      TEXT NOT NULL,
  model              TEXT NOT NULL,
  hour_start         BIGINT NOT NULL,
  requests           BIGINT NOT NULL,
  prompt_tokens      BIGINT NOT NULL,
  completion_tokens  BIGINT NOT NULL,
  memory_tokens      BIGINT NOT NULL,
  PRIMARY KEY (org_id, hour_start, credential_id, model)
);
