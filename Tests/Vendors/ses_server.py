"""Amazon SES v2 as moto serves it, for the email channel's `ses` sender,
with every request's SigV4 signature checked by moto (botocore recomputes
it with the access key's secret) and every message it accepts read back:
its count by boto3 (`get_send_quota`, signed with the same key), its raw
MIME parsed by Python's own `email` package.

Prints `listening on 127.0.0.1:<port>` for its HTTP control port:
  GET /setup              -> {"endpoint", "region", "access_key_id", "secret_access_key", "from"}
                             (an IAM user whose key may send as `from`, a verified identity)
  GET /messages?count=N   -> waits (up to 20 s) until moto holds N messages, then
                             {"sent_by_boto3": n, "messages": [{"source", "destinations", "subject",
                              "message_id", "from", "to", "text", "headers": [[name, value]...]}]}
"""
import email
import email.policy
import json
import os
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# Every request to moto is authenticated from the first: the setup below goes through its backends directly.
os.environ["INITIAL_NO_AUTH_ACTION_COUNT"] = "0"

import boto3  # noqa: E402
from moto.core import DEFAULT_ACCOUNT_ID  # noqa: E402
from moto.iam.models import iam_backends  # noqa: E402
from moto.moto_server.threaded_moto_server import ThreadedMotoServer  # noqa: E402
from moto.ses.models import ses_backends  # noqa: E402

REGION = "eu-west-1"
SENDER = "codes@shop.example"

moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
moto.start()
endpoint = f"http://127.0.0.1:{moto._server.server_port}"

iam = iam_backends[DEFAULT_ACCOUNT_ID]["global"]
iam.create_user(region_name=REGION, user_name="gateway", path="/")
iam.put_user_policy(
    "gateway", "send",
    json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "ses:*", "Resource": "*"}]}))
key = iam.create_access_key("gateway")
ses = ses_backends[DEFAULT_ACCOUNT_ID][REGION]
ses.verify_email_identity(SENDER)

setup = {
    "endpoint": endpoint, "region": REGION, "access_key_id": key.access_key_id,
    "secret_access_key": key.secret_access_key, "from": SENDER,
}


def parsed(raw):
    message = email.message_from_string(raw.raw_data, policy=email.policy.default)
    body = message.get_body(preferencelist=("plain",))
    return {
        "source": raw.source, "destinations": list(raw.destinations), "subject": str(message["Subject"]),
        "message_id": str(message["Message-ID"]), "from": str(message["From"]), "to": str(message["To"]),
        "text": body.get_content() if body is not None else None,
        "headers": [[name, str(value)] for name, value in message.items()],
    }


class Control(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, value):
        body = json.dumps(value).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        url = urllib.parse.urlparse(self.path)
        if url.path == "/setup":
            return self.answer(setup)
        if url.path == "/messages":
            count = int(urllib.parse.parse_qs(url.query).get("count", ["0"])[0])
            deadline = time.monotonic() + 20
            while len(ses.sent_messages) < count and time.monotonic() < deadline:
                time.sleep(0.02)
            client = boto3.client(
                "ses", region_name=REGION, endpoint_url=endpoint, aws_access_key_id=key.access_key_id,
                aws_secret_access_key=key.secret_access_key)
            sent = client.get_send_quota()["SentLast24Hours"]
            return self.answer({"sent_by_boto3": sent, "messages": [parsed(m) for m in list(ses.sent_messages)]})
        self.send_error(404)


control = ThreadingHTTPServer(("127.0.0.1", 0), Control)
print(f"listening on 127.0.0.1:{control.server_address[1]}", flush=True)
control.serve_forever()
