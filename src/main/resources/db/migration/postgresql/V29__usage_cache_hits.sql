-- Requests answered from the response cache (docs/inference.md, "The response cache"): counted in
-- requests, with no token and no cost.
ALTER TABLE inference_usage ADD COLUMN cache_hits BIGINT NOT NULL DEFAULT 0;
