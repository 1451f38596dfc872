"""The load benchmark's mail server: aiosmtpd on 127.0.0.1 (no TLS, no AUTH:
the gateway's side of TLS is not what the email scenario measures), which
appends "<recipient> <code> <monotonic seconds>" for every message it
accepts to a file that email_logins.py follows. Its own CPU is reported apart,
as tenant_cpu_ms. The code is read from the text/plain part by hand (its
base64 decoded, then the digits): the `email` package's parser took about
half of the sink's CPU, which on two cores is the gateway's to lose; the
tests' sink (Tests/Vendors/smtp_sink.py) parses every message with it.

    email_sink.py PORT FILE
"""
import base64
import re
import sys
import threading
import time

from aiosmtpd.controller import Controller

port, path = int(sys.argv[1]), sys.argv[2]
out = open(path, "a", buffering=1)
lock = threading.Lock()


PLAIN = re.compile(rb"Content-Type: text/plain[^\r\n]*\r\n(?:[^\r\n]+\r\n)*\r\n([A-Za-z0-9+/=\r\n]+)")
CODE = re.compile(rb"\b(\d{6,10})\b")


def code_in(content):
    plain = PLAIN.search(content)
    if not plain:
        return None
    return CODE.search(base64.b64decode(b"".join(plain.group(1).split())))


class Sink:
    async def handle_DATA(self, server, session, envelope):
        code = code_in(envelope.original_content)
        with lock:
            out.write(f"{envelope.rcpt_tos[0].lower()} {code.group(1).decode() if code else '-'} {time.monotonic():.6f}\n")
        return "250 OK"


controller = Controller(Sink(), hostname="127.0.0.1", port=port)
controller.start()
print(f"listening on 127.0.0.1:{port}", flush=True)
threading.Event().wait()
