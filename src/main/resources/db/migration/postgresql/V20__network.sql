-- An organization's network boundary (docs/network.md). Every change bumps network_version in its
-- transaction; each node polls that one row and reloads what it enforces when it moves.
CREATE TABLE network_version (
  id       INTEGER PRIMARY KEY,
  version  BIGINT NOT NULL
);
INSERT INTO network_version (id, version) VALUES (1, 0);

-- Descriptions of allowlist entries; the ranges themselves are the configuration's
-- network.allowed_ips (one list, whichever route wrote it).
CREATE TABLE allowlist_notes (
  org_id       TEXT NOT NULL REFERENCES organizations (id),
  cidr         TEXT NOT NULL,
  description  TEXT NOT NULL,
  PRIMARY KEY (org_id, cidr)
);

-- The outbound firewall: the ordered rules, as JSON, one row per organization.
CREATE TABLE firewall_rules (
  org_id      TEXT PRIMARY KEY REFERENCES organizations (id),
  rules       TEXT NOT NULL,
  updated_at  BIGINT NOT NULL
);

-- Custom domains and their verification (states: docs/network.md).
CREATE TABLE custom_domains (
  id               TEXT PRIMARY KEY,
  org_id           TEXT NOT NULL REFERENCES organizations (id),
  domain           TEXT NOT NULL UNIQUE,
  state            TEXT NOT NULL,
  token            TEXT NOT NULL,
  created_at       BIGINT NOT NULL,
  verified_at      BIGINT,
  last_checked_at  BIGINT,
  next_check_at    BIGINT NOT NULL,
  failure_reason   TEXT
);
CREATE INDEX custom_domains_org ON custom_domains (org_id, id);

-- Certificates for custom domains: the key sealed with the server's secret key.
CREATE TABLE tls_certificates (
  id           TEXT PRIMARY KEY,
  org_id       TEXT NOT NULL REFERENCES organizations (id),
  subject      TEXT NOT NULL,
  names        TEXT NOT NULL,
  not_before   BIGINT NOT NULL,
  not_after    BIGINT NOT NULL,
  fingerprint  TEXT NOT NULL,
  key_type     TEXT NOT NULL,
  chain_pem    TEXT NOT NULL,
  sealed_key   TEXT NOT NULL,
  created_at   BIGINT NOT NULL
);
CREATE INDEX tls_certificates_org ON tls_certificates (org_id, id);

-- VPC peerings and private endpoints, each driven through its lifecycle by a provisioner.
CREATE TABLE network_links (
  id              TEXT PRIMARY KEY,
  org_id          TEXT NOT NULL REFERENCES organizations (id),
  kind            TEXT NOT NULL,
  provider        TEXT NOT NULL,
  request         TEXT NOT NULL,
  state           TEXT NOT NULL,
  instructions    TEXT NOT NULL,
  failure_reason  TEXT,
  created_at      BIGINT NOT NULL,
  updated_at      BIGINT NOT NULL
);
CREATE INDEX network_links_org ON network_links (org_id, kind, id);
