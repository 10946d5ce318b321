-- Inference usage by deployment, with its cost. deployment: the routed model's deployment that
-- answered ('' for a model that is not routed: in-process, uploaded, fine-tuned). cost_nanos: what
-- the requests cost at the model's prices, in billionths of a US dollar (0 when not priced).
ALTER TABLE inference_usage ADD COLUMN deployment TEXT NOT NULL DEFAULT '';
ALTER TABLE inference_usage ADD COLUMN cost_nanos BIGINT NOT NULL DEFAULT 0;
ALTER TABLE inference_usage DROP CONSTRAINT inference_usage_pkey;
ALTER TABLE inference_usage ADD PRIMARY KEY (org_id, hour_start, credential_id, model, deployment);
