-- Sign in with Apple's refresh tokens (Plugins/IDToken/Apple): one per app,
-- user and provider, sealed (AES-256-GCM under a key derived from the master
-- key, bound to the app, the user and the provider), kept only to be
-- revoked at Apple when the user deletes their account. Written when a
-- sign-in brings an authorization code and the provider has apple_api.
CREATE TABLE apple_grants (
    app_id               uuid        NOT NULL REFERENCES apps (app_id) ON DELETE CASCADE,
    user_id              text        COLLATE "C" NOT NULL,
    provider             text        COLLATE "C" NOT NULL,
    sealed_refresh_token bytea       NOT NULL,
    created_at           timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (app_id, user_id, provider)
);
