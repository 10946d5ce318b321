-- The organizations a session may switch to without signing in again: those whose user with the
-- same email had the same password at sign-in (ids separated by commas; the session's own first).
ALTER TABLE sessions ADD COLUMN organizations TEXT;
