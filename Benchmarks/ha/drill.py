"""Failover drill: two gateway replicas behind HAProxy, PostgreSQL under
Patroni (three nodes, synchronous_mode) over etcd, a steady token load, and
four faults. Started by Benchmarks/ha/run, which installs the packages and
builds the gateway; everything here runs on loopback in one work folder and
is torn down on exit.

Per fault it prints seconds to the first 200 and to steady throughput, the
answers by status, and at the end the audit check: every token answered 200
must have its token.issued row in the surviving leader's database.
"""

import base64
import json
import os
import secrets
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from http.client import HTTPConnection

GATEWAY = os.environ["GATEWAY_BINARY"]
WORK = os.environ["DRILL_WORK"]
LOAD_THREADS = int(os.environ.get("DRILL_THREADS", "8"))
PASSWORD_EVERY = 20  # one request in 20 is a password login
REFRESH_THREADS = 2  # besides the load: clients that signed in once and answer every request with their session
# Longer than a failover: a refresh whose answer a fault lost is sent again after it, and must be a retry, not reuse.
REUSE_GRACE_SECONDS = 60
TTL = 10  # Patroni's leader TTL (seconds)
REQUEST_TIMEOUT_MS = 2000  # the gateways' database.request_timeout_ms
RETRY_WINDOW_MS = int(os.environ.get("DRILL_RETRY_WINDOW_MS", "10000"))  # the gateways' database.retry_window_ms
RECOVERY_TARGET = TTL + REQUEST_TIMEOUT_MS / 1000
PG_BIN = "/usr/lib/postgresql/15/bin"
ETCD_PORT = 23790
PG_PORTS = [55431, 55432, 55433]
REST_PORTS = [8009, 8010, 8011]
PG_ENTRY = 55430  # HAProxy: the leader
GATEWAY_PORTS = [18081, 18082]
BALANCER = 18080  # HAProxy: the gateways
SUPERUSER_PASSWORD = secrets.token_hex(16)
GATEWAY_DB_PASSWORD = secrets.token_hex(16)
ADMIN_TOKEN = "igw_" + base64.urlsafe_b64encode(secrets.token_bytes(32)).decode().rstrip("=")
MASTER_KEY = base64.b64encode(secrets.token_bytes(32)).decode()

processes = {}  # name -> Popen


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def as_postgres(command):
    return ["runuser", "-u", "postgres", "--"] + command if os.geteuid() == 0 else command


