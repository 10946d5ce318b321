-- Who of the organization's signed-in users may read or write which paths of an instance's
-- storage: a rule per path (a file, or a folder ending in '/') and user; the most specific path
-- that covers a file decides.
CREATE TABLE storage_permissions (
  instance_id  TEXT NOT NULL,
  org_id       TEXT NOT NULL,
  path         TEXT NOT NULL,
  user_id      TEXT NOT NULL,
  permission   TEXT NOT NULL,
  updated_at   BIGINT NOT NULL,
  updated_by   TEXT,
  PRIMARY KEY (instance_id, path, user_id)
);
