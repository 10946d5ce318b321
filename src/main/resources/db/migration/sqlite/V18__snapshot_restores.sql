-- The journal of restores over live data: written (running) before the first change, completed in
-- the transaction that puts the organization's rows back. A node that stops part way finishes a
-- running restore at its next start, so a restore is never left half applied.
CREATE TABLE snapshot_restores (
  id                  TEXT PRIMARY KEY,
  org_id              TEXT NOT NULL REFERENCES organizations (id),
  instance_id         TEXT NOT NULL,
  snapshot_id         TEXT NOT NULL,
  safety_snapshot_id  TEXT,
  status              TEXT NOT NULL,
  requested_by        TEXT,
  started_at          BIGINT NOT NULL,
  finished_at         BIGINT,
  files_written       INTEGER,
  files_removed       INTEGER,
  rows_restored       INTEGER,
  error               TEXT
);
CREATE INDEX snapshot_restores_status ON snapshot_restores (status);
-- One restore over live data at a time per instance.
CREATE UNIQUE INDEX snapshot_restores_running ON snapshot_restores (instance_id) WHERE status = 'running';
