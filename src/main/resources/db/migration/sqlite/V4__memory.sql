-- Organization memory. The memories table is the system of record for every memory, its state
-- and a compact summary of its uses (recent_uses plus an aggregate of older ones), which is all
-- ranking needs; memory_uses keeps every use for audit and reflection. memory_transitions is the
-- state history that provenance shows. memory_changes is an append-only log of which memory
-- changed, from which each node keeps its Lucene index current and catches up after a restart.
CREATE TABLE memory_settings (
  org_id      TEXT PRIMARY KEY REFERENCES organizations (id),
  write_mode  TEXT NOT NULL,
  updated_at  INTEGER NOT NULL,
  updated_by  TEXT
);

CREATE TABLE business_events (
  id             TEXT PRIMARY KEY,
  org_id         TEXT NOT NULL REFERENCES organizations (id),
  agent          TEXT,
  type           TEXT NOT NULL,
  source         TEXT NOT NULL,
  subject        TEXT,
  text           TEXT NOT NULL,
  metadata       TEXT,
  staging        TEXT NOT NULL,
  credential_id  TEXT,
  user_id        TEXT,
  request_id     TEXT,
  received_at    INTEGER NOT NULL
);
CREATE INDEX business_events_org ON business_events (org_id, id);

CREATE TABLE memories (
  id                   TEXT PRIMARY KEY,
  org_id               TEXT NOT NULL REFERENCES organizations (id),
  agent                TEXT,
  text                 TEXT NOT NULL,
  subject              TEXT,
  memory_kind          TEXT NOT NULL,
  confidence           REAL NOT NULL,
  state                TEXT NOT NULL,
  source               TEXT NOT NULL,
  event_id             TEXT REFERENCES business_events (id),
  metadata             TEXT,
  credential_id        TEXT,
  user_id              TEXT,
  request_id           TEXT,
  idempotency_key      TEXT,
  occurred_at          INTEGER NOT NULL,
  created_at           INTEGER NOT NULL,
  updated_at           INTEGER NOT NULL,
  recent_uses          TEXT NOT NULL,
  older_use_count      INTEGER NOT NULL,
  older_use_weight     REAL NOT NULL,
  first_use_at         INTEGER NOT NULL,
  last_used_at         INTEGER NOT NULL,
  reinforcement_count  INTEGER NOT NULL,
  retrieval_count      INTEGER NOT NULL,
  embedding            BLOB NOT NULL
);
CREATE INDEX memories_org_state ON memories (org_id, state, id);
CREATE INDEX memories_event ON memories (event_id);

CREATE TABLE memory_uses (
  seq         INTEGER PRIMARY KEY AUTOINCREMENT,
  memory_id   TEXT NOT NULL REFERENCES memories (id),
  kind        TEXT NOT NULL,
  used_at     INTEGER NOT NULL,
  request_id  TEXT
);
CREATE INDEX memory_uses_memory ON memory_uses (memory_id, seq);

CREATE TABLE memory_transitions (
  seq            INTEGER PRIMARY KEY AUTOINCREMENT,
  memory_id      TEXT NOT NULL REFERENCES memories (id),
  from_state     TEXT,
  to_state       TEXT NOT NULL,
  action         TEXT NOT NULL,
  reason         TEXT,
  actor          TEXT,
  credential_id  TEXT,
  user_id        TEXT,
  request_id     TEXT,
  at             INTEGER NOT NULL
);
CREATE INDEX memory_transitions_memory ON memory_transitions (memory_id, seq);

CREATE TABLE memory_changes (
  seq         INTEGER PRIMARY KEY AUTOINCREMENT,
  memory_id   TEXT NOT NULL,
  changed_at  INTEGER NOT NULL
);
CREATE INDEX memory_changes_time ON memory_changes (changed_at);

-- One row per (organization, credential, Idempotency-Key): the request's hash and the response
-- it got, replayed to retries until expires_at.
CREATE TABLE memory_idempotency (
  org_id           TEXT NOT NULL,
  credential_id    TEXT NOT NULL,
  idempotency_key  TEXT NOT NULL,
  request_hash     TEXT NOT NULL,
  memory_id        TEXT NOT NULL,
  response         TEXT NOT NULL,
  created_at       INTEGER NOT NULL,
  expires_at       INTEGER NOT NULL,
  PRIMARY KEY (org_id, credential_id, idempotency_key)
);
CREATE INDEX memory_idempotency_expiry ON memory_idempotency (expires_at);
