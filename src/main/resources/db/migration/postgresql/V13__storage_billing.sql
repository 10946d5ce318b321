-- Storage bought beyond the plan: each purchase adds training-data and embeddings allowance at
-- once, in thousandths of a GB (exact integers).
CREATE TABLE storage_upgrades (
  id                 TEXT PRIMARY KEY,
  org_id             TEXT NOT NULL REFERENCES organizations (id),
  training_data_mgb  BIGINT NOT NULL,
  embeddings_mgb     BIGINT NOT NULL,
  created_at         BIGINT NOT NULL,
  created_by         TEXT
);
CREATE INDEX storage_upgrades_org ON storage_upgrades (org_id);

-- The ledger: one charge per organization, UTC day and item (training_data, embeddings,
-- lora_adapters), the month's price prorated to the day, in millionths of a dollar (exact).
CREATE TABLE storage_charges (
  org_id         TEXT NOT NULL REFERENCES organizations (id),
  day            TEXT NOT NULL,
  item           TEXT NOT NULL,
  quantity       TEXT NOT NULL,
  unit_price     TEXT NOT NULL,
  amount_micros  BIGINT NOT NULL,
  updated_at     BIGINT NOT NULL,
  PRIMARY KEY (org_id, day, item)
);
