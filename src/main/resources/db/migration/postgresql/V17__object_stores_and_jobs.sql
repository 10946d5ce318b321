-- External object stores an instance connects (S3 buckets, Cloud Storage buckets, Azure
-- containers): what is shown about them, and their secrets sealed with the server's key.
CREATE TABLE object_stores (
  id           TEXT PRIMARY KEY,
  org_id       TEXT NOT NULL REFERENCES organizations (id),
  instance_id  TEXT NOT NULL,
  provider     TEXT NOT NULL,
  bucket       TEXT NOT NULL,
  settings     TEXT NOT NULL,
  secret       TEXT NOT NULL,
  created_at   BIGINT NOT NULL,
  updated_at   BIGINT NOT NULL,
  created_by   TEXT,
  UNIQUE (instance_id, provider, bucket)
);
CREATE INDEX object_stores_org ON object_stores (org_id, provider, bucket);

-- Import, export and copy jobs: planned once into items, run by one node at a time (the lease),
-- resumed item by item (and byte by byte for a download) after a stop.
CREATE TABLE storage_jobs (
  id                    TEXT PRIMARY KEY,
  org_id                TEXT NOT NULL REFERENCES organizations (id),
  instance_id           TEXT NOT NULL,
  kind                  TEXT NOT NULL,
  source                TEXT NOT NULL,
  destination           TEXT NOT NULL,
  destination_instance  TEXT,
  status                TEXT NOT NULL,
  planned               INTEGER NOT NULL DEFAULT 0,
  files_total           INTEGER NOT NULL DEFAULT 0,
  files_done            INTEGER NOT NULL DEFAULT 0,
  bytes_total           BIGINT NOT NULL DEFAULT 0,
  bytes_done            BIGINT NOT NULL DEFAULT 0,
  attempts              INTEGER NOT NULL DEFAULT 0,
  error_code            TEXT,
  error_message         TEXT,
  requested_by          TEXT,
  created_at            BIGINT NOT NULL,
  started_at            BIGINT,
  finished_at           BIGINT,
  updated_at            BIGINT NOT NULL,
  lease_owner           TEXT,
  lease_until           BIGINT
);
CREATE INDEX storage_jobs_instance ON storage_jobs (instance_id, id);
CREATE INDEX storage_jobs_status ON storage_jobs (status, lease_until);

CREATE TABLE storage_job_items (
  job_id        TEXT NOT NULL,
  seq           INTEGER NOT NULL,
  source        TEXT NOT NULL,
  destination   TEXT NOT NULL,
  bytes         BIGINT NOT NULL,
  status        TEXT NOT NULL,
  bytes_done    BIGINT NOT NULL DEFAULT 0,
  sha256        TEXT,
  PRIMARY KEY (job_id, seq)
);
