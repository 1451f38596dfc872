-- Tenants, their signing keys, and the audit trail of token requests.
-- Tenant tables lead their primary key with app_id so the schema can be
-- distributed by tenant later.

CREATE TABLE apps (
    app_id            uuid        PRIMARY KEY,
    name              text        NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    environment       text        NOT NULL CHECK (environment IN ('development', 'production')),
    provider_id       uuid        NOT NULL,
    token_ttl_seconds integer     NOT NULL DEFAULT 120 CHECK (token_ttl_seconds BETWEEN 30 AND 600),
    enabled           boolean     NOT NULL DEFAULT true,
    credential_types  text[]      NOT NULL DEFAULT '{}',
    plugins           jsonb       NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(plugins) = 'object'),
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE app_keys (
    app_id             uuid        NOT NULL REFERENCES apps (app_id) ON DELETE CASCADE,
    key_id             uuid        NOT NULL,
    status             text        NOT NULL CHECK (status IN ('next', 'active', 'retired')),
    bits               integer     NOT NULL CHECK (bits >= 2048),
    public_key_pem     text        NOT NULL,
    -- AES-256-GCM under the master key, bound to (app_id, key_id).
    sealed_private_key bytea       NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    activated_at       timestamptz,
    retired_at         timestamptz,
    PRIMARY KEY (app_id, key_id)
);

-- Exactly one key signs for an app at a time.
CREATE UNIQUE INDEX app_keys_one_active_per_app ON app_keys (app_id) WHERE status = 'active';
-- A Layer key id names one key, whichever app holds it.
CREATE UNIQUE INDEX app_keys_key_id ON app_keys (key_id);

CREATE TABLE audit_events (
    -- The nil UUID when the request named no readable app id.
    app_id          uuid        NOT NULL,
    id              bigint      GENERATED ALWAYS AS IDENTITY,
    occurred_at     timestamptz NOT NULL DEFAULT now(),
    event           text        NOT NULL,
    outcome         text        NOT NULL CHECK (outcome IN ('success', 'failure')),
    reason          text,
    user_id         text,
    credential_type text,
    key_id          uuid,
    request_id      text        NOT NULL,
    detail          jsonb       NOT NULL DEFAULT '{}',
    PRIMARY KEY (app_id, id)
);

CREATE INDEX audit_events_by_time ON audit_events (app_id, occurred_at DESC);
CREATE INDEX audit_events_by_request ON audit_events (request_id);

-- The trail is append-only: rows are never edited or deleted one by one.
CREATE FUNCTION audit_events_refuse_change() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_events is append-only';
END;
$$;

CREATE TRIGGER audit_events_append_only
    BEFORE UPDATE OR DELETE ON audit_events
    FOR EACH ROW EXECUTE FUNCTION audit_events_refuse_change();
