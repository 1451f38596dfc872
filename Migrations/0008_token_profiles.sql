-- The tokens an app issues (token profiles), in order: the first answers
-- requests that name none. Each entry is {"type": <profile>, ...settings},
-- secrets sealed under the master key. Every app issued Layer identity
-- tokens before profiles existed, and still does unless changed.
ALTER TABLE apps
    ADD COLUMN token_profiles jsonb NOT NULL DEFAULT '[{"type": "layer"}]'
        CHECK (jsonb_typeof(token_profiles) = 'array' AND jsonb_array_length(token_profiles) BETWEEN 1 AND 8);
