"""Real SMTP servers on loopback (aiosmtpd) for the email channel's tests,
with every message they accept parsed by Python's own `email` package.

Prints `listening on 127.0.0.1:<port>` for its HTTP control port:
  GET /servers            -> {"starttls": port, "implicit": port, "plain": port, "refusing": port, "stalling": port, "ca": path}
  GET /messages?count=N   -> waits (up to 20 s) until N messages have been accepted in all, then lists them:
                             {"server", "mail_from", "rcpt_tos", "auth_user", "tls", "headers": [[name, value]...],
                              "subject", "message_id", "from", "to", "text", "html", "content_type"}
  GET /sessions           -> how many SMTP connections each server has seen
The servers: `starttls` offers STARTTLS with a certificate for `localhost`
signed by the CA at `ca` and requires it and AUTH (user `mailer`, password
`smtp-secret-password`); `implicit` speaks TLS from the first byte (RFC 8314)
with the same certificate and AUTH; `plain` offers neither (a server TLS cannot be
required of); `refusing` answers 550 to RCPT TO; `stalling` takes 30 s to
answer the first DATA it gets, then accepts at once.
"""
import asyncio
import datetime
import errno
import email
import email.policy
import json
import ssl
import sys
import tempfile
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword, SMTP
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

messages = []
sessions = {}
changed = threading.Condition()


def make_certificates(folder):
    """A CA and a certificate for localhost it signed; returns (ca path, cert path, key path)."""
    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "identity-gateway test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
          .not_valid_after(now + datetime.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    paths = [f"{folder}/ca.pem", f"{folder}/server.pem", f"{folder}/server.key"]
    with open(paths[0], "wb") as f:
        f.write(ca.public_bytes(serialization.Encoding.PEM))
    with open(paths[1], "wb") as f:
        f.write(cert.public_bytes(serialization.Encoding.PEM))
    with open(paths[2], "wb") as f:
        f.write(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                  serialization.NoEncryption()))
    return paths


class Sink:
    def __init__(self, name, refuse=False, stall_first=False):
        self.name, self.refuse, self.stall_first = name, refuse, stall_first

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if self.refuse:
            return "550 5.1.1 no such mailbox here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        if self.stall_first:
            self.stall_first = False
            await asyncio.sleep(30)
            return "451 4.3.0 too late"
        parsed = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
        plain, html = parsed.get_body(("plain",)), parsed.get_body(("html",))
        record = {
            "server": self.name, "mail_from": envelope.mail_from, "rcpt_tos": envelope.rcpt_tos,
            "auth_user": session.auth_data.login.decode() if isinstance(session.auth_data, LoginPassword) else None,
            "tls": session.ssl is not None,
            "headers": [[k, str(v)] for k, v in parsed.items()],
            "subject": str(parsed["subject"]), "message_id": str(parsed["message-id"]),
            "from": str(parsed["from"]), "to": str(parsed["to"]), "content_type": parsed.get_content_type(),
            "text": plain.get_content() if plain else None, "html": html.get_content() if html else None,
            "defects": [type(d).__name__ for part in parsed.walk() for d in part.defects],
        }
        with changed:
            messages.append(record)
            changed.notify_all()
        return "250 2.0.0 queued as " + str(len(messages))


class CountingSMTP(SMTP):
    def connection_made(self, transport):
        with changed:
            sessions[self.event_handler.name] = sessions.get(self.event_handler.name, 0) + 1
        super().connection_made(transport)


class SinkController(Controller):
    def factory(self):
        return CountingSMTP(self.handler, **self.SMTP_kwargs)


def authenticate(server, session, envelope, mechanism, auth_data):
    ok = isinstance(auth_data, LoginPassword) and auth_data.login == b"mailer" and auth_data.password == b"smtp-secret-password"
    return AuthResult(success=ok, auth_data=auth_data)


class Control(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        url = urllib.parse.urlparse(self.path)
        query = urllib.parse.parse_qs(url.query)
        if url.path == "/servers":
            body = self.server.ports
        elif url.path == "/messages":
            count = int(query.get("count", ["0"])[0])
            with changed:
                changed.wait_for(lambda: len(messages) >= count, timeout=20)
                body = list(messages)
        elif url.path == "/sessions":
            with changed:
                body = dict(sessions)
        else:
            self.send_response(404)
            self.end_headers()
            return
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def free_port():
    """A port nothing listens on now (aiosmtpd's controller needs one named before it starts)."""
    import socket
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_on_a_free_port(make):
    """Starts the controller `make` builds on a port free a moment ago; another
    process may take that port first (tests run side by side), so a port
    found taken is replaced by another, a few times."""
    for attempt in range(20):
        controller = make(free_port())
        try:
            controller.start()
            return controller
        except OSError as error:
            if error.errno != errno.EADDRINUSE or attempt == 19:
                raise


def main():
    folder = tempfile.mkdtemp(prefix="smtp-sink-")
    ca, cert, key = make_certificates(folder)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    makers = {
        "starttls": lambda port: SinkController(
            Sink("starttls"), hostname="127.0.0.1", port=port, tls_context=context, require_starttls=True,
            auth_require_tls=True, authenticator=authenticate, auth_required=True),
        "implicit": lambda port: SinkController(
            Sink("implicit"), hostname="127.0.0.1", port=port, ssl_context=context, auth_require_tls=False,
            authenticator=authenticate, auth_required=True),
        "plain": lambda port: SinkController(Sink("plain"), hostname="127.0.0.1", port=port),
        "refusing": lambda port: SinkController(Sink("refusing", refuse=True), hostname="127.0.0.1", port=port),
        "stalling": lambda port: SinkController(Sink("stalling", stall_first=True), hostname="127.0.0.1", port=port),
    }
    ports = {"ca": ca}
    # Kept for as long as the sink serves.
    running = [start_on_a_free_port(make) for make in makers.values()]
    for name, controller in zip(makers, running):
        ports[name] = controller.port
    http = ThreadingHTTPServer(("127.0.0.1", 0), Control)
    http.ports = ports
    print(f"listening on 127.0.0.1:{http.server_port}", flush=True)
    http.serve_forever()


if __name__ == "__main__":
    main()
