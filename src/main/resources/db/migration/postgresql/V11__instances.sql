-- An organization's instances (nano_...): each owns a storage space and the instance layer of the
-- organization's environment variables. Exactly one live instance per organization is its default:
-- the one whose variables apply to the organization's requests.
CREATE TABLE instances (
  id            TEXT PRIMARY KEY,
  org_id        TEXT NOT NULL REFERENCES organizations (id),
  name          TEXT NOT NULL,
  status        TEXT NOT NULL,
  is_default    INTEGER NOT NULL,
  created_at    BIGINT NOT NULL,
  created_by    TEXT,
  updated_at    BIGINT NOT NULL,
  restarted_at  BIGINT
);
CREATE UNIQUE INDEX instances_name ON instances (org_id, name) WHERE status <> 'deleting';
CREATE UNIQUE INDEX instances_one_default ON instances (org_id) WHERE is_default = 1;
CREATE INDEX instances_org ON instances (org_id, id);

-- The instance layer of environment variables: 'active' values are in force; 'pending' ones wait
-- for the instance's restart (a NULL pending value removes the variable then).
CREATE TABLE instance_variables (
  instance_id  TEXT NOT NULL,
  org_id       TEXT NOT NULL,
  stage        TEXT NOT NULL,
  name         TEXT NOT NULL,
  value        TEXT,
  sealed       INTEGER NOT NULL,
  updated_at   BIGINT NOT NULL,
  updated_by   TEXT,
  PRIMARY KEY (instance_id, stage, name)
);
CREATE INDEX instance_variables_org ON instance_variables (org_id);

-- Files of an instance's storage: the row is the file (its bytes are the blob it names, written
-- whole and fsynced before the row points at it).
CREATE TABLE storage_files (
  instance_id  TEXT NOT NULL,
  org_id       TEXT NOT NULL,
  path         TEXT NOT NULL,
  data_class   TEXT NOT NULL,
  size         BIGINT NOT NULL,
  sha256       TEXT NOT NULL,
  blob         TEXT NOT NULL,
  content_type TEXT,
  created_at   BIGINT NOT NULL,
  updated_at   BIGINT NOT NULL,
  updated_by   TEXT,
  PRIMARY KEY (instance_id, path)
);
CREATE INDEX storage_files_org ON storage_files (org_id, data_class);

-- Who did what to which path of an instance's storage, when, with how many bytes and what result.
CREATE TABLE storage_log (
  id           TEXT PRIMARY KEY,
  org_id       TEXT NOT NULL,
  instance_id  TEXT NOT NULL,
  at           BIGINT NOT NULL,
  actor        TEXT,
  action       TEXT NOT NULL,
  path         TEXT,
  bytes        BIGINT,
  result       TEXT NOT NULL,
  request_id   TEXT
);
CREATE INDEX storage_log_instance ON storage_log (instance_id, id);
