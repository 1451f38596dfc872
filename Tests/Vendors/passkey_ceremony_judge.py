"""Passkey registrations and assertions as a software authenticator made
them (the passkey plugin's tests write them to a JSON file), verified by
py_webauthn (`webauthn` on PyPI): the judge the plugin's ceremonies are
held to. Reads a JSON list of cases, each
  {"kind": "registration" | "assertion", "credential": <WebAuthn JSON>,
   "challenge": <base64url>, "rp_id", "origins": [...], "require_uv": bool,
   "algorithms": [COSE ids],
   and for an assertion "public_key": <base64url COSE key>, "sign_count": int}
and prints a JSON list with one {"verified": bool, "error": str|null,
"sign_count": int|null, "credential_id": base64url|null} for each.
Usage: passkey_ceremony_judge.py CASES.json"""
import json
import sys

from webauthn import verify_authentication_response, verify_registration_response
from webauthn.helpers import base64url_to_bytes, bytes_to_base64url
from webauthn.helpers.cose import COSEAlgorithmIdentifier


def judge(case):
    try:
        if case["kind"] == "registration":
            verified = verify_registration_response(
                credential=case["credential"], expected_challenge=base64url_to_bytes(case["challenge"]),
                expected_rp_id=case["rp_id"], expected_origin=case["origins"],
                require_user_verification=case["require_uv"],
                supported_pub_key_algs=[COSEAlgorithmIdentifier(alg) for alg in case["algorithms"]])
            return {"verified": True, "error": None, "sign_count": verified.sign_count,
                    "credential_id": bytes_to_base64url(verified.credential_id)}
        verified = verify_authentication_response(
            credential=case["credential"], expected_challenge=base64url_to_bytes(case["challenge"]),
            expected_rp_id=case["rp_id"], expected_origin=case["origins"],
            credential_public_key=base64url_to_bytes(case["public_key"]),
            credential_current_sign_count=case["sign_count"], require_user_verification=case["require_uv"])
        return {"verified": True, "error": None, "sign_count": verified.new_sign_count,
                "credential_id": bytes_to_base64url(verified.credential_id)}
    except Exception as error:  # every refusal is a verdict, whatever its class
        return {"verified": False, "error": f"{type(error).__name__}: {error}", "sign_count": None,
                "credential_id": None}


with open(sys.argv[1]) as cases:
    print(json.dumps([judge(case) for case in json.load(cases)]))
