-- Snapshots of instances (taken on request, automatically as backups, or for safety before a
-- restore over live data): where they are, their state and their manifest's checksum.
CREATE TABLE snapshots (
  id               TEXT PRIMARY KEY,
  org_id           TEXT NOT NULL REFERENCES organizations (id),
  instance_id      TEXT NOT NULL,
  kind             TEXT NOT NULL,
  description      TEXT,
  status           TEXT NOT NULL,
  location         TEXT NOT NULL,
  created_at       BIGINT NOT NULL,
  completed_at     BIGINT,
  expires_at       BIGINT NOT NULL,
  files            INTEGER,
  bytes            BIGINT,
  manifest_sha256  TEXT,
  error            TEXT
);
CREATE INDEX snapshots_instance ON snapshots (instance_id, id);
CREATE INDEX snapshots_status ON snapshots (status, expires_at);
