-- Fine-tuning: training files (their bytes live in the organization's default instance storage,
-- under training_data/), jobs run by one node at a time under a lease, their events and
-- checkpoints, as OpenAI's fine-tuning API shows them.
CREATE TABLE training_files (
  id           TEXT PRIMARY KEY,
  org_id       TEXT NOT NULL REFERENCES organizations (id),
  instance_id  TEXT NOT NULL,
  path         TEXT NOT NULL,
  filename     TEXT NOT NULL,
  purpose      TEXT NOT NULL,
  bytes        BIGINT NOT NULL,
  status       TEXT NOT NULL,
  examples     INTEGER NOT NULL DEFAULT 0,
  problems     TEXT,
  created_at   BIGINT NOT NULL,
  created_by   TEXT
);
CREATE INDEX training_files_org ON training_files (org_id, created_at, id);

CREATE TABLE fine_tuning_jobs (
  id                TEXT PRIMARY KEY,
  org_id            TEXT NOT NULL REFERENCES organizations (id),
  instance_id       TEXT NOT NULL,
  model             TEXT NOT NULL,
  training_file     TEXT NOT NULL,
  validation_file   TEXT,
  hyperparameters   TEXT NOT NULL,
  suffix            TEXT,
  seed              BIGINT NOT NULL,
  status            TEXT NOT NULL,
  fine_tuned_model  TEXT,
  trained_tokens    BIGINT,
  error_code        TEXT,
  error_message     TEXT,
  error_param       TEXT,
  cancel_requested  INTEGER NOT NULL DEFAULT 0,
  lease_owner       TEXT,
  lease_until       BIGINT,
  attempts          INTEGER NOT NULL DEFAULT 0,
  created_by        TEXT,
  created_at        BIGINT NOT NULL,
  started_at        BIGINT,
  finished_at       BIGINT,
  model_deleted     INTEGER NOT NULL DEFAULT 0,
  -- 'local' (this server's trainer) or 'upstream' (the upstream's fine-tuning API, mirrored)
  trainer           TEXT NOT NULL DEFAULT 'local',
  remote_job_id     TEXT,
  remote_event      TEXT
);
CREATE INDEX fine_tuning_jobs_org ON fine_tuning_jobs (org_id, created_at, id);
CREATE INDEX fine_tuning_jobs_status ON fine_tuning_jobs (status, created_at);

CREATE TABLE fine_tuning_events (
  id          TEXT PRIMARY KEY,
  job_id      TEXT NOT NULL REFERENCES fine_tuning_jobs (id),
  created_at  BIGINT NOT NULL,
  level       TEXT NOT NULL,
  type        TEXT NOT NULL,
  message     TEXT NOT NULL,
  data        TEXT
);
CREATE INDEX fine_tuning_events_job ON fine_tuning_events (job_id, created_at, id);

CREATE TABLE fine_tuning_checkpoints (
  id          TEXT PRIMARY KEY,
  job_id      TEXT NOT NULL REFERENCES fine_tuning_jobs (id),
  step        INTEGER NOT NULL,
  created_at  BIGINT NOT NULL,
  metrics     TEXT NOT NULL,
  UNIQUE (job_id, step)
);
