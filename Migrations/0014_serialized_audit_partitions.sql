-- Replicas that start together each create the audit partitions they find
-- missing (AuditMaintenance.runOnce): two that saw the same month missing
-- both created it, and the second failed with 42P07, ending its startup.
-- Each call now waits for the others' transactions first (a transaction
-- advisory lock, "idgwpart"), then looks: a month another created is there.
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
            EXECUTE format('CREATE TABLE %I PARTITION OF audit_events FOR VALUES FROM (%L) TO (%L)',
                           name, month, (month + interval '1 month')::date);
            created := created + 1;
        END IF;
        month := (month + interval '1 month')::date;
    END LOOP;
    RETURN created;
END;
$$;

-- The same for dropping: a partition two replicas both found old was dropped twice.
CREATE OR REPLACE FUNCTION audit_events_drop_partitions_before(cutoff timestamptz) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    partition record;
BEGIN
    PERFORM pg_advisory_xact_lock(7594308634337702516);
    FOR partition IN
        SELECT c.relname AS name
        FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
        WHERE i.inhparent = 'audit_events'::regclass
          AND c.relname ~ '^audit_events_[0-9]{4}_[0-9]{2}$'
          AND (to_date(substr(c.relname, 14), 'YYYY_MM') + interval '1 month') <= cutoff
        ORDER BY c.relname
    LOOP
        EXECUTE format('DROP TABLE %I', partition.name);
        RETURN NEXT partition.name;
    END LOOP;
END;
$$;
