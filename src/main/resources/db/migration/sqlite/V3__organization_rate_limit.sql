-- Contract-specific /api requests per minute (Growth and above, Dedicated); null means the plan's.
ALTER TABLE organizations ADD COLUMN requests_per_minute INTEGER;
