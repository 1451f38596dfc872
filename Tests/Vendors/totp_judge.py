"""Judges the gateway's TOTP with pyotp: the otpauth:// URI through pyotp's
own parser, and each code the gateway computed against pyotp's. Then prints
pyotp's codes around a moment, for the gateway's matching to be tried on.
Usage: totp_judge.py CASE.json  (secret, issuer, account, uri, codes, now)"""
import json
import sys

import pyotp

case = json.load(open(sys.argv[1]))
parsed = pyotp.parse_uri(case["uri"])
assert isinstance(parsed, pyotp.TOTP), type(parsed)
assert parsed.secret == case["secret"], (parsed.secret, case["secret"])
assert parsed.name == case["account"], (parsed.name, case["account"])
assert parsed.issuer == case["issuer"], (parsed.issuer, case["issuer"])
assert parsed.digits == 6 and parsed.interval == 30, (parsed.digits, parsed.interval)
assert parsed.digest().name == "sha1", parsed.digest().name

reference = pyotp.TOTP(case["secret"])
for moment, code in case["codes"]:
    assert reference.at(moment) == code, (moment, reference.at(moment), code)

now = case["now"]
print(json.dumps({str(offset): reference.at(now + 30 * offset) for offset in (-2, -1, 0, 1, 2)}))
