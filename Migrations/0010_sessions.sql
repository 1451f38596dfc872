-- Sessions (README, "Sessions"): a successful token request of an app with
-- sessions on starts one, whose refresh token answers later challenges. Only
-- the SHA-256 of a refresh token's secret is kept: the live token's, and the
-- one spent last (answered with its successor within the app's grace window).
-- Older tokens of the family are recognised by deriving forward from them,
-- so none is stored.
CREATE TABLE sessions (
    app_id          uuid        NOT NULL REFERENCES apps (app_id) ON DELETE CASCADE,
    session_id      uuid        NOT NULL,
    user_id         text        NOT NULL,
    profile         jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(profile) = 'object'),
    credential_type text        NOT NULL,
    methods         text[]      NOT NULL DEFAULT '{}',
    auth_time       timestamptz NOT NULL,
    device_label    text,
    created_at      timestamptz NOT NULL,
    last_used_at    timestamptz NOT NULL,
    idle_expires_at timestamptz NOT NULL,
    expires_at      timestamptz NOT NULL,
    generation      bigint      NOT NULL CHECK (generation BETWEEN 0 AND 4294967295),
    token_sha256    bytea       NOT NULL CHECK (octet_length(token_sha256) = 32),
    previous_sha256 bytea       CHECK (octet_length(previous_sha256) = 32),
    rotated_at      timestamptz,
    revoked_at      timestamptz,
    revoked_reason  text,
    PRIMARY KEY (app_id, session_id)
);

-- A user's sessions, newest first: the admin API's list, and the sessions a
-- new one ends past the app's maximum.
CREATE INDEX sessions_by_user ON sessions (app_id, user_id, created_at DESC);

-- When a session ended: AuditMaintenance deletes sessions 30 days after it.
CREATE INDEX sessions_ended ON sessions ((least(coalesce(revoked_at, expires_at), idle_expires_at, expires_at)));

-- An app's session settings (SessionSettings as JSON); NULL: sessions off.
ALTER TABLE apps ADD COLUMN sessions jsonb CHECK (sessions IS NULL OR jsonb_typeof(sessions) = 'object');
