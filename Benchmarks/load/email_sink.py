"""The load benchmark's mail server: aiosmtpd on 127.0.0.1 (no TLS, no AUTH:
the gateway's side of TLS is not what the email scenario measures), which
appends "<recipient> <code> <monotonic seconds>" for every message it
accepts to a file that email_logins.py follows. Its own CPU is reported apart,
as tenant_cpu_ms.

    email_sink.py PORT FILE
"""
import email
import email.policy
import re
import sys
import threading
import time

from aiosmtpd.controller import Controller

port, path = int(sys.argv[1]), sys.argv[2]
out = open(path, "a", buffering=1)
lock = threading.Lock()


class Sink:
    async def handle_DATA(self, server, session, envelope):
        message = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
        code = re.search(r"\b(\d{6,10})\b", message.get_body(("plain",)).get_content())
        with lock:
            out.write(f"{envelope.rcpt_tos[0].lower()} {code.group(1) if code else '-'} {time.monotonic():.6f}\n")
        return "250 OK"


controller = Controller(Sink(), hostname="127.0.0.1", port=port)
controller.start()
print(f"listening on 127.0.0.1:{port}", flush=True)
threading.Event().wait()
