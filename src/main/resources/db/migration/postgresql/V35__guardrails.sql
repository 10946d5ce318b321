-- Guardrails (docs/guardrails.md): an organization's policies on what goes to its models, what
-- comes back and what enters and leaves its memory. spec: the guardrail as written and checked
-- (applies_to, check, action, restore, scope, enabled: JSON), read back through the same checks.
-- changed_at: when the row was written, how other nodes notice a change within a second.
CREATE TABLE guardrails (
  id          TEXT PRIMARY KEY,
  org_id      TEXT NOT NULL REFERENCES organizations (id),
  name        TEXT NOT NULL,
  spec        TEXT NOT NULL,
  created_at  BIGINT NOT NULL,
  changed_at  BIGINT NOT NULL
);
CREATE INDEX guardrails_by_org ON guardrails (org_id);
