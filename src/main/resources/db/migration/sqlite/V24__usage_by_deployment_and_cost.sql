-- Inference usage by deployment, with its cost. deployment: the routed model's deployment that
-- answered ('' for a model that is not routed: in-process, uploaded, fine-tuned). cost_nanos: what
-- the requests cost at the model's prices, in billionths of a US dollar (0 when not priced). SQLite
-- cannot change a primary key in place: the table is rebuilt with its rows.
CREATE TABLE inference_usage_next (
  org_id             TEXT NOT NULL REFERENCES organizations (id),
  credential_id      TEXT NOT NULL,
  model              TEXT NOT NULL,
  deployment         TEXT NOT NULL DEFAULT '',
  hour_start         BIGINT NOT NULL,
  requests           BIGINT NOT NULL,
  prompt_tokens      BIGINT NOT NULL,
  completion_tokens  BIGINT NOT NULL,
  memory_tokens      BIGINT NOT NULL,
  errors             BIGINT NOT NULL DEFAULT 0,
  cost_nanos         BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (org_id, hour_start, credential_id, model, deployment)
);
INSERT INTO inference_usage_next (org_id, credential_id, model, deployment, hour_start, requests,
  prompt_tokens, completion_tokens, memory_tokens, errors, cost_nanos)
SELECT org_id, credential_id, model, '', hour_start, requests, prompt_tokens, completion_tokens,
  memory_tokens, errors, 0 FROM inference_usage;
DROP TABLE inference_usage;
ALTER TABLE inference_usage_next RENAME TO inference_usage;
