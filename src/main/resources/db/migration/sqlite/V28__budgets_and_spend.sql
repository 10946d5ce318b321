-- Budgets in money (docs/budgets.md): a limit on what an organization, one of its keys or tokens,
-- or one of its assistants may spend in a UTC day or month, in billionths of a US dollar (the
-- unit of the models' prices). scope_id: '' for the organization, else the credential's or the
-- assistant's id. changed_at: when the row was written, how other nodes notice a new budget.
CREATE TABLE budgets (
  id           TEXT PRIMARY KEY,
  org_id       TEXT NOT NULL REFERENCES organizations (id),
  scope        TEXT NOT NULL,
  scope_id     TEXT NOT NULL,
  period       TEXT NOT NULL,
  limit_nanos  BIGINT NOT NULL,
  created_at   BIGINT NOT NULL,
  created_by   TEXT,
  changed_at   BIGINT NOT NULL
);
CREATE INDEX budgets_by_org ON budgets (org_id);

-- What was spent, per UTC day and per scope a budget can name, in billionths of a US dollar:
-- every request's settled cost is added to its organization's row, its credential's and (for a
-- conversation as an assistant) its assistant's. A month's spend is the sum of its days.
CREATE TABLE spend (
  org_id      TEXT NOT NULL REFERENCES organizations (id),
  scope       TEXT NOT NULL,
  scope_id    TEXT NOT NULL,
  day_start   BIGINT NOT NULL,
  cost_nanos  BIGINT NOT NULL,
  PRIMARY KEY (org_id, scope, scope_id, day_start)
);

-- What the usage rows already hold (cost by credential and hour since V24), so a budget made
-- today counts what the organization and its keys spent earlier in its period.
INSERT INTO spend (org_id, scope, scope_id, day_start, cost_nanos)
SELECT org_id, 'organization', '', hour_start - (hour_start % 86400000), SUM(cost_nanos)
FROM inference_usage WHERE cost_nanos > 0
GROUP BY org_id, hour_start - (hour_start % 86400000);
INSERT INTO spend (org_id, scope, scope_id, day_start, cost_nanos)
SELECT org_id, 'key', credential_id, hour_start - (hour_start % 86400000), SUM(cost_nanos)
FROM inference_usage WHERE cost_nanos > 0
GROUP BY org_id, credential_id, hour_start - (hour_start % 86400000);
