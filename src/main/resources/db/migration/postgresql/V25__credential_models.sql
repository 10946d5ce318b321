-- A context token or API key may be limited to a list of client-facing model ids (a JSON array);
-- NULL: every model its organization sees.
ALTER TABLE credentials ADD COLUMN models TEXT;
