"""Upgrade drill: the failover drill's cluster (PostgreSQL under Patroni,
HAProxy in front of two gateway replicas) serving a steady load on the
previous release, then the new release's migrations run mid-load, the
replicas replaced one at a time by the new release, and rolled back one at
a time to the previous one. Started by Benchmarks/ha/upgrade, which builds
both releases; torn down on exit.

Per step it prints the answers by status and their latency; at the end the
audit check (every token answered 200 has its token.issued row) and the
refreshing clients' sessions (none forked, none ended, each refreshed on
both releases). Exits non-zero if any answer was not 200, a token lacks its
row, a family forked or a session ended.
"""

import json
import os
import signal
import statistics
import subprocess
import sys
import time

import drill
from drill import GATEWAY_PORTS, BALANCER, http, log, wait_for

PREVIOUS = os.environ["UPGRADE_PREVIOUS_BINARY"]
NEW = os.environ["GATEWAY_BINARY"]
STEP_SECONDS = 15

replicas = {}  # index -> (process name, release)


def start_replica(index, binary, release):
    name = f"gateway{index + 1}-{release}-{len(drill.processes)}"
    drill.start(name, [binary, "serve"], env=drill.gateway_environment(GATEWAY_PORTS[index]))
    replicas[index] = (name, release)
    wait_for(f"gateway {index + 1} ({release}) ready", lambda: drill.gateway_ready(index), timeout=120)
    # HAProxy's check (every 500 ms, one success) puts it back in the rotation.
    time.sleep(1.5)


def stop_replica(index):
    name, release = replicas.pop(index)
    process = drill.processes[name]
    os.killpg(process.pid, signal.SIGTERM)
    process.wait(timeout=60)
    return f"{release} gateway {index + 1} stopped (exit {process.returncode})"


def migrate(binary):
    run = subprocess.run(
        [binary, "migrate"], env=drill.gateway_environment(0), capture_output=True, text=True, timeout=300)
    line = (run.stdout.strip().splitlines() or ["(nothing printed)"])[-1]
    if run.returncode != 0:
        raise SystemExit(f"migrate failed: {run.stdout}{run.stderr}")
    return line


def expand():
    """What a later release's migrations do, as its runner would (a lock
    timeout, the index outside a transaction), recorded as an expansion:
    a nullable column on the sessions every refresh writes, and an index on
    them built concurrently. Both releases must serve the database after it,
    and the previous one must start on it."""
    started = time.monotonic()
    for statement in [
        "ALTER TABLE sessions ADD COLUMN IF NOT EXISTS drill_region text",
        "CREATE INDEX CONCURRENTLY IF NOT EXISTS sessions_by_last_use ON sessions (app_id, last_used_at)",
        "INSERT INTO schema_migrations (source, name, checksum, expands_only)"
        " VALUES ('core', '9999_upgrade_drill_expansion.sql', 'drill', true)",
    ]:
        # One statement a call (CONCURRENTLY cannot run in a transaction block), each under the runner's lock timeout.
        subprocess.run(
            ["psql", "-X", "-q", "-h", "127.0.0.1", "-p", str(drill.PG_ENTRY), "-U", "postgres", "-d", "gateway", "-c", statement],
            env=dict(os.environ, PGPASSWORD=drill.SUPERUSER_PASSWORD, PGOPTIONS="-c lock_timeout=2s"),
            check=True, capture_output=True, text=True)
    return f"a column and a concurrent index on sessions in {time.monotonic() - started:.2f} s"


def check(binary):
    run = subprocess.run(
        [binary, "migrate", "--check"], env=drill.gateway_environment(0), capture_output=True, text=True, timeout=120)
    said = ("database schema:", "would apply:", "applied by a newer release:", "this binary")
    return run.returncode, [line for line in run.stdout.splitlines() if line.startswith(said)]


