-- Organizations, their users, credentials (context tokens, API keys, account keys) and
-- signed-in sessions. Times are Unix milliseconds. Secrets are stored only as SHA-256 hashes.
CREATE TABLE organizations (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  plan        TEXT NOT NULL,
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL
);

CREATE TABLE users (
  id             TEXT PRIMARY KEY,
  org_id         TEXT NOT NULL REFERENCES organizations (id),
  email          TEXT NOT NULL,
  name           TEXT NOT NULL,
  role           TEXT NOT NULL,
  password_hash  TEXT,
  created_at     INTEGER NOT NULL,
  UNIQUE (org_id, email)
);
CREATE INDEX users_email ON users (email);

CREATE TABLE credentials (
  id           TEXT PRIMARY KEY,
  kind         TEXT NOT NULL,
  org_id       TEXT REFERENCES organizations (id),
  name         TEXT NOT NULL,
  secret_hash  TEXT NOT NULL UNIQUE,
  hint         TEXT NOT NULL,
  grants       TEXT NOT NULL,
  agents       TEXT,
  rate_limit   INTEGER,
  created_by   TEXT,
  created_at   INTEGER NOT NULL,
  expires_at   INTEGER,
  revoked_at   INTEGER
);
CREATE INDEX credentials_org_kind ON credentials (org_id, kind);

CREATE TABLE sessions (
  id           TEXT PRIMARY KEY,
  secret_hash  TEXT NOT NULL UNIQUE,
  csrf_hash    TEXT NOT NULL,
  user_id      TEXT NOT NULL REFERENCES users (id),
  org_id       TEXT NOT NULL REFERENCES organizations (id),
  created_at   INTEGER NOT NULL,
  expires_at   INTEGER NOT NULL,
  revoked_at   INTEGER
);
CREATE INDEX sessions_expiry ON sessions (expires_at);
