"""Credential public keys and signatures as authenticators make them, by
PyPI's `cryptography` (the keys, the signatures) and `cbor2` (the COSE_Key
encoding), for the passkey plugin's COSE reader and verifier to be held to.
Prints a JSON list of cases, each {"name", "key", "message", "signature"
(hex), "key_ok", "valid"}: whether the key must be taken, and whether the
signature is the key's over the message.
Usage: cose_judge.py"""
import json
import os

import cbor2
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa


def ec2(public, alg=-7, crv=1, trim=0):
    numbers = public.public_numbers()
    return {1: 2, 3: alg, -1: crv, -2: numbers.x.to_bytes(32, "big")[trim:], -3: numbers.y.to_bytes(32, "big")}


def rsa_key(public, alg=-257):
    numbers = public.public_numbers()
    return {1: 3, 3: alg, -1: numbers.n.to_bytes((numbers.n.bit_length() + 7) // 8, "big"),
            -2: numbers.e.to_bytes((numbers.e.bit_length() + 7) // 8, "big")}


def okp(public, alg=-8):
    return {1: 1, 3: alg, -1: 6, -2: public.public_bytes_raw()}


cases = []


def add(name, key, message, signature, key_ok, valid):
    encoded = key if isinstance(key, bytes) else cbor2.dumps(key, canonical=True)
    cases.append({"name": name, "key": encoded.hex(), "message": message.hex(), "signature": signature.hex(),
                  "key_ok": key_ok, "valid": valid})


for round in range(8):
    message = os.urandom(37 + round * 11)
    other = os.urandom(len(message))

    p256 = ec.generate_private_key(ec.SECP256R1())
    signed = p256.sign(message, ec.ECDSA(hashes.SHA256()))
    add("es256", ec2(p256.public_key()), message, signed, True, True)
    add("es256 other message", ec2(p256.public_key()), other, signed, True, False)
    stranger = ec.generate_private_key(ec.SECP256R1()).sign(message, ec.ECDSA(hashes.SHA256()))
    add("es256 another key's signature", ec2(p256.public_key()), message, stranger, True, False)
    add("es256 signature cut", ec2(p256.public_key()), message, signed[:-1], True, False)
    add("es256 with alg RS256", ec2(p256.public_key(), alg=-257), message, signed, False, False)
    add("es256 on crv 2", ec2(p256.public_key(), crv=2), message, signed, False, False)
    add("es256 x of 31 bytes", ec2(p256.public_key(), trim=1), message, signed, False, False)
    off_curve = ec2(p256.public_key())
    off_curve[-3] = bytes([off_curve[-3][0] ^ 1]) + off_curve[-3][1:]
    add("es256 point off the curve", off_curve, message, signed, False, False)
    no_alg = ec2(p256.public_key())
    del no_alg[3]
    add("es256 without alg", no_alg, message, signed, False, False)
    with_kid = ec2(p256.public_key())
    with_kid[2] = b"key-1"
    add("es256 with a kid", with_kid, message, signed, True, True)

    rsa_private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    signed = rsa_private.sign(message, padding.PKCS1v15(), hashes.SHA256())
    add("rs256", rsa_key(rsa_private.public_key()), message, signed, True, True)
    add("rs256 other message", rsa_key(rsa_private.public_key()), other, signed, True, False)
    pss = rsa_private.sign(message, padding.PSS(padding.MGF1(hashes.SHA256()), 32), hashes.SHA256())
    add("rs256 given a PSS signature", rsa_key(rsa_private.public_key()), message, pss, True, False)
    add("rsa key with alg ES256", rsa_key(rsa_private.public_key(), alg=-7), message, signed, False, False)

    ed = ed25519.Ed25519PrivateKey.generate()
    signed = ed.sign(message)
    add("eddsa", okp(ed.public_key()), message, signed, True, True)
    add("eddsa other message", okp(ed.public_key()), other, signed, True, False)
    add("okp key with alg ES256", okp(ed.public_key(), alg=-7), message, signed, False, False)

add("not a map", cbor2.dumps([1, 2, 3]), b"m", b"s", False, False)
add("unknown alg", {1: 2, 3: -36, -1: 1, -2: b"\x01" * 32, -3: b"\x02" * 32}, b"m", b"s", False, False)
add("truncated", cbor2.dumps({1: 2, 3: -7})[:-1], b"m", b"s", False, False)
print(json.dumps(cases))
