-- The ID-token plugin: each provider ID token an app accepted, by its
-- SHA-256 (never the token), kept until the token expires, so that one
-- token mints at most one of the app's tokens, on every replica.
CREATE TABLE id_token_uses (
    app_id       uuid        NOT NULL REFERENCES apps (app_id) ON DELETE CASCADE,
    token_sha256 bytea       NOT NULL CHECK (octet_length(token_sha256) = 32),
    expires_at   timestamptz NOT NULL,
    PRIMARY KEY (app_id, token_sha256)
);

CREATE INDEX id_token_uses_expiry ON id_token_uses (app_id, expires_at);
