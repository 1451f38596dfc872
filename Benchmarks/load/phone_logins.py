"""Phone-code logins for the load benchmark: each login asks for a code
(POST /v1/phone_codes for a fresh number), takes the code from the SMS
webhook this script serves, and signs in with it (POST /v1/identity_tokens).
wrk cannot read the webhook, hence a driver of its own. Prints a summary in
the part of wrk's format that Benchmarks/load/run reads, one "request" being
one whole login. With `captcha`, each code request carries a fresh
captcha_token, and the same server answers the app's Turnstile siteverify
(POST /siteverify) as the provider does for a solved check.

    phone_logins.py BASE_URL APP_ID WEBHOOK_PORT SECONDS THREADS [captcha]
"""
import http.server
import json
import random
import sys
import threading
import time
import uuid

from login_driver import drive

base, app_id, webhook_port, seconds, threads = (
    sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]))
captcha = sys.argv[6:] == ["captcha"]
codes = {}
codes_lock = threading.Lock()


class Webhook(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        if self.path == "/siteverify":
            answer = json.dumps({"success": True, "hostname": "load.example", "error-codes": [],
                                 "challenge_ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)
            return
        message = json.loads(body)
        with codes_lock:
            codes[message["phone_number"]] = message["code"]
        self.send_response(204)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", webhook_port), Webhook)
threading.Thread(target=server.serve_forever, daemon=True).start()


def post(connection, path, body):
    connection.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    response = connection.getresponse()
    response.read()
    return response.status


def login(worker, connection, sequence):
    rng = generators[worker]
    number = "+1555%07d" % rng.randrange(10_000_000)
    request = {"app_id": app_id, "phone_number": number}
    if captcha:
        request["captcha_token"] = "0.load." + uuid.uuid4().hex
    ok = post(connection, "/v1/phone_codes", request) == 202
    with codes_lock:
        code = codes.pop(number, None)
    if not (ok and code):
        return False
    return post(connection, "/v1/identity_tokens", {
        "app_id": app_id, "nonce": "p%d-%d-%d" % (worker, sequence, rng.randrange(10**9)),
        "credentials": {"type": "phone_code", "phone_number": number, "code": code}}) == 200


generators = [random.Random(worker) for worker in range(threads)]
drive(base, seconds, threads, login)
server.shutdown()
