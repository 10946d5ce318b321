-- Inference usage gains its failures and its latency. errors: requests of the row that ended in an
-- error (an engine or upstream failure; a client that went away is not one). inference_latency:
-- how many requests of an organization's model in an hour took a time within each bucket (bucket i
-- ends at 1.25^i ms: LatencyBuckets), added to in place like inference_usage, so percentiles over
-- any range of hours are sums of a few rows.
ALTER TABLE inference_usage ADD COLUMN errors BIGINT NOT NULL DEFAULT 0;
CREATE TABLE inference_latency (
  org_id      TEXT NOT NULL REFERENCES organizations (id),
  model       TEXT NOT NULL,
  hour_start  BIGINT NOT NULL,
  bucket      INTEGER NOT NULL,
  requests    BIGINT NOT NULL,
  PRIMARY KEY (org_id, hour_start, model, bucket)
);
