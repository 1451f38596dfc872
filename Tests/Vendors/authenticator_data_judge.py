"""Authenticator data as authenticators write it, read by py_webauthn
(`webauthn` on PyPI), for the passkey plugin's reader to be held to. Keys
and signatures by `cryptography`, CBOR by `cbor2`. Prints a JSON list of
cases, each {"name", "hex", "webauthn", "expect"}: py_webauthn's reading
(null when it refuses) and what the strict reader must do: "agree" (read
what py_webauthn reads, or refuse what it refuses), or "refuse" (a form
refused by design that py_webauthn lets through).
Usage: authenticator_data_judge.py SEED"""
import json
import os
import random
import sys

import cbor2
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from webauthn.helpers import parse_authenticator_data

rng = random.Random(int(sys.argv[1]))
UP, UV, BE, BS, AT, ED = 0x01, 0x04, 0x08, 0x10, 0x40, 0x80


def es256_key():
    numbers = ec.generate_private_key(ec.SECP256R1()).public_key().public_numbers()
    return cbor2.dumps({1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")},
                       canonical=True)


def ed25519_key():
    return cbor2.dumps({1: 1, 3: -8, -1: 6, -2: ed25519.Ed25519PrivateKey.generate().public_key().public_bytes_raw()},
                       canonical=True)


def auth_data(flags, count, credential=None, extensions=None, rp_hash=None):
    data = (rp_hash or os.urandom(32)) + bytes([flags]) + count.to_bytes(4, "big")
    if credential is not None:
        aaguid, credential_id, key = credential
        data += aaguid + len(credential_id).to_bytes(2, "big") + credential_id + key
    if extensions is not None:
        data += cbor2.dumps(extensions, canonical=True)
    return data


def reading(data):
    try:
        parsed = parse_authenticator_data(data)
    except Exception:
        return None
    attested = parsed.attested_credential_data
    flags = parsed.flags
    bits = (UP if flags.up else 0) | (UV if flags.uv else 0) | (BE if flags.be else 0) | (BS if flags.bs else 0) \
        | (AT if flags.at else 0) | (ED if flags.ed else 0)
    return {
        "rp_id_hash": parsed.rp_id_hash.hex(), "flags": bits, "sign_count": parsed.sign_count,
        "aaguid": attested.aaguid.hex() if attested else None,
        "credential_id": attested.credential_id.hex() if attested else None,
        "credential_public_key": attested.credential_public_key.hex() if attested else None,
        "extensions": parsed.extensions.hex() if parsed.extensions else None,
    }


cases = []


def add(name, data, expect="agree"):
    cases.append({"name": name, "hex": data.hex(), "webauthn": reading(data), "expect": expect})


for round in range(12):
    credential = (os.urandom(16), os.urandom(rng.choice([16, 32, 64, 255])), rng.choice([es256_key, ed25519_key])())
    flags = UP | AT | rng.choice([0, UV]) | rng.choice([0, BE, BE | BS])
    count = rng.choice([0, 1, rng.randrange(2**32)])
    registration = auth_data(flags, count, credential)
    add("registration", registration)
    add("registration with extensions", auth_data(flags | ED, count, credential, {"credProtect": 2}))
    add("assertion", auth_data(rng.choice([UP, UP | UV, UP | UV | BE | BS]), count))
    add("assertion with extensions", auth_data(UP | ED, count, extensions={"appid": True}))
    add("cut short", registration[:rng.randrange(37, len(registration))])
    add("a byte left over", registration + b"\x00")
    add("flags say extensions, none follow", auth_data(UP | ED, count))
    add("flags say a credential, none follows", auth_data(UP | AT, count))
    # Stricter than py_webauthn by design.
    add("backed up without eligibility", auth_data(UP | BS, count), "refuse")
    add("a credential id of 1024 bytes", auth_data(flags, count, (os.urandom(16), os.urandom(1024), es256_key())), "refuse")
    long_key = bytearray(credential[2])
    long_key[0:1] = b"\xb8\x05"  # the key's map length in two bytes: CBOR py_webauthn re-encodes, not canonical
    add("a key not in canonical CBOR", auth_data(flags, count, (credential[0], credential[1], bytes(long_key))), "refuse")
    mutated = bytearray(registration)
    mutated[rng.randrange(37, len(mutated))] ^= 1 << rng.randrange(8)
    add("a bit flipped in the credential", bytes(mutated), "agree-or-refuse")
print(json.dumps(cases))
