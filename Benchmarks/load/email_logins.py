"""Email-code logins for the load benchmark: each login asks for a code
(POST /v1/email_codes for a fresh address), takes the code from the mail
the gateway's outbox delivered to email_sink.py (followed in the file it appends to), and
signs in with it (POST /v1/identity_tokens). Prints a summary in the part of
wrk's format that Benchmarks/load/run reads, one "request" being one whole login.

    email_logins.py BASE_URL APP_ID FILE SECONDS THREADS
    email_logins.py BASE_URL APP_ID FILE burst COUNT
        (queues COUNT codes as fast as 16 threads can ask, then reports how
        fast the outbox delivered them: messages a second between the first
        and the last the sink received)
"""
import http.client
import json
import random
import sys
import threading
import time
import urllib.parse

from login_driver import drive

base, app_id, path = sys.argv[1], sys.argv[2], sys.argv[3]
codes, arrivals = {}, []
arrived = threading.Condition()
following = threading.Event()


def follow():
    """The sink's lines from the file's end on: this run's messages only."""
    with open(path) as lines:
        lines.seek(0, 2)
        following.set()
        pending = ""
        while True:
            chunk = lines.readline()
            if not chunk:
                time.sleep(0.001)
                continue
            pending += chunk
            if not pending.endswith("\n"):
                continue
            address, code, at = pending.split()
            pending = ""
            with arrived:
                codes[address] = code
                arrivals.append(float(at))
                arrived.notify_all()


threading.Thread(target=follow, daemon=True).start()
following.wait()


def post(connection, path, body):
    connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    response = connection.getresponse()
    response.read()
    return response.status


def wait_for_code(address, timeout=10):
    with arrived:
        arrived.wait_for(lambda: address in codes, timeout=timeout)
        return codes.pop(address, None)


def login(worker, connection, sequence):
    rng = generators[worker]
    address = "u%d-%d-%d@load.example" % (worker, sequence, rng.randrange(10**9))
    if post(connection, "/v1/email_codes", {"app_id": app_id, "email": address}) != 202:
        return False
    code = wait_for_code(address)
    if not code:
        return False
    return post(connection, "/v1/identity_tokens", {
        "app_id": app_id, "nonce": "e%d-%d-%d" % (worker, sequence, rng.randrange(10**9)),
        "credentials": {"type": "email_code", "email": address, "code": code}}) == 200


generators = [random.Random(worker) for worker in range(64)]
if sys.argv[4] == "burst":
    count = int(sys.argv[5])
    target = urllib.parse.urlparse(base)

    def ask(worker):
        connection = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
        for n in range(worker, count, 16):
            assert post(connection, "/v1/email_codes", {"app_id": app_id, "email": "b%d@burst.example" % n}) == 202

    started = time.monotonic()
    workers = [threading.Thread(target=ask, args=(n,)) for n in range(16)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    queued = time.monotonic()
    with arrived:
        arrived.wait_for(lambda: len(arrivals) >= count, timeout=300)
        got = list(arrivals)
    span = max(got) - min(got) if len(got) > 1 else float("nan")
    print(f"queued {count} in {queued - started:.2f}s ({count / (queued - started):.0f}/s); "
          f"delivered {len(got)}, {len(got) / span:.0f} messages/s from the first to the last")
else:
    drive(base, float(sys.argv[4]), int(sys.argv[5]), login)
