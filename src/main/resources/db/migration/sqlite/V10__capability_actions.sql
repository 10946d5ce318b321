-- Action bridges: where an organization's own systems carry out a capability (one per capability),
-- each with a signing secret (sealed) and a timeout.
CREATE TABLE action_bridges (
  id              TEXT PRIMARY KEY,
  org_id          TEXT NOT NULL REFERENCES organizations (id),
  capability_id   TEXT NOT NULL,
  url             TEXT NOT NULL,
  secret          TEXT NOT NULL,
  timeout_millis  INTEGER NOT NULL,
  created_at      BIGINT NOT NULL,
  created_by      TEXT
);
CREATE UNIQUE INDEX action_bridges_one_per_capability ON action_bridges (org_id, capability_id);

-- Every execution of a capability a model asked for: carried out, refused, waiting for approval,
-- approved, rejected or failed. One per tool call id and assistant: a retried chat reads the
-- first outcome instead of acting twice.
CREATE TABLE capability_executions (
  id              TEXT PRIMARY KEY,
  org_id          TEXT NOT NULL REFERENCES organizations (id),
  assistant_id    TEXT NOT NULL,
  capability_id   TEXT NOT NULL,
  set_version     BIGINT NOT NULL,
  tool_call_id    TEXT NOT NULL,
  arguments       TEXT NOT NULL,
  status          TEXT NOT NULL,
  result          TEXT,
  reason          TEXT,
  credential_id   TEXT,
  request_id      TEXT,
  created_at      BIGINT NOT NULL,
  decided_by      TEXT,
  decided_at      BIGINT
);
CREATE UNIQUE INDEX capability_executions_call ON capability_executions (org_id, assistant_id, tool_call_id);
CREATE INDEX capability_executions_org ON capability_executions (org_id, id);
CREATE INDEX capability_executions_status ON capability_executions (org_id, status, id);

-- Counted uses of a capability per assistant per UTC day (maxOrdersPerDay): a conditional
-- increment, exact across nodes.
CREATE TABLE capability_daily_counts (
  org_id          TEXT NOT NULL,
  assistant_id    TEXT NOT NULL,
  capability_id   TEXT NOT NULL,
  day             TEXT NOT NULL,
  used            INTEGER NOT NULL,
  PRIMARY KEY (org_id, assistant_id, capability_id, day)
);

-- Reminders and tasks the built-in handlers keep for an assistant, with their due times. A due
-- reminder is delivered once (open -> delivered, a conditional update) on the organization's
-- webhooks.
CREATE TABLE assistant_items (
  id              TEXT PRIMARY KEY,
  org_id          TEXT NOT NULL REFERENCES organizations (id),
  assistant_id    TEXT NOT NULL,
  kind            TEXT NOT NULL,
  text            TEXT NOT NULL,
  due_at          BIGINT,
  status          TEXT NOT NULL,
  created_at      BIGINT NOT NULL,
  closed_at       BIGINT,
  tool_call_id    TEXT
);
CREATE INDEX assistant_items_due ON assistant_items (status, due_at);
CREATE INDEX assistant_items_assistant ON assistant_items (org_id, assistant_id, kind, id);
