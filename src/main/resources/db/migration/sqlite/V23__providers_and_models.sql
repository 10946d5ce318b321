-- Providers and routed models: where the gateway sends a model's requests. A row with org_id NULL
-- is the server's (the operator's, seen by every organization); otherwise the organization's own.
-- api_key and headers are sealed with ENGRAM_SECRET_KEY (SecretBox): a stolen database holds no
-- provider key. deployments is a JSON array of {id, provider_id, model, weight, priority}: a
-- model's deployments change together with it. routing_versions holds one row per scope ('' for
-- the server) bumped in the transaction of every change, so the other nodes see which scope to
-- reload on their next poll (and a delete, which leaves no row to poll for, is seen too).
CREATE TABLE inference_providers (
  id                 TEXT PRIMARY KEY,
  org_id             TEXT REFERENCES organizations (id),
  scope              TEXT NOT NULL,
  name               TEXT NOT NULL,
  kind               TEXT NOT NULL,
  base_url           TEXT NOT NULL,
  api_key            TEXT,
  headers            TEXT,
  api_version        TEXT,
  timeout_seconds    INTEGER,
  reply_limit_field  TEXT NOT NULL,
  created_at         BIGINT NOT NULL,
  updated_at         BIGINT NOT NULL,
  UNIQUE (scope, name)
);
CREATE TABLE inference_models (
  id                 TEXT PRIMARY KEY,
  org_id             TEXT REFERENCES organizations (id),
  scope              TEXT NOT NULL,
  model              TEXT NOT NULL,
  type               TEXT NOT NULL,
  context_length     INTEGER NOT NULL,
  capabilities       TEXT NOT NULL,
  input_price        REAL,
  output_price       REAL,
  strategy           TEXT NOT NULL,
  retries            INTEGER NOT NULL,
  deployments        TEXT NOT NULL,
  created_at         BIGINT NOT NULL,
  updated_at         BIGINT NOT NULL,
  UNIQUE (scope, model)
);
CREATE TABLE hidden_server_models (
  org_id  TEXT NOT NULL REFERENCES organizations (id),
  model   TEXT NOT NULL,
  PRIMARY KEY (org_id, model)
);
CREATE TABLE routing_versions (
  scope       TEXT PRIMARY KEY,
  version     BIGINT NOT NULL,
  updated_at  BIGINT NOT NULL
);