def main():
    drill.start_cluster()

    # The previous release migrates the empty database and serves it.
    for index in range(len(GATEWAY_PORTS)):
        start_replica(index, PREVIOUS, "previous")
    wait_for("the balancer", lambda: http("GET", f"http://127.0.0.1:{BALANCER}/readyz")[0] == 200)
    app_id, static_users, password_users, refresh_users = drill.create_app("upgrade drill")

    checks = {"before": check(NEW)}
    load = drill.Load(app_id, static_users, password_users, refresh_users)
    load.start()
    log(f"load: {drill.LOAD_THREADS} connections and {drill.REFRESH_THREADS} refreshing clients on the previous release")
    time.sleep(STEP_SECONDS)
    baseline = statistics.median(drill.per_second_200s(load.snapshot(), 5, STEP_SECONDS))
    log(f"baseline: {baseline:.0f} tokens/s")

    steps = []

    def step(name, action):
        at = load.now()
        detail = action()
        log(f"{name}: {detail}")
        time.sleep(max(STEP_SECONDS - (load.now() - at), 0))
        steps.append((name, at, load.now(), detail))

    def replace(index, binary, release):
        def action():
            stopped = stop_replica(index)
            start_replica(index, binary, release)
            return f"{stopped}; {release} gateway {index + 1} serving"
        return action

    step("1. the new release's migrations", lambda: migrate(NEW))
    step("2. a later release's expansion, under load", expand)
    checks["expanded"] = check(PREVIOUS)
    step("3. gateway 1 replaced by the new release", replace(0, NEW, "new"))
    step("4. gateway 2 replaced by the new release", replace(1, NEW, "new"))
    step("5. the new release alone", lambda: "serving")
    step("6. gateway 1 rolled back", replace(0, PREVIOUS, "previous"))
    step("7. gateway 2 rolled back", replace(1, PREVIOUS, "previous"))
    step("8. the previous release alone", lambda: "serving")
    load.stop()
    results = load.snapshot()

    answered, missing, forks, refreshes, problems = drill.audit_and_sessions(load, results)

    print()
    print(f"Upgrade drill, {time.strftime('%Y-%m-%d')}: {drill.LOAD_THREADS} connections and {drill.REFRESH_THREADS}"
          f" refreshing clients, baseline {baseline:.0f} tokens/s; previous {os.environ.get('UPGRADE_PREVIOUS_NAME', PREVIOUS)},"
          f" new {os.environ.get('UPGRADE_NEW_NAME', NEW)}")
    for when, (code, lines) in checks.items():
        who = "new" if when == "before" else "previous"
        when = "before the migration" if when == "before" else "after the expansion"
        print(f"`migrate --check` by the {who} release {when}: exit {code}: {' / '.join(lines)}")
    print()
    print("| step | what happened | 200 | other | p50 / p99 / max |")
    print("| --- | --- | --- | --- | --- |")
    totals = {}
    for _, status, _, _ in results:
        totals[status] = totals.get(status, 0) + 1
    for name, at, end, detail in steps:
        statuses = {}
        for t, status, _, _ in results:
            if at <= t < end:
                statuses[status] = statuses.get(status, 0) + 1
        other = ", ".join(f"{n}× {s or 'no answer'}" for s, n in sorted(statuses.items()) if s != 200) or "0"
        times = drill.latency(load, at, end)
        text = "—" if times is None else f"{times['p50_ms']:.0f} / {times['p99_ms']:.0f} / {times['max_ms']:.0f} ms"
        print(f"| {name} | {detail} | {statuses.get(200, 0)} | {other} | {text} |")
    print()
    print(f"Whole run: {len(results)} requests, {json.dumps({str(k): v for k, v in sorted(totals.items())})}")
    print(f"Audit check: {len(answered)} tokens answered 200, {len(missing)} without a token.issued row")
    print(f"Sessions: {len(load.sessions)} clients refreshed {sum(refreshes.values())} times across both releases;"
          f" {len(forks)} tokens answered with two successors; problems: {problems or 'none'}")
    failed = missing or forks or problems or any(status != 200 for status in totals)
    return 1 if failed else 0


if __name__ == "__main__":
    try:
        code = main()
    finally:
        drill.teardown()
    sys.exit(code)