def start(name, command, env=None):
    out = open(f"{WORK}/{name}.log", "ab")
    processes[name] = subprocess.Popen(
        command, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    return processes[name]


def wait_for(what, check, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except Exception:
            pass
        time.sleep(0.2)
    raise SystemExit(f"timed out waiting for {what}; logs are in {WORK}")


def http(method, url, body=None, token=None, timeout=5, headers=None):
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


# --- the cluster -----------------------------------------------------------

def start_etcd():
    start("etcd", [
        "etcd", "--name", "e1", "--data-dir", f"{WORK}/etcd",
        "--listen-client-urls", f"http://127.0.0.1:{ETCD_PORT}",
        "--advertise-client-urls", f"http://127.0.0.1:{ETCD_PORT}",
        "--listen-peer-urls", "http://127.0.0.1:23800",
        "--initial-advertise-peer-urls", "http://127.0.0.1:23800",
        "--initial-cluster", "e1=http://127.0.0.1:23800",
    ])
    wait_for("etcd", lambda: http("GET", f"http://127.0.0.1:{ETCD_PORT}/health")[0] == 200)


def patroni_config(index):
    name = f"pg{index + 1}"
    folder = f"{WORK}/{name}"
    os.makedirs(f"{folder}/socket", exist_ok=True)
    subprocess.run(["chown", "-R", "postgres:postgres", folder], check=False)
    # JSON is YAML: no YAML writer needed.
    config = {
        "scope": "gateway-drill",
        "name": name,
        "restapi": {"listen": f"127.0.0.1:{REST_PORTS[index]}", "connect_address": f"127.0.0.1:{REST_PORTS[index]}"},
        "etcd3": {"hosts": f"127.0.0.1:{ETCD_PORT}"},
        "bootstrap": {
            "dcs": {
                "ttl": TTL, "loop_wait": 1, "retry_timeout": 3,
                "maximum_lag_on_failover": 1048576,
                "synchronous_mode": True,
                # A primary whose PostgreSQL dies is failed over at once rather
                # than restarted in place: the drill's first fault is a crash.
                "primary_start_timeout": 0,
                "postgresql": {
                    "use_pg_rewind": True,
                    "parameters": {"max_connections": 200, "wal_log_hints": "on", "fsync": "on"},
                },
            },
            "initdb": [{"encoding": "UTF8"}, "data-checksums"],
        },
        "postgresql": {
            "listen": f"127.0.0.1:{PG_PORTS[index]}",
            "connect_address": f"127.0.0.1:{PG_PORTS[index]}",
            "data_dir": f"{folder}/data",
            "bin_dir": PG_BIN,
            "pgpass": f"{folder}/pgpass",
            "authentication": {
                "superuser": {"username": "postgres", "password": SUPERUSER_PASSWORD},
                "replication": {"username": "replicator", "password": SUPERUSER_PASSWORD},
                "rewind": {"username": "postgres", "password": SUPERUSER_PASSWORD},
            },
            "parameters": {"unix_socket_directories": f"{folder}/socket"},
            "pg_hba": [
                "local all all trust",
                "host replication replicator 127.0.0.1/32 scram-sha-256",
                "host all all 127.0.0.1/32 scram-sha-256",
            ],
        },
    }
    path = f"{folder}/patroni.yml"
    with open(path, "w") as file:
        json.dump(config, file, indent=1)
    os.chmod(path, 0o644)
    return path


def start_patroni(index):
    start(f"patroni-pg{index + 1}", as_postgres(["patroni", f"{WORK}/pg{index + 1}/patroni.yml"]))


def cluster():
    """Patroni's view: members with their roles and states."""
    for port in REST_PORTS:
        try:
            status, body = http("GET", f"http://127.0.0.1:{port}/cluster", timeout=1)
            if status == 200:
                return json.loads(body)["members"]
        except Exception:
            continue
    return []


def leader():
    return next((m["name"] for m in cluster() if m["role"] == "leader" and m["state"] == "running"), None)


def has_sync_standby():
    return any(m["role"] == "sync_standby" and m["state"] in ("running", "streaming") for m in cluster())


def postmaster_pid(name):
    with open(f"{WORK}/{name}/data/postmaster.pid") as file:
        return int(file.readline())


def psql(sql, port=PG_ENTRY, database="postgres"):
    environment = dict(os.environ, PGPASSWORD=SUPERUSER_PASSWORD)
    return subprocess.run(
        ["psql", "-X", "-q", "-A", "-t", "-h", "127.0.0.1", "-p", str(port), "-U", "postgres", "-d", database, "-c", sql],
        env=environment, check=True, capture_output=True, text=True).stdout


def write_haproxy():
    postgres = "\n".join(
        f"    server pg{i + 1} 127.0.0.1:{PG_PORTS[i]} check port {REST_PORTS[i]}" for i in range(len(PG_PORTS)))
    gateways = "\n".join(f"    server gw{i + 1} 127.0.0.1:{port} check" for i, port in enumerate(GATEWAY_PORTS))
    config = f"""global
    maxconn 2000

defaults
    timeout connect 1s
    timeout check 1s

# Writes go to the leader only: Patroni's REST answers 200 on /primary there.
listen postgres
    bind 127.0.0.1:{PG_ENTRY}
    mode tcp
    timeout client 30m
    timeout server 30m
    option httpchk OPTIONS /primary
    http-check expect status 200
    default-server inter 500ms fall 2 rise 1 on-marked-down shutdown-sessions
{postgres}

# The gateways, checked on /readyz (red while their database is unreachable).
listen gateways
    bind 127.0.0.1:{BALANCER}
    mode http
    timeout client 30s
    timeout server 30s
    option forwardfor
    option httpchk GET /readyz
    http-check expect status 200
    # A request whose replica died before answering is sent to the other one.
    # For identity tokens that is safe: a replay is a second, independent
    # token (with its own audit row) for the same nonce, and the client keeps
    # one. Admin writes are not replay-safe: deploy/ sends them to a backend
    # that retries on conn-failure only.
    retries 2
    option redispatch 1
    retry-on conn-failure empty-response
    default-server inter 500ms fall 2 rise 1
{gateways}
"""
    with open(f"{WORK}/haproxy.cfg", "w") as file:
        file.write(config)


def gateway_environment(port):
    return dict(
        os.environ,
        GATEWAY_DATABASE_URL=f"postgres://gateway:{GATEWAY_DB_PASSWORD}@127.0.0.1:{PG_ENTRY}/gateway?sslmode=disable",
        GATEWAY_MASTER_KEY=MASTER_KEY, GATEWAY_HTTP_PORT=str(port), GATEWAY_MIGRATE_ON_START="true",
        GATEWAY_ADMIN_BOOTSTRAP_TOKEN=ADMIN_TOKEN, GATEWAY_LOG_LEVEL="info", GATEWAY_LOG_FORMAT="text",
        GATEWAY_LOG_REQUESTS="false", GATEWAY_MODE="development", GATEWAY_HTTP_TRUSTED_PROXIES="127.0.0.1",
        GATEWAY_DATABASE_REQUEST_TIMEOUT_MS=str(REQUEST_TIMEOUT_MS),
        GATEWAY_DATABASE_RETRY_WINDOW_MS=str(RETRY_WINDOW_MS),
    )


def start_gateway(index):
    port = GATEWAY_PORTS[index]
    return start(f"gateway{index + 1}", [GATEWAY, "serve"], env=gateway_environment(port))


def gateway_ready(index):
    return http("GET", f"http://127.0.0.1:{GATEWAY_PORTS[index]}/readyz", timeout=1)[0] == 200


# --- the load --------------------------------------------------------------

class Load:
    """Closed-loop token requests through the balancer; every answer is kept
    with its request id, the second it ended and its status (0: no answer)."""

    def __init__(self, app_id, static_users, password_users, refresh_users):
        self.app_id = app_id
        self.static_users = static_users
        self.password_users = password_users
        self.refresh_users = refresh_users
        self.results = []  # (end time, status, request id, kind)
        self.took = {}  # request id -> seconds from the request's first send to its answer
        self.lock = threading.Lock()
        self.running = True
        self.threads = [threading.Thread(target=self.run, args=(n,), daemon=True) for n in range(LOAD_THREADS)]
        # The refreshing clients: each one's session, every successor it was answered for each token it
        # sent (more than one for a token would be a forked family), and how its session ended, if it did.
        self.sessions = {}  # number -> session id
        self.successors = {}  # (number, token) -> set of successors answered
        self.ended = {}  # number -> the status and request id of the last refresh that found the session over
        self.threads += [threading.Thread(target=self.refresh, args=(n,), daemon=True)
                         for n in range(LOAD_THREADS, LOAD_THREADS + REFRESH_THREADS)]

    def start(self):
        self.started = time.monotonic()
        for thread in self.threads:
            thread.start()

    def stop(self):
        self.running = False
        for thread in self.threads:
            thread.join()

    def run(self, number):
        connection = None
        count = 0
        while self.running:
            count += 1
            request_id = str(uuid.uuid4())
            if count % PASSWORD_EVERY == 0:
                # Each connection's logins go round the users (`count` is a multiple of PASSWORD_EVERY here).
                user, password = self.password_users[(number + count // PASSWORD_EVERY) % len(self.password_users)]
                credentials, kind = {"type": "password", "password": password}, "password"
            else:
                user, password = self.static_users[(number * 7919 + count) % len(self.static_users)]
                credentials, kind = {"type": "static", "password": password}, "static"
            body = json.dumps({
                "app_id": self.app_id, "user_id": user, "nonce": secrets.token_urlsafe(12),
                "credentials": credentials}).encode()
            sent_at = time.monotonic()
            # A replica that dies after it began its answer leaves the balancer
            # nothing to retry: the client sees its connection drop. Token
            # requests are safe to send again (docs/operations.md), so this
            # client does, once, on a new connection, as the README asks of clients.
            for attempt in (1, 2):
                status = 0
                try:
                    if connection is None:
                        connection = HTTPConnection("127.0.0.1", BALANCER, timeout=(REQUEST_TIMEOUT_MS + RETRY_WINDOW_MS) / 1000 + 8)
                    # Many clients, as behind a real balancer: the limits apply per address.
                    client = f"10.{number}.{count // 250 % 250}.{count % 250 + 1}"
                    connection.request("POST", "/v1/identity_tokens", body=body, headers={
                        "Content-Type": "application/json", "X-Request-Id": request_id, "X-Forwarded-For": client})
                    response = connection.getresponse()
                    response.read()
                    status = response.status
                    if response.getheader("Connection", "").lower() == "close":
                        connection.close()
                        connection = None
                    break
                except Exception as error:
                    status = 0
                    kind = f"{kind}: {type(error).__name__}" if attempt == 2 else f"{kind} (sent again after {type(error).__name__})"
                    if connection is not None:
                        connection.close()
                    connection = None
                    request_id = str(uuid.uuid4())
            with self.lock:
                self.results.append((time.monotonic() - self.started, status, request_id, kind))
                self.took[request_id] = time.monotonic() - sent_at

    def send(self, connection, body, request_id, client):
        """POSTs a token request; (status, body, connection to use next), status 0 when no answer came."""
        try:
            if connection is None:
                connection = HTTPConnection("127.0.0.1", BALANCER, timeout=(REQUEST_TIMEOUT_MS + RETRY_WINDOW_MS) / 1000 + 8)
            connection.request("POST", "/v1/identity_tokens", body=json.dumps(body).encode(), headers={
                "Content-Type": "application/json", "X-Request-Id": request_id, "X-Forwarded-For": client})
            response = connection.getresponse()
            data = response.read()
            if response.getheader("Connection", "").lower() == "close":
                connection.close()
                connection = None
            return response.status, data, connection
        except Exception:
            if connection is not None:
                connection.close()
            return 0, b"", None

    def refresh(self, number):
        """A client that signed in once and answers every challenge with its refresh token: a token
        with no answer (503, a dropped connection) is sent again as it is, as the README asks."""
        connection = None
        user, password = self.refresh_users[number - LOAD_THREADS]
        token = None
        count = 0
        while self.running:
            count += 1
            request_id = str(uuid.uuid4())
            client = f"10.200.{number}.{count % 250 + 1}"
            if token is None:
                body = {"app_id": self.app_id, "user_id": user, "nonce": secrets.token_urlsafe(12),
                        "credentials": {"type": "static", "password": password}, "device_label": f"drill client {number}"}
                kind = "sign-in"
            else:
                body = {"app_id": self.app_id, "nonce": secrets.token_urlsafe(12),
                        "credentials": {"type": "refresh_token", "refresh_token": token}}
                kind = "refresh"
            sent_at = time.monotonic()
            status, data, connection = self.send(connection, body, request_id, client)
            if status == 0:
                # The connection dropped (a replica killed mid-answer): the same request again at once, on a new
                # connection, as the load's clients do; a refresh is then a retry of a token perhaps spent.
                kind = f"{kind} (sent again after a dropped connection)"
                request_id = str(uuid.uuid4())
                status, data, connection = self.send(None, body, request_id, client)
            if status == 200:
                answer = json.loads(data)
                if token is not None:
                    with self.lock:
                        self.successors.setdefault((number, token), set()).add(answer["refresh_token"])
                token = answer["refresh_token"]
                with self.lock:
                    self.sessions[number] = answer["session_id"]
            elif status in (401, 403) and token is not None:
                with self.lock:
                    self.ended[number] = (status, request_id)
                token = None  # the session is over: sign in again, and report it
            with self.lock:
                self.results.append((time.monotonic() - self.started, status, request_id, kind))
                self.took[request_id] = time.monotonic() - sent_at

    def now(self):
        return time.monotonic() - self.started

    def snapshot(self):
        with self.lock:
            return list(self.results)


def latency(load, start, end):
    """p50, p99 and the longest time to an answer (ms) of the requests answered between `start` and `end`."""
    took = sorted(load.took.get(request_id, 0) * 1000 for t, _, request_id, _ in load.snapshot() if start <= t < end)
    if not took:
        return None
    def at(share):
        return took[min(len(took) - 1, int(share * len(took)))]
    return {"p50_ms": round(at(0.50), 1), "p99_ms": round(at(0.99), 1), "max_ms": round(took[-1], 1)}


def per_second_200s(results, start, end):
    counts = [0] * max(int(end - start) + 1, 1)
    for t, status, _, _ in results:
        if start <= t < end and status == 200:
            counts[int(t - start)] += 1
    return counts


def recovery(load, fault_at, baseline, until):
    """What a fault did to the answers between `fault_at` and `until`: when
    the first and last failed answer (anything but 200 and 429) came,
    seconds from the fault to the first 200 after the first failure and to
    the end of the first whole second at 80 % of the baseline after the last
    one, and the answers by status."""
    results = sorted(r for r in load.snapshot() if fault_at <= r[0] < until)
    failures = [t for t, status, _, _ in results if status not in (200, 429)]
    statuses = {}
    for _, status, _, _ in results:
        statuses[status] = statuses.get(status, 0) + 1
    if not failures:
        return None, None, 0.0, 0.0, statuses
    first_failure, last_failure = failures[0] - fault_at, failures[-1] - fault_at
    first_200 = next((t - fault_at for t, status, _, _ in results if status == 200 and t - fault_at > first_failure), None)
    counts = per_second_200s(results, fault_at + last_failure, until)
    steady = next((last_failure + i + 1 for i, c in enumerate(counts[:-1]) if c >= 0.8 * baseline), None)
    return first_failure, last_failure, first_200, steady, statuses


def audit_and_sessions(load, results):
    """The checks after the load, on the database the cluster ended with: the
    tokens answered 200, those without a token.issued row, the refresh tokens
    answered with two successors (a forked family), each refreshing client's
    refreshes, and its session's problems (ended, or at another generation
    than the tokens its client spent)."""
    issued = set(psql(
        "SELECT request_id FROM audit_events WHERE event = 'token.issued'", database="gateway").split())
    answered = [r for r in results if r[1] == 200]
    missing = [r[2] for r in answered if r[2] not in issued]
    forks = [key for key, answered_successors in load.successors.items() if len(answered_successors) > 1]
    session_rows = psql(
        "SELECT session_id, generation, coalesce(revoked_reason, 'live') FROM sessions WHERE session_id IN ("
        + ",".join(f"'{session}'" for session in load.sessions.values()) + ")", database="gateway").split()
    sessions_seen = {}
    for row in session_rows:
        session, generation, state = row.split("|")
        sessions_seen[session] = (int(generation), state)
    refreshes = {number: sum(1 for (n, _) in load.successors if n == number) for number in load.sessions}
    session_problems = []
    for number, session in load.sessions.items():
        generation, state = sessions_seen.get(session, (None, "missing"))
        if state != "live":
            session_problems.append(f"client {number}: session {state}")
        elif generation != refreshes[number]:
            session_problems.append(f"client {number}: session at generation {generation}, the client spent {refreshes[number]} tokens")
    for number, (status, request_id) in load.ended.items():
        reason = psql(f"SELECT reason FROM audit_events WHERE request_id = '{request_id}'", database="gateway").strip()
        session_problems.append(f"client {number}: the session ended ({status}, {reason or 'no audit row'})")
    return answered, missing, forks, refreshes, session_problems


# --- the drill -------------------------------------------------------------

def kill_leader_postgres():
    name = leader()
    pid = postmaster_pid(name)
    log(f"SIGKILL to {name}'s PostgreSQL (postmaster {pid})")
    os.kill(pid, signal.SIGKILL)
    return name


def switchover():
    old = leader()
    candidate = next(m["name"] for m in cluster() if m["role"] == "sync_standby")
    log(f"patronictl switchover {old} -> {candidate}")
    subprocess.run(
        as_postgres(["patronictl", "-c", f"{WORK}/{old}/patroni.yml", "switchover", "--leader", old,
                     "--candidate", candidate, "--force"]),
        check=True, capture_output=True)
    return old


def start_cluster():
    """etcd, three PostgreSQL nodes under Patroni with a synchronous
    standby, HAProxy in front of the leader (and of the gateways to come),
    and the gateway's role and database: what both drills stand on."""
    start_etcd()
    for index in range(len(PG_PORTS)):
        patroni_config(index)
    start_patroni(0)
    wait_for("the first Patroni leader", lambda: leader() == "pg1", timeout=90)
    for index in range(1, len(PG_PORTS)):
        start_patroni(index)
    wait_for("a synchronous standby", has_sync_standby, timeout=120)
    log(f"cluster: {[(m['name'], m['role'], m['state']) for m in cluster()]}")

    write_haproxy()
    start("haproxy", ["haproxy", "-db", "-f", f"{WORK}/haproxy.cfg"])
    # HAProxy starts with every node up until its checks say otherwise: wait
    # until ten connections in a row reach a writable node, then set up.
    def reaches_leader_only():
        return all(psql("SELECT NOT pg_is_in_recovery()").strip() == "t" for _ in range(10))
    wait_for("HAProxy to the leader alone", reaches_leader_only)
    psql(f"CREATE ROLE gateway LOGIN PASSWORD '{GATEWAY_DB_PASSWORD}'")
    psql("CREATE DATABASE gateway OWNER gateway")


def create_app(name):
    """The drill's app through the balancer: static users for the load and
    the refreshing clients, password users, a key, sessions with a grace
    longer than a failover. Returns (app id, static, password, refresh users)."""
    base = f"http://127.0.0.1:{BALANCER}"
    app_id = str(uuid.uuid4())
    static_users = [(f"static-{n}", secrets.token_hex(8)) for n in range(200)]
    # The refreshing clients' users sign in nowhere else: the load's sign-ins start sessions too, and a
    # user's sessions past the app's maximum end the oldest (session_limit), which is not a fault's doing.
    refresh_users = [(f"refresher-{n}", secrets.token_hex(8)) for n in range(REFRESH_THREADS)]
    password_users = [(f"password-{n}", secrets.token_hex(8)) for n in range(20)]
    status, body = http("POST", f"{base}/admin/v1/apps", token=ADMIN_TOKEN, body={
        "app_id": app_id, "name": name, "environment": "development",
        "provider_id": str(uuid.uuid4()), "credential_types": ["static", "password"],
        "plugins": {"static": {"users": [{"user_id": u, "password": p} for u, p in static_users + refresh_users]}},
        # The whole load is one app: its own budget must not be what the drill measures.
        "rate_limits": {"app": {"limit": 1000000, "period_seconds": 60}},
        "sessions": {"reuse_grace_seconds": REUSE_GRACE_SECONDS},
    })
    assert status == 201, body
    status, body = http("POST", f"{base}/admin/v1/apps/{app_id}/keys", token=ADMIN_TOKEN, body={"generate": {}})
    assert status == 201, body
    for user, password in password_users:
        status, body = http("PUT", f"{base}/admin/v1/apps/{app_id}/users/{user}", token=ADMIN_TOKEN,
                            body={"password": password})
        assert status in (200, 201), body
    return app_id, static_users, password_users, refresh_users


def main():
    start_cluster()

    for index in range(len(GATEWAY_PORTS)):
        start_gateway(index)
        wait_for(f"gateway {index + 1}", lambda: gateway_ready(index))
    wait_for("the balancer", lambda: http("GET", f"http://127.0.0.1:{BALANCER}/readyz")[0] == 200)

    base = f"http://127.0.0.1:{BALANCER}"
    app_id, static_users, password_users, refresh_users = create_app("failover drill")

    load = Load(app_id, static_users, password_users, refresh_users)
    load.start()
    log(f"load: {LOAD_THREADS} connections, one request in {PASSWORD_EVERY} a password login")
    time.sleep(15)
    baseline = statistics.median(per_second_200s(load.snapshot(), 5, 15))
    log(f"baseline: {baseline:.0f} tokens/s")

    faults = []

    def fault(name, action, window=35, then=None):
        at = load.now()
        detail = action()
        if then:
            then()
        time.sleep(max(window - (load.now() - at), 0))
        faults.append((name, at, load.now(), detail))

    # The rate-limit counters across a failover: one client address spends
    # its whole `ip` budget (300 a minute) early in a window, the leader is
    # killed, and the address asks again as soon as the cluster answers.
    # The counters are sliding windows aligned to the epoch, so the drill
    # knows what a kept counter still allows then; a reset one allows 300.
    IP_LIMIT, IP_PERIOD = 300, 60

    def spend_budget(address, deadline_s=60):
        """Tokens the address gets until its first 429 (503s are retried)."""
        user, password = static_users[0]
        allowed = 0
        deadline = time.monotonic() + deadline_s
        while time.monotonic() < deadline:
            # A request may wait out the failover within the gateway's retry window.
            status, _ = http("POST", f"{base}/v1/identity_tokens", body={
                "app_id": app_id, "user_id": user, "nonce": "probe",
                "credentials": {"type": "static", "password": password}}, headers={"X-Forwarded-For": address},
                timeout=(REQUEST_TIMEOUT_MS + RETRY_WINDOW_MS) / 1000 + 8)
            if status == 200:
                allowed += 1
            elif status == 429:
                return allowed, time.time()
            else:
                time.sleep(0.1)
        raise SystemExit(f"the budget probe got no 429 within {deadline_s} s; logs are in {WORK}")

    def allowance_if_kept(spent, spent_at, now):
        """What the sliding window allows at `now` after `spent` counted events at `spent_at`."""
        window, then = int(now // IP_PERIOD), int(spent_at // IP_PERIOD)
        if window == then:
            return 0
        if window > then + 1:
            return IP_LIMIT
        weight = 1 - (now - window * IP_PERIOD) / IP_PERIOD
        return max(0, int(IP_LIMIT - spent * weight))

    # At least 25 s left in the window: the failover below takes 3 to 7 s.
    left = IP_PERIOD - time.time() % IP_PERIOD
    if left < 25:
        time.sleep(left + 0.5)
    probe = "192.0.2.1"
    budget_before, spent_at = spend_budget(probe)
    after = {}

    def spend_again():
        after["tokens"], asked_at = spend_budget(probe)
        # Every request of the first probe counted, its 429 included.
        after["kept"] = allowance_if_kept(budget_before + 1, spent_at, asked_at)
        log(f"one address's ip budget: {budget_before} before the failover, {after['tokens']} more right after it"
            f" (a kept counter allows {after['kept']} then, a reset one {IP_LIMIT})")

    fault("1. SIGKILL the leader's PostgreSQL", kill_leader_postgres, then=spend_again)
    budget_after, budget_kept = after["tokens"], after["kept"]
    wait_for("three members again", lambda: has_sync_standby(), timeout=120)
    fault("2. patronictl switchover", switchover)
    wait_for("a synchronous standby", has_sync_standby, timeout=120)

    def kill_gateway():
        processes["gateway1"].send_signal(signal.SIGKILL)
        processes["gateway1"].wait()
        log("SIGKILL to gateway 1")
    fault("3. SIGKILL one gateway replica", kill_gateway)

    def restart_during_failover():
        killed = kill_leader_postgres()
        log("starting gateway 1 while the database fails over")
        start_gateway(0)
        return killed
    fault("4. restart a replica during a failover", restart_during_failover)
    wait_for("gateway 1 ready again", lambda: gateway_ready(0), timeout=60)

    load.stop()
    results = load.snapshot()
    log(f"load stopped: {len(results)} requests")

    # The audit check, on the leader the cluster ended with.
    wait_for("a leader", lambda: leader() is not None)
    answered, missing, forks, refreshes, session_problems = audit_and_sessions(load, results)

    # Which policy refused, and whose requests (the probe's address spends its `ip` budget on purpose).
    refusals = psql(
        "SELECT detail->>'policy', credential_type, count(*) FROM audit_events WHERE reason = 'rate_limited'"
        f" AND client_ip <> '{probe}' GROUP BY 1, 2 ORDER BY 3 DESC", database="gateway").split()

    # The change listener after the failovers: a key activated through one
    # replica signs on both within a moment.
    status, body = http("POST", f"{base}/admin/v1/apps/{app_id}/keys", token=ADMIN_TOKEN, body={"generate": {}})
    new_key = json.loads(body)["key_id"]
    http("POST", f"{base}/admin/v1/apps/{app_id}/keys/{new_key.rsplit('/', 1)[-1]}/activate", token=ADMIN_TOKEN)

    def signs_with_new_key(port):
        user, password = static_users[0]
        status, body = http("POST", f"http://127.0.0.1:{port}/v1/identity_tokens", body={
            "app_id": app_id, "user_id": user, "nonce": "n", "credentials": {"type": "static", "password": password}})
        header = json.loads(base64.urlsafe_b64decode(json.loads(body)["identity_token"].split(".")[0] + "=="))
        return header["kid"] == new_key
    listener = {}
    for index, port in enumerate(GATEWAY_PORTS):
        started = time.monotonic()
        try:
            wait_for(f"gateway {index + 1} to sign with the new key", lambda: signs_with_new_key(port), timeout=10)
            listener[index + 1] = f"{time.monotonic() - started:.1f} s"
        except SystemExit:
            listener[index + 1] = "not within 10 s"

    # The report.
    print()
    print(f"Failover drill, {time.strftime('%Y-%m-%d')}: {LOAD_THREADS} connections, baseline {baseline:.0f} tokens/s,")
    print(f"Patroni ttl {TTL} s, database.request_timeout_ms {REQUEST_TIMEOUT_MS}, database.retry_window_ms {RETRY_WINDOW_MS}:"
          f" recovery target {RECOVERY_TARGET:.0f} s")
    print()
    print("| fault | failed answers from → to | first 200 after | steady after | 200 | 429 | 503 | other | p50 / p99 / max |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    summary = {"baseline": baseline, "faults": []}
    switchover_5xx = 0

    def seconds(value):
        return "—" if value is None else f"{value:.1f} s"
    for name, at, end, _ in faults:
        first_failure, last_failure, first_200, steady, statuses = recovery(load, at, baseline, end)
        other = {s: n for s, n in statuses.items() if s not in (200, 429, 503)}
        other_text = ", ".join(f"{n}× {s or 'no answer'}" for s, n in sorted(other.items())) or "0"
        span = "none" if first_failure is None else f"{first_failure:.1f} → {last_failure:.1f} s"
        times = latency(load, at, end)
        times_text = "—" if times is None else f"{times['p50_ms']:.0f} / {times['p99_ms']:.0f} / {times['max_ms']:.0f} ms"
        print(f"| {name} | {span} | {seconds(first_200)} | {seconds(steady)} | {statuses.get(200, 0)} | "
              f"{statuses.get(429, 0)} | {statuses.get(503, 0)} | {other_text} | {times_text} |")
        summary["faults"].append({
            "fault": name, "first_failure_s": first_failure, "last_failure_s": last_failure,
            "first_200_s": first_200, "steady_s": steady, "statuses": {str(k): v for k, v in statuses.items()},
            "latency": times})
        if "switchover" in name:
            switchover_5xx = sum(n for status, n in statuses.items() if status >= 500 or status == 0)
    totals = {}
    for _, status, _, _ in results:
        totals[status] = totals.get(status, 0) + 1
    print()
    print(f"Whole run: {len(results)} requests, {json.dumps({str(k): v for k, v in sorted(totals.items())})}")
    unanswered = {}
    resent = {}
    for t, status, _, kind in results:
        if status == 0:
            unanswered[kind] = unanswered.get(kind, 0) + 1
        elif "sent again" in kind:
            resent[f"{kind} → {status}"] = resent.get(f"{kind} → {status}", 0) + 1
    if resent:
        print(f"Sent again by the client after a dropped connection, and answered: {json.dumps(resent)}")
    if unanswered:
        print(f"No answer, even when sent again (the client's error): {json.dumps(unanswered)}")
    print(f"Audit check: {len(answered)} tokens answered 200, {len(missing)} without a token.issued row"
          f" in the surviving leader's database")
    print(f"Rate-limit counters across a failover: one address spent its ip budget, {budget_before} tokens, before"
          f" the first failover, and got {budget_after} more as soon as the cluster answered again; a kept counter"
          f" allows {budget_kept} then, a reset one {IP_LIMIT}")
    print(f"Change listener after the failovers: new key signing on gateway 1 after {listener[1]},"
          f" gateway 2 after {listener[2]}")
    print(f"Sessions: {REFRESH_THREADS} clients refreshed {sum(refreshes.values())} times through the faults"
          f" (grace {REUSE_GRACE_SECONDS} s); {len(forks)} tokens answered with two successors;"
          f" {len(session_problems)} problems: {session_problems}")
    summary.update(requests=len(results), statuses={str(k): v for k, v in totals.items()},
                   tokens=len(answered), tokens_without_row=len(missing), listener=listener,
                   ip_budget_before_failover=budget_before, ip_budget_after_failover=budget_after,
                   ip_budget_if_kept=budget_kept, resent=resent,
                   sessions={"refreshes": sum(refreshes.values()), "forks": len(forks), "problems": session_problems})
    print(json.dumps(summary))
    if missing:
        print("request ids without a row:", missing[:20])
    counters_reset = budget_after > budget_kept + 1
    if counters_reset:
        print("the rate-limit counters did not survive the failover")
    # The load spends no limit: each request comes from an address of its own,
    # every login succeeds and the app allows 1 000 000 a minute. A 429 means
    # a counter holds units no request spent: leased blocks a fault stranded,
    # or one user's failure units kept by logins a fault cut off.
    stranded = totals.get(429, 0)
    if stranded:
        print(f"the load got {stranded} answers 429: a counter kept units no request spent;"
              f" refused by (policy|credential type|count): {refusals}")
    if forks:
        print("a refresh token was answered with two successors: its family forked")
    if switchover_5xx:
        print(f"the planned switchover answered {switchover_5xx} requests with an error: it must cost latency only")
    return 1 if (missing or counters_reset or stranded or forks or session_problems or switchover_5xx
                 or any(s not in (200, 429, 503) for s in totals)) else 0


def teardown():
    for name, process in reversed(list(processes.items())):
        if process.poll() is None:
            try:
                os.killpg(process.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + 20
    for process in processes.values():
        try:
            process.wait(timeout=max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
    # A killed postmaster's children, and PostgreSQL instances Patroni left.
    subprocess.run(["pkill", "-KILL", "-f", f"{WORK}/pg"], check=False)


if __name__ == "__main__":
    try:
        code = main()
    finally:
        teardown()
    sys.exit(code)
