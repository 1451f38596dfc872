"""Passkey registrations and assertions made by a software authenticator
written here with `cryptography` (keys, signatures) and `cbor2` (COSE keys,
attestation objects), each also mutated (a flag, the origin, the challenge,
the RP ID, the type, the counter, the signature, truncated CBOR...), and
verified by py_webauthn (`webauthn` on PyPI): the judge the passkey plugin's
ceremonies are held to. Prints a JSON list of cases, each
  {"name", "kind": "registration" | "assertion", "expect", "verified", "error",
   "challenge": <the expected challenge, base64url>, "rp_id", "origins",
   "require_uv", "algorithms": [COSE ids], "credential": <WebAuthn JSON>,
   and for an assertion "public_key": <base64url COSE key>, "sign_count"}
where "verified" is py_webauthn's verdict and "expect" what the plugin must
do: "agree" (the same verdict), "stricter" (refuse what py_webauthn may take:
a cross-origin frame, a member named twice, BS without BE, attested data in
an assertion) or "unverified_attestation" (take, unverified, a statement of
a registered format that py_webauthn checks and refuses: docs/plugins.md's policy).
Usage: passkey_ceremony_judge.py SEED"""
import hashlib
import json
import os
import random
import sys

import cbor2
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from webauthn import verify_authentication_response, verify_registration_response
from webauthn.helpers import base64url_to_bytes, bytes_to_base64url
from webauthn.helpers.cose import COSEAlgorithmIdentifier

rng = random.Random(int(sys.argv[1]))
RP = "example.com"
WEB = "https://example.com"
ANDROID = "android:apk-key-hash:" + bytes_to_base64url(bytes([7] * 32))
ORIGINS = [WEB, ANDROID]
ALL_ALGORITHMS = [-7, -8, -257]
UP, UV, BE, BS, AT, ED = 0x01, 0x04, 0x08, 0x10, 0x40, 0x80
SYNCED, BOUND, SYNCABLE = UP | UV | BE | BS, UP | UV, UP | UV | BE


