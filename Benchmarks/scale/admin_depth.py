"""The admin lists at depth, for the scale benchmark (Benchmarks/scale/run):
each "request" is three pages of 50, each from a random depth reached by
cursor, as a console user paging far into a big app would: the password
app's users after a random seeded user id, the audit trail of the big app
before a random moment of the seeded six months, and the sessions of a
seeded user of the refresh app. Prints the summary in the part of wrk's
format that Benchmarks/load/run reads.

    admin_depth.py BASE_URL ADMIN_TOKEN PASSWORD_APP_ID REFRESH_APP_ID SEEDED_USERS SECONDS THREADS
"""
import base64
import datetime
import os
import random
import sys

# The load benchmark's drivers share their loop and summary (Benchmarks/load/login_driver.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "load"))
from login_driver import drive  # noqa: E402

base, token, password_app, refresh_app = sys.argv[1:5]
seeded_users, seconds, threads = int(sys.argv[5]), float(sys.argv[6]), int(sys.argv[7])
headers = {"Authorization": "Bearer " + token}


def get(connection, path):
    connection.request("GET", path, headers=headers)
    response = connection.getresponse()
    response.read()
    return response.status == 200


def pages(worker, connection, sequence):
    rng = generators[worker]
    cursor = base64.urlsafe_b64encode(f"seed-{rng.randrange(1, max(seeded_users, 2))}".encode()).decode().rstrip("=")
    before = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(seconds=rng.randrange(180 * 86400))
    ok = get(connection, f"/admin/v1/apps/{password_app}/users?limit=50&cursor={cursor}")
    ok = get(connection, f"/admin/v1/apps/{password_app}/audit_events?limit=50&to={before.strftime('%Y-%m-%dT%H:%M:%SZ')}") and ok
    user = f"seed-{rng.randrange(1, max(seeded_users // 10, 2))}"
    return get(connection, f"/admin/v1/apps/{refresh_app}/users/{user}/sessions?limit=50") and ok


generators = [random.Random(worker) for worker in range(threads)]
drive(base, seconds, threads, pages)
