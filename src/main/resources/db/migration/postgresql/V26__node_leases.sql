-- Work that one node at a time does for the whole deployment (the alert evaluation's round over
-- every organization): held by a node until it lapses unrenewed.
CREATE TABLE node_leases (
  name        TEXT PRIMARY KEY,
  holder      TEXT NOT NULL,
  expires_at  BIGINT NOT NULL
);
