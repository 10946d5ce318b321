-- An organization's retention policies (the spec's fields, as JSON), replaced whole by
-- POST /retention, and when they last ran.
CREATE TABLE retention_policies (
  org_id       TEXT PRIMARY KEY REFERENCES organizations (id),
  policies     TEXT NOT NULL,
  updated_at   BIGINT NOT NULL,
  updated_by   TEXT,
  last_run_at  BIGINT
);
