-- An organization's own configuration (PATCH /config): the fields it set, as grouped JSON, and a
-- version that goes up with each change. Nodes poll updated_at to see each other's changes.
CREATE TABLE organization_config (
  org_id      TEXT PRIMARY KEY REFERENCES organizations (id),
  overrides   TEXT NOT NULL,
  version     BIGINT NOT NULL,
  updated_at  BIGINT NOT NULL,
  updated_by  TEXT
);
CREATE INDEX organization_config_updated ON organization_config (updated_at);

-- What was changed in an organization's settings, by whom, from which request.
CREATE TABLE organization_audit (
  id             TEXT PRIMARY KEY,
  org_id         TEXT NOT NULL REFERENCES organizations (id),
  at             BIGINT NOT NULL,
  action         TEXT NOT NULL,
  credential_id  TEXT,
  request_id     TEXT,
  detail         TEXT NOT NULL
);
CREATE INDEX organization_audit_org ON organization_audit (org_id, id);

-- The fingerprint of the key that seals stored secrets: a node with another key refuses to start.
CREATE TABLE secret_key_check (
  id           INTEGER PRIMARY KEY,
  fingerprint  TEXT NOT NULL
);

-- An organization's environment variables, in two of the spec's layers: 'organization' (set by
-- the organization) and 'runtime' (overrides set by the operator). Values of secret-looking names
-- are sealed with the server's secret key (sealed = 1).
CREATE TABLE organization_variables (
  org_id      TEXT NOT NULL REFERENCES organizations (id),
  layer       TEXT NOT NULL,
  name        TEXT NOT NULL,
  value       TEXT NOT NULL,
  sealed      INTEGER NOT NULL,
  updated_at  BIGINT NOT NULL,
  updated_by  TEXT,
  PRIMARY KEY (org_id, layer, name)
);
