-- Assistants and the versioned history of their capability sets. The assistant row holds the
-- current set and its version (the ETag); every version ever in force is kept in
-- assistant_capability_versions, so the set in force at any time can be answered and audited.
-- A deleted assistant keeps its row (deleted_at) and its history.
CREATE TABLE assistants (
  id                  TEXT PRIMARY KEY,
  org_id              TEXT NOT NULL REFERENCES organizations (id),
  name                TEXT NOT NULL,
  type                TEXT NOT NULL,
  owner_user_id       TEXT REFERENCES users (id),
  version             BIGINT NOT NULL,
  capabilities        TEXT NOT NULL,
  capability_configs  TEXT NOT NULL,
  created_by          TEXT,
  created_at          BIGINT NOT NULL,
  updated_at          BIGINT NOT NULL,
  deleted_at          BIGINT
);
CREATE INDEX assistants_org ON assistants (org_id, id);

CREATE TABLE assistant_capability_versions (
  assistant_id        TEXT NOT NULL REFERENCES assistants (id),
  version             BIGINT NOT NULL,
  capabilities        TEXT NOT NULL,
  capability_configs  TEXT NOT NULL,
  changed_at          BIGINT NOT NULL,
  actor_kind          TEXT NOT NULL,
  actor_credential_id TEXT,
  actor_user_id       TEXT,
  request_id          TEXT,
  PRIMARY KEY (assistant_id, version)
);
CREATE INDEX assistant_capability_versions_time ON assistant_capability_versions (assistant_id, changed_at);
