-- Conversation history: each chat exchange the gateway answered for an organization, kept in the
-- organization's default instance (the client's messages, the answer, model, usage, time), with
-- its size in bytes (what conversation_history_gb counts).
CREATE TABLE conversation_exchanges (
  id                 TEXT PRIMARY KEY,
  org_id             TEXT NOT NULL REFERENCES organizations (id),
  instance_id        TEXT NOT NULL,
  credential_id      TEXT,
  request_id         TEXT,
  model              TEXT NOT NULL,
  messages           TEXT NOT NULL,
  answer             TEXT NOT NULL,
  prompt_tokens      INTEGER NOT NULL,
  completion_tokens  INTEGER NOT NULL,
  memory_tokens      INTEGER NOT NULL,
  bytes              BIGINT NOT NULL,
  created_at         BIGINT NOT NULL
);
CREATE INDEX conversation_exchanges_instance ON conversation_exchanges (instance_id, id);
CREATE INDEX conversation_exchanges_org ON conversation_exchanges (org_id, created_at);
