-- Fills a migrated gateway database with the work of a gateway that has run
-- for months (issue 83), generated inside PostgreSQL (INSERT ... SELECT over
-- generate_series: no round trip a row, the same bulk path COPY takes).
--
--   psql "$DATABASE_URL" -v scale=1 -v big_app=<uuid> -v session_app=<uuid> -f Benchmarks/scale/seed.sql
--
-- At scale 1: 10 000 apps; 5 000 000 password users, 2 000 000 of them in
-- big_app (an app that exists: the benchmark's password app) and the rest
-- spread over the seeded apps; 10 000 000 sessions (60 % live, 20 % revoked,
-- 20 % expired; 1 000 000 of them in session_app, the benchmark's refresh
-- app); 1 000 000 phone bindings; 200 000 passkeys and 200 000 second
-- factors; 30 000 000 audit rows over the last six monthly partitions (a
-- third of them big_app's).
-- Seeded ids start with `seed-`, so no benchmark user is among them.
\set ON_ERROR_STOP on
\timing on

SELECT (10000 * :scale)::int AS apps, (2000000 * :scale)::int AS big_users, (3000000 * :scale)::int AS spread_users,
       (9000000 * :scale)::int AS spread_sessions, (1000000 * :scale)::int AS app_sessions,
       (1000000 * :scale)::int AS phones, (200000 * :scale)::int AS passkeys, (30000000 * :scale)::int AS audit_rows
\gset

-- Apps like the ones operators make: static users, small plugin options.
CREATE TEMPORARY TABLE seed_apps AS
SELECT n AS slot, gen_random_uuid() AS app_id FROM generate_series(1, :apps) AS n;
INSERT INTO apps (app_id, name, environment, provider_id, credential_types, plugins)
SELECT app_id, 'seed app ' || slot, CASE WHEN slot % 4 = 0 THEN 'development' ELSE 'production' END, gen_random_uuid(),
       '{password,static}', '{"static": {"allow_any_user": true}, "password": {"argon2": {"memory_kib": 19456, "iterations": 2}}}'
FROM seed_apps;
CREATE UNIQUE INDEX ON seed_apps (slot);
ANALYZE seed_apps;

-- One hash for every seeded user (a real argon2id PHC string): the rows' size, not their secrets, is what is measured.
INSERT INTO password_users (app_id, user_id, password_hash, first_name, email, created_at, last_login_at)
SELECT :'big_app'::uuid, 'seed-' || n,
       '$argon2id$v=19$m=19456,t=2,p=1$c2VlZHNlZWRzZWVkc2VlZA$O3dJ0pm2bNPQ3tcTjc4LJy0EsVeZD6lDgUyb7cwI0mM',
       'First ' || n, 'seed-' || n || '@big.example', now() - (n % 700) * interval '1 day', now() - (n % 90) * interval '1 day'
FROM generate_series(1, :big_users) AS n;
INSERT INTO password_users (app_id, user_id, password_hash, first_name, email, created_at)
SELECT a.app_id, 'seed-' || n,
       '$argon2id$v=19$m=19456,t=2,p=1$c2VlZHNlZWRzZWVkc2VlZA$O3dJ0pm2bNPQ3tcTjc4LJy0EsVeZD6lDgUyb7cwI0mM',
       'First ' || n, 'seed-' || n || '@small.example', now() - (n % 700) * interval '1 day'
FROM generate_series(1, :spread_users) AS n
JOIN seed_apps a ON a.slot = 1 + n % :apps;

-- Sessions: live, revoked and expired, most spread over the seeded apps, some in the refresh app.
INSERT INTO sessions (app_id, session_id, user_id, credential_type, methods, auth_time, device_label, created_at,
                      last_used_at, idle_expires_at, expires_at, generation, token_sha256, revoked_at, revoked_reason)
SELECT app_id, gen_random_uuid(), 'seed-' || n, 'password', '{pwd}', started, 'seeded device', started, started,
       CASE WHEN n % 5 = 4 THEN started + interval '1 day' ELSE now() + interval '14 days' END,
       CASE WHEN n % 5 = 4 THEN started + interval '2 days' ELSE now() + interval '60 days' END,
       n % 50, sha256(('seed-session-' || n)::bytea),
       CASE WHEN n % 5 = 3 THEN started + interval '1 hour' END, CASE WHEN n % 5 = 3 THEN 'signed_out' END
FROM (
    SELECT n, CASE WHEN n <= :app_sessions THEN :'session_app'::uuid ELSE a.app_id END AS app_id,
           now() - (n % 30) * interval '1 day' - interval '3 days' AS started
    FROM generate_series(1, :app_sessions + :spread_sessions) AS n
    JOIN seed_apps a ON a.slot = 1 + n % :apps
) AS s;

INSERT INTO phone_numbers (app_id, phone_number, user_id, first_name)
SELECT a.app_id, '+1555' || lpad(n::text, 9, '0'), 'seed-' || n, 'First ' || n
FROM generate_series(1, :phones) AS n
JOIN seed_apps a ON a.slot = 1 + n % :apps;

INSERT INTO passkeys (app_id, credential_id, user_id, name, public_key, algorithm, sign_count, backup_eligible, backed_up,
                      aaguid, attestation_format)
SELECT a.app_id, sha256(('seed-passkey-' || n)::bytea), 'seed-' || n, 'iPhone', sha256(('seed-key-' || n)::bytea), -7, 0,
       true, true, '00000000-0000-0000-0000-000000000000', 'none'
FROM generate_series(1, :passkeys) AS n
JOIN seed_apps a ON a.slot = 1 + n % :apps;

INSERT INTO second_factors (app_id, user_id, factor_id, totp_sealed, created_at, confirmed_at)
SELECT a.app_id, 'seed-' || n, gen_random_uuid(), sha256(('seed-totp-' || n)::bytea), now() - interval '30 days',
       now() - interval '30 days'
FROM generate_series(1, :passkeys) AS n
JOIN seed_apps a ON a.slot = 1 + n % :apps;

-- Six months of audit rows, spread evenly, in their monthly partitions.
SELECT audit_events_ensure_partitions((now() - interval '6 months')::date, 2);
INSERT INTO audit_events (app_id, occurred_at, event, outcome, reason, user_id, credential_type, client_ip, request_id, detail)
SELECT a.app_id, now() - (n::float8 / :audit_rows) * interval '180 days',
       CASE WHEN n % 10 = 1 THEN 'token.denied' ELSE 'token.issued' END,
       CASE WHEN n % 10 = 1 THEN 'failure' ELSE 'success' END,
       CASE WHEN n % 10 = 1 THEN 'bad_password' END, 'seed-' || (n % 100000), 'password',
       ('10.' || (n % 250) || '.' || (n / 250 % 250) || '.1')::inet, 'seed-' || n, '{"token_profile": "layer"}'
FROM generate_series(1, :audit_rows) AS n
JOIN seed_apps a ON a.slot = 1 + n % :apps
WHERE n % 3 <> 0;
-- A third in big_app: one app whose trail holds 10 000 000 rows, for the audit list at depth.
INSERT INTO audit_events (app_id, occurred_at, event, outcome, reason, user_id, credential_type, client_ip, request_id, detail)
SELECT :'big_app'::uuid, now() - (n::float8 / :audit_rows) * interval '180 days', 'token.issued', 'success', NULL,
       'seed-' || (n % 100000), 'password', ('10.' || (n % 250) || '.' || (n / 250 % 250) || '.1')::inet, 'seed-' || n,
       '{"token_profile": "layer"}'
FROM generate_series(3, :audit_rows, 3) AS n;

-- A database that has run for months has been vacuumed (its visibility maps
-- set) and checkpointed: the measurement that follows must not pay for the
-- seeding's own aftermath (autovacuum over 10 M fresh rows, a checkpoint
-- writing 16 GiB), which put the first run's p99s at 2.4 to 5.3 times the settled ones.
VACUUM ANALYZE;
-- Needs a superuser or pg_checkpoint; without one, the next checkpoint comes on its own.
\set ON_ERROR_STOP off
CHECKPOINT;
\set ON_ERROR_STOP on
SELECT pg_size_pretty(pg_database_size(current_database())) AS database_size;
