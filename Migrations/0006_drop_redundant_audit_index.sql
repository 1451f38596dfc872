-- audit_events_by_app_time (app_id, occurred_at DESC, id DESC) held what the
-- primary key (app_id, occurred_at, id) already holds, in the order a
-- backward scan of the key reads anyway: every audit row paid one more index
-- insert for nothing. An app's newest-first pages now read the key
-- backwards (EXPLAIN: "Index Only Scan Backward using ..._pkey").
-- Dropping a partitioned index is a catalog change: quick, but it waits for
-- and briefly blocks writes to audit_events.
DROP INDEX IF EXISTS audit_events_by_app_time;
