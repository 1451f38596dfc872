-- Rate-limit counters, per-app limit overrides, and the audit trail
-- partitioned by month (so retention drops whole partitions).

-- UNLOGGED: no WAL for counters that change on every request. A PostgreSQL
-- crash or a failover to a standby empties the table, which only resets the
-- limits: an accepted trade for several times the write throughput.
CREATE UNLOGGED TABLE rate_limit_counters (
    app_id       uuid        NOT NULL,
    policy       text        NOT NULL,
    subject      text        NOT NULL,
    window_start bigint      NOT NULL,
    count        integer     NOT NULL,
    expires_at   timestamptz NOT NULL,
    PRIMARY KEY (app_id, policy, subject, window_start)
);
CREATE INDEX rate_limit_counters_expiry ON rate_limit_counters (expires_at);

ALTER TABLE apps ADD COLUMN rate_limits jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(rate_limits) = 'object');

ALTER TABLE audit_events RENAME TO audit_events_unpartitioned;
DROP TRIGGER audit_events_append_only ON audit_events_unpartitioned;
ALTER INDEX audit_events_by_time RENAME TO audit_events_unpartitioned_by_time;
ALTER INDEX audit_events_by_request RENAME TO audit_events_unpartitioned_by_request;

CREATE TABLE audit_events (
    -- The nil UUID when the request named no readable app id.
    app_id          uuid        NOT NULL,
    occurred_at     timestamptz NOT NULL DEFAULT now(),
    id              bigint      GENERATED ALWAYS AS IDENTITY,
    event           text        NOT NULL,
    outcome         text        NOT NULL CHECK (outcome IN ('success', 'failure')),
    reason          text,
    user_id         text,
    credential_type text,
    key_id          uuid,
    client_ip       inet,
    user_agent      text        CHECK (length(user_agent) <= 256),
    request_id      text        NOT NULL,
    actor           uuid,
    detail          jsonb       NOT NULL DEFAULT '{}',
    PRIMARY KEY (app_id, occurred_at, id)
) PARTITION BY RANGE (occurred_at);

CREATE INDEX audit_events_by_time ON audit_events (occurred_at DESC, id DESC);
CREATE INDEX audit_events_by_app_time ON audit_events (app_id, occurred_at DESC, id DESC);
CREATE INDEX audit_events_by_request ON audit_events (request_id);

CREATE TRIGGER audit_events_append_only
    BEFORE UPDATE OR DELETE ON audit_events
    FOR EACH ROW EXECUTE FUNCTION audit_events_refuse_change();

-- Creates the monthly partitions from `first_month` through `months_ahead`
-- months after the current one; returns how many it created.
CREATE FUNCTION audit_events_ensure_partitions(first_month date, months_ahead integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
    month   date := date_trunc('month', first_month)::date;
    last    date := (date_trunc('month', now()) + make_interval(months => months_ahead))::date;
    name    text;
    created integer := 0;
BEGIN
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

-- Drops the monthly partitions that end on or before `cutoff`; returns their names.
CREATE FUNCTION audit_events_drop_partitions_before(cutoff timestamptz) RETURNS SETOF text
LANGUAGE plpgsql AS $$
DECLARE
    partition record;
BEGIN
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

SELECT audit_events_ensure_partitions(
    coalesce((SELECT min(occurred_at) FROM audit_events_unpartitioned), now())::date, 2);

INSERT INTO audit_events (app_id, occurred_at, event, outcome, reason, user_id, credential_type, key_id,
                          request_id, actor, detail)
SELECT app_id, occurred_at, event, outcome, reason, user_id, credential_type, key_id, request_id, actor, detail
FROM audit_events_unpartitioned ORDER BY id;

DROP TABLE audit_events_unpartitioned;
