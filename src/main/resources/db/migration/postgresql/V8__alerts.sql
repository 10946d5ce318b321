-- Monitoring alerts: one row per episode of a condition (firing, then resolved), at most one
-- firing per organization and kind.
CREATE TABLE alerts (
  id          TEXT PRIMARY KEY,
  org_id      TEXT NOT NULL REFERENCES organizations (id),
  kind        TEXT NOT NULL,
  state       TEXT NOT NULL,
  started_at  BIGINT NOT NULL,
  ended_at    BIGINT,
  value       DOUBLE PRECISION NOT NULL,
  threshold   DOUBLE PRECISION NOT NULL,
  message     TEXT NOT NULL,
  updated_at  BIGINT NOT NULL
);
CREATE UNIQUE INDEX alerts_one_firing ON alerts (org_id, kind) WHERE state = 'firing';
CREATE INDEX alerts_org ON alerts (org_id, id);

-- Where an organization's alerts are sent: webhooks, each with a signing secret (sealed).
CREATE TABLE alert_channels (
  id          TEXT PRIMARY KEY,
  org_id      TEXT NOT NULL REFERENCES organizations (id),
  kind        TEXT NOT NULL,
  url         TEXT NOT NULL,
  secret      TEXT NOT NULL,
  created_at  BIGINT NOT NULL,
  created_by  TEXT
);
CREATE INDEX alert_channels_org ON alert_channels (org_id, id);

-- Every attempt to deliver an event to a channel, and how it went.
CREATE TABLE alert_deliveries (
  id               TEXT PRIMARY KEY,
  channel_id       TEXT NOT NULL,
  org_id           TEXT NOT NULL,
  event            TEXT NOT NULL,
  alert_id         TEXT,
  attempt          INTEGER NOT NULL,
  outcome          TEXT NOT NULL,
  response_status  INTEGER,
  error            TEXT,
  at               BIGINT NOT NULL
);
CREATE INDEX alert_deliveries_channel ON alert_deliveries (channel_id, id);