class Authenticator:
    def __init__(self, alg):
        self.alg = alg
        self.credential_id = os.urandom(rng.choice([16, 20, 32, 64]))
        if alg == -7:
            self.key = ec.generate_private_key(ec.SECP256R1())
        elif alg == -257:
            self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        else:
            self.key = ed25519.Ed25519PrivateKey.generate()

    def cose(self):
        public = self.key.public_key()
        if self.alg == -7:
            numbers = public.public_numbers()
            key = {1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")}
        elif self.alg == -257:
            numbers = public.public_numbers()
            key = {1: 3, 3: -257, -1: numbers.n.to_bytes(256, "big"), -2: numbers.e.to_bytes(3, "big")}
        else:
            key = {1: 1, 3: -8, -1: 6, -2: public.public_bytes_raw()}
        return cbor2.dumps(key, canonical=True)

    def sign(self, data):
        if self.alg == -7:
            return self.key.sign(data, ec.ECDSA(hashes.SHA256()))
        if self.alg == -257:
            return self.key.sign(data, padding.PKCS1v15(), hashes.SHA256())
        return self.key.sign(data)


def client_data(kind, challenge, origin, cross_origin=False, extra=""):
    text = json.dumps({"type": kind, "challenge": bytes_to_base64url(challenge), "origin": origin,
                       "crossOrigin": cross_origin}, separators=(",", ":"))
    return (text[:-1] + extra + "}").encode()


def auth_data(authenticator, flags, count, rp=RP, attested=False):
    data = hashlib.sha256(rp.encode()).digest() + bytes([flags | (AT if attested else 0)]) + count.to_bytes(4, "big")
    if attested:
        credential_id = authenticator.credential_id
        data += bytes(16) + len(credential_id).to_bytes(2, "big") + credential_id + authenticator.cose()
    return data


def registration(authenticator, challenge, origin=WEB, flags=SYNCED, rp=RP, kind="webauthn.create", fmt="none",
                 statement=None, attested=True, data=None, truncate=None, cross_origin=False, extra=""):
    data = data or client_data(kind, challenge, origin, cross_origin, extra)
    obj = cbor2.dumps({"fmt": fmt, "attStmt": statement or {},
                       "authData": auth_data(authenticator, flags, 0, rp, attested)}, canonical=True)
    if truncate is not None:
        obj = obj[:truncate]
    credential_id = bytes_to_base64url(authenticator.credential_id)
    return {"id": credential_id, "rawId": credential_id, "type": "public-key", "clientExtensionResults": {},
            "response": {"clientDataJSON": bytes_to_base64url(data), "attestationObject": bytes_to_base64url(obj)}}


def assertion(authenticator, challenge, origin=WEB, flags=SYNCED, count=0, rp=RP, kind="webauthn.get",
              signer=None, attested=False, cross_origin=False, flip=None, truncate=None, extra=""):
    data = client_data(kind, challenge, origin, cross_origin, extra)
    signed = auth_data(authenticator, flags, count, rp, attested)
    signature = (signer or authenticator).sign(signed + hashlib.sha256(data).digest())
    if flip is not None:
        signature = bytearray(signature)
        signature[flip % len(signature)] ^= 1 << rng.randrange(8)
        signature = bytes(signature)
    if truncate is not None:
        signed = signed[:truncate]
    credential_id = bytes_to_base64url(authenticator.credential_id)
    return {"id": credential_id, "rawId": credential_id, "type": "public-key", "clientExtensionResults": {},
            "response": {"clientDataJSON": bytes_to_base64url(data), "authenticatorData": bytes_to_base64url(signed),
                         "signature": bytes_to_base64url(signature),
                         "userHandle": bytes_to_base64url(bytes([1] * 32))}}


def judge(case):
    try:
        if case["kind"] == "registration":
            verify_registration_response(
                credential=case["credential"], expected_challenge=base64url_to_bytes(case["challenge"]),
                expected_rp_id=case["rp_id"], expected_origin=case["origins"], require_user_verification=case["require_uv"],
                supported_pub_key_algs=[COSEAlgorithmIdentifier(alg) for alg in case["algorithms"]])
        else:
            verify_authentication_response(
                credential=case["credential"], expected_challenge=base64url_to_bytes(case["challenge"]),
                expected_rp_id=case["rp_id"], expected_origin=case["origins"],
                credential_public_key=base64url_to_bytes(case["public_key"]),
                credential_current_sign_count=case["sign_count"], require_user_verification=case["require_uv"])
        return True, None
    except Exception as error:  # every refusal is a verdict, whatever its class
        return False, f"{type(error).__name__}: {error}"


cases = []


def add(name, kind, credential, challenge, expect="agree", require_uv=True, algorithms=ALL_ALGORITHMS,
        public_key=None, sign_count=0):
    case = {"name": name, "kind": kind, "expect": expect, "challenge": bytes_to_base64url(challenge), "rp_id": RP,
            "origins": ORIGINS, "require_uv": require_uv, "algorithms": algorithms, "credential": credential}
    if kind == "assertion":
        case["public_key"] = bytes_to_base64url(public_key)
        case["sign_count"] = sign_count
    case["verified"], case["error"] = judge(case)
    cases.append(case)


def fresh():
    return os.urandom(32)


for alg in (-7, -257, -8):
    authenticator = Authenticator(alg)
    stranger = Authenticator(alg)
    for origin in ORIGINS:
        for flags in (SYNCED, BOUND, SYNCABLE):
            tag = f"alg {alg} at {origin[:12]} flags {flags:#04x}"
            # Registrations: the good one, then each bent one way.
            c = fresh()
            add(f"registration {tag}", "registration", registration(authenticator, c, origin, flags), c)
            c = fresh()
            add(f"registration {tag}: UV not required", "registration",
                registration(authenticator, c, origin, flags & ~UV), c, require_uv=False)
            c = fresh()
            add(f"registration {tag}: type webauthn.get", "registration",
                registration(authenticator, c, origin, flags, kind="webauthn.get"), c)
            c = fresh()
            add(f"registration {tag}: another challenge", "registration", registration(authenticator, c, origin, flags), fresh())
            c = fresh()
            add(f"registration {tag}: another origin", "registration",
                registration(authenticator, c, rng.choice(["https://evil.example", "https://example.com.evil.example",
                                                           "http://example.com", "https://example.com:8443"]), flags), c)
            c = fresh()
            add(f"registration {tag}: another RP ID", "registration",
                registration(authenticator, c, origin, flags, rp=rng.choice(["evil.example", "www.example.com", "example.co"])), c)
            c = fresh()
            add(f"registration {tag}: no user presence", "registration", registration(authenticator, c, origin, flags & ~UP), c)
            c = fresh()
            add(f"registration {tag}: no user verification", "registration",
                registration(authenticator, c, origin, flags & ~UV), c)
            c = fresh()
            add(f"registration {tag}: an algorithm the app refuses", "registration",
                registration(authenticator, c, origin, flags), c, algorithms=[a for a in ALL_ALGORITHMS if a != alg] or [-7])
            c = fresh()
            add(f"registration {tag}: no attested credential", "registration",
                registration(authenticator, c, origin, flags, attested=False), c)
            c = fresh()
            add(f"registration {tag}: unknown format", "registration",
                registration(authenticator, c, origin, flags, fmt=rng.choice(["selfie", "None", "packed2"])), c)
            c = fresh()
            add(f"registration {tag}: format none with a statement", "registration",
                registration(authenticator, c, origin, flags, statement={"alg": -7}), c)
            c = fresh()
            whole = len(cbor2.dumps({"fmt": "none", "attStmt": {}, "authData": auth_data(authenticator, flags, 0, RP, True)}))
            add(f"registration {tag}: truncated attestation object", "registration",
                registration(authenticator, c, origin, flags, truncate=rng.randrange(1, whole)), c)
            c = fresh()
            add(f"registration {tag}: client data that is not JSON", "registration",
                registration(authenticator, c, origin, flags, data=client_data("webauthn.create", c, origin)[:-1]), c)
            c = fresh()
            add(f"registration {tag}: a cross-origin frame", "registration",
                registration(authenticator, c, origin, flags, cross_origin=True), c, expect="stricter")
            c = fresh()
            add(f"registration {tag}: framed by another site", "registration",
                registration(authenticator, c, origin, flags, extra=',"topOrigin":"https://evil.example"'), c,
                expect="stricter")
            c = fresh()
            add(f"registration {tag}: a member named twice", "registration",
                registration(authenticator, c, origin, flags, extra=',"type":"webauthn.create"'), c, expect="stricter")
            c = fresh()
            add(f"registration {tag}: backed up without eligibility", "registration",
                registration(authenticator, c, origin, (flags | BS) & ~BE), c, expect="stricter")
            c = fresh()
            add(f"registration {tag}: an unverified packed statement", "registration",
                registration(authenticator, c, origin, flags, fmt="packed", statement={"alg": alg, "sig": os.urandom(8)}),
                c, expect="unverified_attestation")

            # Assertions: counter 0 both sides, and counting; then bent.
            key = authenticator.cose()
            c = fresh()
            add(f"assertion {tag}: counter 0", "assertion", assertion(authenticator, c, origin, flags), c, public_key=key)
            stored = rng.randrange(1, 1000)
            c = fresh()
            add(f"assertion {tag}: counter grows", "assertion",
                assertion(authenticator, c, origin, flags, count=stored + rng.randrange(1, 5)), c, public_key=key,
                sign_count=stored)
            c = fresh()
            add(f"assertion {tag}: backup state changed", "assertion",
                assertion(authenticator, c, origin, (flags ^ BS) if flags & BE else flags), c, public_key=key)
            c = fresh()
            add(f"assertion {tag}: UV not required", "assertion", assertion(authenticator, c, origin, flags & ~UV), c,
                public_key=key, require_uv=False)
            c = fresh()
            add(f"assertion {tag}: counter went back", "assertion",
                assertion(authenticator, c, origin, flags, count=stored - 1), c, public_key=key, sign_count=stored)
            c = fresh()
            add(f"assertion {tag}: counter stood still", "assertion",
                assertion(authenticator, c, origin, flags, count=stored), c, public_key=key, sign_count=stored)
            c = fresh()
            add(f"assertion {tag}: counter 0 after counting", "assertion",
                assertion(authenticator, c, origin, flags), c, public_key=key, sign_count=stored)
            for _ in range(3):
                c = fresh()
                add(f"assertion {tag}: a bit of the signature flipped", "assertion",
                    assertion(authenticator, c, origin, flags, flip=rng.randrange(1000)), c, public_key=key)
            c = fresh()
            add(f"assertion {tag}: signed by another key", "assertion",
                assertion(authenticator, c, origin, flags, signer=stranger), c, public_key=key)
            c = fresh()
            add(f"assertion {tag}: another challenge", "assertion", assertion(authenticator, c, origin, flags), fresh(),
                public_key=key)
            c = fresh()
            add(f"assertion {tag}: another origin", "assertion",
                assertion(authenticator, c, rng.choice(["https://evil.example", "android:apk-key-hash:AAAA"]), flags), c,
                public_key=key)
            c = fresh()
            add(f"assertion {tag}: another RP ID", "assertion",
                assertion(authenticator, c, origin, flags, rp="evil.example"), c, public_key=key)
            c = fresh()
            add(f"assertion {tag}: type webauthn.create", "assertion",
                assertion(authenticator, c, origin, flags, kind="webauthn.create"), c, public_key=key)
            c = fresh()
            add(f"assertion {tag}: no user presence", "assertion", assertion(authenticator, c, origin, flags & ~UP), c,
                public_key=key)
            c = fresh()
            add(f"assertion {tag}: no user verification", "assertion", assertion(authenticator, c, origin, flags & ~UV), c,
                public_key=key)
            c = fresh()
            add(f"assertion {tag}: truncated authenticator data", "assertion",
                assertion(authenticator, c, origin, flags, truncate=rng.randrange(0, 37)), c, public_key=key)
            c = fresh()
            add(f"assertion {tag}: a cross-origin frame", "assertion",
                assertion(authenticator, c, origin, flags, cross_origin=True), c, public_key=key, expect="stricter")
            c = fresh()
            add(f"assertion {tag}: attested credential data", "assertion",
                assertion(authenticator, c, origin, flags, attested=True), c, public_key=key, expect="stricter")
            c = fresh()
            add(f"assertion {tag}: backed up without eligibility", "assertion",
                assertion(authenticator, c, origin, (flags | BS) & ~BE), c, public_key=key, expect="stricter")

print(json.dumps(cases))
