"""RS256 signatures a second on one core with the peer's signing library.

The peer (peer_token_server.py) signs through PyJWT, which hands the
signature to `cryptography` (its wheel bundles its own OpenSSL). This times
that call alone, on the same key and a message the size of a Layer token's
signing input, as `token-floor --signing-rates` times the gateway's signers,
so the load script can set each server's CPU a token beside its own
library's signature. Prints {"cryptography": rate, "openssl_version": "..."}.

    python signing_rate.py KEY_PEM SECONDS
"""
import json
import sys
import time

from cryptography.hazmat.backends.openssl.backend import backend
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding

with open(sys.argv[1], "rb") as file:
    key = serialization.load_pem_private_key(file.read(), password=None)
seconds = float(sys.argv[2])
message = b"e" * 420
key.sign(message, padding.PKCS1v15(), hashes.SHA256())
signatures, started = 0, time.perf_counter()
while True:
    key.sign(message, padding.PKCS1v15(), hashes.SHA256())
    signatures += 1
    elapsed = time.perf_counter() - started
    if elapsed >= seconds:
        break
print(json.dumps({"cryptography": round(signatures / elapsed, 1), "openssl_version": backend.openssl_version_text()}))
