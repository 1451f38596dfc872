-- The audit trail's partitions come and go without stalling the ledger
-- (AuditMaintenance). `CREATE TABLE … PARTITION OF audit_events` and
-- `DROP TABLE` of a partition each take an ACCESS EXCLUSIVE lock on
-- `audit_events` itself: queued behind a long read of the trail (an export,
-- a deep page), either held every token's row behind it for as long as the
-- read lasted (AuditMaintenanceTests measured it).
--
-- A month ahead is now made as a table of its own and attached, which takes
-- a SHARE UPDATE EXCLUSIVE lock on the parent: inserts and reads go on. The
-- table is empty, so the attach checks nothing and builds its indexes at once.
CREATE OR REPLACE FUNCTION audit_events_ensure_partitions(first_month date, months_ahead integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    month   date := date_trunc('month', first_month)::date;
    last    date := (date_trunc('month', now()) + make_interval(months => months_ahead))::date;
    name    text;
    created integer := 0;
BEGIN
    PERFORM pg_advisory_xact_lock(7594308634337702516);
    WHILE month <= last LOOP
        name := 'audit_events_' || to_char(month, 'YYYY_MM');
        IF to_regclass(name) IS NULL THEN
            EXECUTE format('CREATE TABLE %I (LIKE audit_events INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', name);
            EXECUTE format('ALTER TABLE audit_events ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)',
                           name, month, (month + interval '1 month')::date);
            created := created + 1;
        END IF;
        month := (month + interval '1 month')::date;
    END LOOP;
    RETURN created;
END;
$$;

-- An old month is detached CONCURRENTLY (the same lighter lock, then a wait
-- for the reads that might see it, which inserts do not join) and dropped
-- alone. Those statements cannot run inside a function: the pass asks this
-- one which partitions are past the retention and runs them itself.
-- `audit_events_drop_partitions_before` stays for the previous release.
CREATE FUNCTION audit_events_partitions_before(cutoff timestamptz) RETURNS SETOF text
LANGUAGE sql STABLE AS $$
    SELECT c.relname::text
    FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = 'audit_events'::regclass
      AND c.relname ~ '^audit_events_[0-9]{4}_[0-9]{2}$'
      AND (to_date(substr(c.relname, 14), 'YYYY_MM') + interval '1 month') <= cutoff
    ORDER BY c.relname
$$;
