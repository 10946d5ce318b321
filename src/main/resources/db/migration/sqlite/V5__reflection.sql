-- Reflection: the processes that revisit an organization's memory. A run (reflection_runs) is the
-- audit of one pass: who or what started it, the settings in force, its counts. Each thing a run
-- did or proposed to one memory is a reflection_events row with the memory before and after, so
-- it can be explained and undone. reflection_flags holds the marks that are not states (stale,
-- conflict) while they are open; their history stays in reflection_events. reflection_leases
-- makes sure one organization is reflected on by one node at a time.
CREATE TABLE reflection_settings (
  org_id      TEXT PRIMARY KEY REFERENCES organizations (id),
  settings    TEXT NOT NULL,
  updated_at  INTEGER NOT NULL,
  updated_by  TEXT
);

CREATE TABLE reflection_runs (
  id             TEXT PRIMARY KEY,
  org_id         TEXT NOT NULL REFERENCES organizations (id),
  trigger        TEXT NOT NULL,
  credential_id  TEXT,
  user_id        TEXT,
  request_id     TEXT,
  dry_run        INTEGER NOT NULL,
  status         TEXT NOT NULL,
  settings       TEXT NOT NULL,
  node           TEXT NOT NULL,
  started_at     INTEGER NOT NULL,
  finished_at    INTEGER,
  examined       INTEGER NOT NULL,
  counts         TEXT,
  error          TEXT,
  undone_at      INTEGER,
  undone_by      TEXT
);
CREATE INDEX reflection_runs_org ON reflection_runs (org_id, started_at);

CREATE TABLE reflection_events (
  seq                INTEGER PRIMARY KEY AUTOINCREMENT,
  id                 TEXT NOT NULL UNIQUE,
  run_id             TEXT NOT NULL REFERENCES reflection_runs (id),
  org_id             TEXT NOT NULL,
  process            TEXT NOT NULL,
  change             TEXT NOT NULL,
  memory_id          TEXT NOT NULL REFERENCES memories (id),
  related_memory_id  TEXT,
  outcome            TEXT NOT NULL,
  reason             TEXT NOT NULL,
  before             TEXT,
  after              TEXT,
  at                 INTEGER NOT NULL,
  undone_at          INTEGER,
  undone_by          TEXT
);
CREATE INDEX reflection_events_org ON reflection_events (org_id, seq);
CREATE INDEX reflection_events_run ON reflection_events (run_id, seq);
CREATE INDEX reflection_events_memory ON reflection_events (memory_id);
CREATE INDEX reflection_events_related ON reflection_events (related_memory_id);

CREATE TABLE reflection_flags (
  memory_id          TEXT NOT NULL REFERENCES memories (id),
  kind               TEXT NOT NULL,
  related_memory_id  TEXT NOT NULL,
  org_id             TEXT NOT NULL,
  event_id           TEXT NOT NULL,
  raised_at          INTEGER NOT NULL,
  PRIMARY KEY (memory_id, kind, related_memory_id)
);
CREATE INDEX reflection_flags_org ON reflection_flags (org_id, kind);

CREATE TABLE reflection_leases (
  org_id      TEXT PRIMARY KEY,
  run_id      TEXT NOT NULL,
  holder      TEXT NOT NULL,
  expires_at  INTEGER NOT NULL
);

-- A merge copies the absorbed memory's uses onto the survivor; merged_from marks the copies so an
-- undo can take exactly those back.
ALTER TABLE memory_uses ADD COLUMN merged_from TEXT;
-- Reflection walks an organization's memories subject by subject.
CREATE INDEX memories_org_subject ON memories (org_id, subject, agent);
