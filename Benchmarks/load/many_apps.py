"""Creates many static-user apps, each with its own active signing key, for
the load benchmark's many-apps scenario; writes their ids, one a line.

    many_apps.py create BASE_URL ADMIN_TOKEN COUNT KEY_PEM_FILE OUT_FILE
    many_apps.py warm BASE_URL IDS_FILE

`warm` asks one token of each app in turn (two connections) and prints the
seconds it took: each a tenant the replica loads for the first time.

Each app imports the same RSA key under a key id of its own (key ids are
unique; the material need not be), so ten thousand apps take a minute
instead of the hours ten thousand key generations would. Each tenant still
opens, parses and holds its own signer, as with keys of their own. Two
keep-alive connections, one a core.
"""
import http.client
import json
import sys
import threading
import time
import urllib.parse
import uuid

failures = []
limits = {name: {"limit": 1000000, "period_seconds": 60} for name in ("ip", "app", "user_failures")}


def in_two_threads(work, ids):
    threads = [threading.Thread(target=work, args=(ids[i::2],)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        sys.exit(f"{len(failures)} calls failed, first: {failures[0]}")


def warm(chunk):
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    for app in chunk:
        body = {"app_id": app, "user_id": "warm", "nonce": str(uuid.uuid4())}
        connection.request("POST", "/v1/identity_tokens", json.dumps(body), {"content-type": "application/json"})
        answer = connection.getresponse()
        text = answer.read()
        if answer.status != 200:
            failures.append(f"token for {app}: {answer.status} {text[:200]!r}")


def create(chunk):
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    headers = {"authorization": f"Bearer {token}", "content-type": "application/json"}

    def post(path, body):
        connection.request("POST", path, json.dumps(body), headers)
        answer = connection.getresponse()
        text = answer.read()
        if answer.status not in (200, 201):
            failures.append(f"{path}: {answer.status} {text[:200]!r}")

    for app in chunk:
        post("/admin/v1/apps", {
            "app_id": app, "name": f"many {app[:8]}", "environment": "development", "provider_id": app,
            "credential_types": ["static"], "plugins": {"static": {"allow_any_user": True}}, "rate_limits": limits})
        post(f"/admin/v1/apps/{app}/keys", {"key_id": str(uuid.uuid4()), "private_key_pem": pem})


mode, base = sys.argv[1], sys.argv[2]
url = urllib.parse.urlsplit(base)
if mode == "create":
    token, count, pem, out = sys.argv[3], int(sys.argv[4]), open(sys.argv[5]).read(), sys.argv[6]
    ids = [str(uuid.uuid4()) for _ in range(count)]
    in_two_threads(create, ids)
    with open(out, "w") as file:
        file.write("\n".join(ids) + "\n")
else:
    ids = [line.strip() for line in open(sys.argv[3]) if line.strip()]
    started = time.monotonic()
    in_two_threads(warm, ids)
    print(f"{time.monotonic() - started:.2f}")
