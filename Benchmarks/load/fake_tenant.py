"""A tenant's user service for the load benchmark's webhook scenario: checks
the gateway's signature (as the README tells tenants to) and answers
{"valid": true} after DELAY_MS, over kept-alive HTTP/1.1 connections.

    fake_tenant.py PORT SECRET DELAY_MS
"""
import hashlib
import hmac
import http.server
import sys
import time

port, secret, delay = int(sys.argv[1]), sys.argv[2].encode(), float(sys.argv[3]) / 1000


class Tenant(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # The status line, headers and body leave as separate writes: without
    # TCP_NODELAY, Nagle's algorithm and the gateway's delayed ACK hold each
    # answer back 40 ms.
    disable_nagle_algorithm = True

    def do_POST(self):
        started = time.monotonic()
        body = self.rfile.read(int(self.headers["Content-Length"]))
        timestamp = self.headers.get("X-Gateway-Timestamp", "")
        expected = "v1=" + hmac.new(secret, timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
        signed = hmac.compare_digest(self.headers.get("X-Gateway-Signature", ""), expected)
        answer = b'{"valid":true}' if signed else b'{"error":"bad signature"}'
        left = delay - (time.monotonic() - started)
        if left > 0:
            time.sleep(left)
        self.send_response(200 if signed else 401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(answer)))
        self.end_headers()
        self.wfile.write(answer)

    def log_message(self, *args):
        pass


http.server.ThreadingHTTPServer.daemon_threads = True
http.server.ThreadingHTTPServer(("127.0.0.1", port), Tenant).serve_forever()
