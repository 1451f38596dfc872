"""An authenticator app, played by pyotp: reads the otpauth:// URI the
gateway answered with pyotp's own parser and prints the codes it would show
around a moment, by offset in time steps.
Usage: totp_codes.py URI UNIX_TIME"""
import json
import sys

import pyotp

totp = pyotp.parse_uri(sys.argv[1])
assert isinstance(totp, pyotp.TOTP), type(totp)
now = int(sys.argv[2])
print(json.dumps({str(offset): totp.at(now + totp.interval * offset) for offset in range(-3, 4)}))
