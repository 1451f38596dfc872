"""The peer the load benchmark measures the gateway against: a bare Python
token server, as a team would write one in an afternoon. Starlette under
uvicorn (httptools, uvloop), PyJWT with the RSA key parsed once, one worker
a core. It reads the same JSON body the gateway gets, checks that app_id,
user_id and nonce are strings, and signs a Layer identity token (RS256, the
same header and claims); it checks no credential, counts nothing and writes
no audit row.

    uvicorn --app-dir Benchmarks/load peer_token_server:app --workers 2 --loop uvloop --http httptools

PEER_KEY_FILE names an RSA private key in PEM (a fresh 2048-bit one otherwise).
"""

import json
import os
import time
import uuid

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from starlette.applications import Starlette
from starlette.responses import JSONResponse, Response
from starlette.routing import Route


def load_key():
    path = os.environ.get("PEER_KEY_FILE")
    if path:
        with open(path, "rb") as pem:
            return serialization.load_pem_private_key(pem.read(), password=None)
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


KEY = load_key()
HEADERS = {"typ": "JWT", "cty": "layer-eit;v=1", "kid": f"layer:///keys/{uuid.uuid4()}"}


async def identity_token(request):
    try:
        body = json.loads(await request.body())
        app_id, user_id, nonce = body["app_id"], body["user_id"], body["nonce"]
    except (ValueError, KeyError, TypeError):
        return Response(status_code=400)
    if not all(isinstance(value, str) for value in (app_id, user_id, nonce)):
        return Response(status_code=400)
    now = int(time.time())
    claims = {"iss": app_id, "prn": user_id, "iat": now, "exp": now + 600, "nce": nonce}
    return JSONResponse({"identity_token": jwt.encode(claims, KEY, algorithm="RS256", headers=HEADERS)})


app = Starlette(routes=[Route("/v1/identity_tokens", identity_token, methods=["POST"])])
