"""Passkey sign-ins for the load benchmark: each sign-in asks for a
challenge (POST /v1/passkeys/authentication_options), signs it as a synced
ES256 passkey would (counter 0, the user present and verified), and sends
the assertion as a token request (POST /v1/identity_tokens). Before the
clock starts, each thread's user registers its passkey through the admin
API. Keys and signatures by `cryptography`, COSE keys by `cbor2`
(.build/passkey-venv). Prints a summary in the part of wrk's format that
Benchmarks/load/run reads, one "request" being one whole sign-in.

    passkey_logins.py BASE_URL APP_ID ADMIN_TOKEN SECONDS THREADS
"""
import base64
import hashlib
import http.client
import json
import os
import sys
import urllib.parse

import cbor2
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from login_driver import drive

base, app_id, admin_token, seconds, threads = (
    sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), int(sys.argv[5]))
target = urllib.parse.urlparse(base)
RP, ORIGIN = "example.com", "https://example.com"
SYNCED = 0x01 | 0x04 | 0x08 | 0x10


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def call(connection, path, body, token=None):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    connection.request("POST", path, json.dumps(body), headers)
    response = connection.getresponse()
    answer = response.read()
    return response.status, (json.loads(answer) if answer else {})


def client_data(kind, challenge):
    return json.dumps({"type": kind, "challenge": challenge, "origin": ORIGIN, "crossOrigin": False},
                      separators=(",", ":")).encode()


class Passkey:
    """One user's synced passkey, registered through the admin API."""

    def __init__(self, connection, user):
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.credential_id = os.urandom(16)
        numbers = self.key.public_key().public_numbers()
        cose = cbor2.dumps({1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")},
                           canonical=True)
        path = f"/admin/v1/apps/{app_id}/users/{user}/passkeys"
        status, options = call(connection, path + ":registration_options", {}, admin_token)
        assert status == 200, (status, options)
        self.handle = options["user"]["id"]
        data = (hashlib.sha256(RP.encode()).digest() + bytes([SYNCED | 0x40]) + bytes(4) + bytes(16)
                + len(self.credential_id).to_bytes(2, "big") + self.credential_id + cose)
        status, answer = call(connection, path, {
            "client_data_json": b64(client_data("webauthn.create", options["challenge"])),
            "attestation_object": b64(cbor2.dumps({"fmt": "none", "attStmt": {}, "authData": data}, canonical=True)),
        }, admin_token)
        assert status == 201, (status, answer)

    def assertion(self, challenge):
        data = client_data("webauthn.get", challenge)
        signed = hashlib.sha256(RP.encode()).digest() + bytes([SYNCED]) + bytes(4)
        signature = self.key.sign(signed + hashlib.sha256(data).digest(), ec.ECDSA(hashes.SHA256()))
        return {"type": "passkey", "credential_id": b64(self.credential_id), "client_data_json": b64(data),
                "authenticator_data": b64(signed), "signature": b64(signature), "user_handle": self.handle}


setup = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
passkeys = [Passkey(setup, f"passkey-user{n}") for n in range(threads)]


def login(worker, connection, sequence):
    status, options = call(connection, "/v1/passkeys/authentication_options", {"app_id": app_id})
    if status != 200:
        return False
    status, _ = call(connection, "/v1/identity_tokens", {
        "app_id": app_id, "nonce": f"k{worker}-{sequence}-{os.urandom(4).hex()}",
        "credentials": passkeys[worker].assertion(options["challenge"])})
    return status == 200


drive(base, seconds, threads, login)
