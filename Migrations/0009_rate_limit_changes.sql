-- What an app's rate-limit overrides remember of their changes (RateLimitChanges):
-- {"set_by_operator": [policy names an operator set, which the app's own admin may
-- not change or remove], "period_changed_at": {policy: epoch seconds}}: for one
-- period after its period changed, a policy counts as if its whole limit had been
-- spent at the change, since its counters are kept by windows of the period.
ALTER TABLE apps ADD COLUMN rate_limit_changes jsonb NOT NULL DEFAULT '{}'
    CHECK (jsonb_typeof(rate_limit_changes) = 'object');

-- Who set the overrides in place is not known: they are counted as the operator's,
-- so an app admin can no longer change an operator's limit that was set before this.
UPDATE apps SET rate_limit_changes = jsonb_build_object(
    'set_by_operator', (SELECT coalesce(jsonb_agg(name ORDER BY name), '[]'::jsonb) FROM jsonb_object_keys(rate_limits) AS name),
    'period_changed_at', '{}'::jsonb);
