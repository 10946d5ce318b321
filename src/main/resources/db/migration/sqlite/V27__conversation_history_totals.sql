-- Each instance's conversation history in bytes and exchanges, kept by triggers in the same
-- transaction as every insert and delete of an exchange (the gateway's batches, deletions,
-- retention, a restore), so that an organization's storage reads one row per instance instead of
-- summing every exchange it ever kept: that sum ran every second for every organization with
-- traffic, and at a few thousand chats a second it came to take half of the machine within
-- minutes (docs/benchmarks.md, issue 43).
CREATE TABLE conversation_history_totals (
  instance_id  TEXT PRIMARY KEY,
  org_id       TEXT NOT NULL,
  bytes        BIGINT NOT NULL,
  exchanges    BIGINT NOT NULL
);
CREATE INDEX conversation_history_totals_org ON conversation_history_totals (org_id);

INSERT INTO conversation_history_totals (instance_id, org_id, bytes, exchanges)
  SELECT instance_id, MIN(org_id), SUM(bytes), COUNT(*) FROM conversation_exchanges GROUP BY instance_id;

CREATE TRIGGER conversation_exchange_kept AFTER INSERT ON conversation_exchanges
BEGIN
  INSERT INTO conversation_history_totals (instance_id, org_id, bytes, exchanges)
    VALUES (NEW.instance_id, NEW.org_id, NEW.bytes, 1)
    ON CONFLICT (instance_id) DO UPDATE
      SET bytes = bytes + excluded.bytes, exchanges = exchanges + 1;
END;

CREATE TRIGGER conversation_exchange_deleted AFTER DELETE ON conversation_exchanges
BEGIN
  UPDATE conversation_history_totals
    SET bytes = bytes - OLD.bytes, exchanges = exchanges - 1
    WHERE instance_id = OLD.instance_id;
END;
