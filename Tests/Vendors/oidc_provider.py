#!/usr/bin/env python3
"""A real OpenID provider on loopback for the ID-token plugin's tests.

The provider is oidc-provider-mock (PyPI): authlib's OpenID Connect server
under Flask, with its own discovery document, JWK set, authorization and
token endpoints. ID tokens come out of its own authorization-code flow.
Beside its routes this adds a few for the tests only:

  GET  /test/client?name=N      the client id registered for N (its audience)
  POST /test/id-token           {"client", "sub", "nonce", "claims"}: the ID
                                token the provider issues to that client for
                                that user, through authorize and token
  POST /test/rotate-keys        sign with a new key from now on; the JWK set
                                publishes only the new one
  POST /test/down, /test/up     the discovery document and the JWK set answer
                                503 while down
  GET  /test/stats              how often each was fetched
  POST /test/sign               {"header", "claims", "key"}: a token signed as
                                the attack tests need it: "provider" (its
                                current key), "stranger" (a key nobody
                                publishes), "apple", "google" or "ec" (the keys
                                of /apple/keys, /google/keys and /ec/keys, the
                                first two standing in for theirs; "ec" is
                                P-256 for ES256), "hs256-public-key" (HMAC keyed with
                                the provider's public key) or "none"
  GET  /apple/keys, /google/keys, /ec/keys  JWK sets of those keys
  GET  /imposter/.well-known/openid-configuration
                                the provider's discovery document with
                                another issuer in it

and Sign in with Apple's REST API as Apple documents it, standing in for
appleid.apple.com (generate_and_validate_tokens, revoke_tokens): each call's
client_secret must be an ES256 JWT that authlib verifies with the team's
key, `kid` the key id, `iss` the team id, `sub` the client id posted, `aud`
https://appleid.apple.com, not expired, at most six months long:

  POST /auth/token              authorization_code → {"refresh_token", ...}
  POST /auth/revoke             token, token_type_hint → 200
  GET  /test/apple-api          {"team_id", "key_id", "private_key"}: what
                                the app's apple_api is given
  POST /test/apple-code         {"client_id"}: a code Apple would give the app
  POST /test/apple-outage       {"revocations": n}: the next n revocations 503
  GET  /test/apple-state        the refresh tokens issued, revoked, and the
                                client secrets refused (their reasons)

Prints "listening on 127.0.0.1:<port>" once it accepts connections.
"""

import base64
import hashlib
import hmac
import json
import secrets
import threading
import time
from urllib.parse import parse_qs, urlparse

import flask
import oidc_provider_mock
import werkzeug.serving
from authlib.jose import JsonWebKey, RSAKey
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature



def full_width_ec_key(kid):
    """A P-256 key whose JWK carries both coordinates at their full 32 bytes,
    as RFC 7518 (6.2.1.2) requires. authlib writes a coordinate whose first
    byte is zero one byte short (17 keys in 2 000), which the gateway, like
    PyJWT, refuses: the suites that sign with "ec" failed about one run in a
    hundred on it."""
    while True:
        key = JsonWebKey.generate_key("EC", "P-256", is_private=True, options={"kid": kid})
        public = key.as_dict(is_private=False)
        if all(len(base64.urlsafe_b64decode(public[c] + "=" * (-len(public[c]) % 4))) == 32 for c in ("x", "y")):
            return key


app = oidc_provider_mock.app()
lock = threading.Lock()
state = {"down": False, "jwks_fetches": 0, "discovery_fetches": 0, "clients": {}, "base": ""}
stand_ins = {
    "apple": JsonWebKey.generate_key("RSA", 2048, is_private=True, options={"kid": "apple-test-key"}),
    "google": JsonWebKey.generate_key("RSA", 2048, is_private=True, options={"kid": "google-test-key"}),
    "ec": full_width_ec_key("ec-test-key"),
}
stranger = JsonWebKey.generate_key("RSA", 2048, is_private=True, options={"kid": "stranger"})


def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def provider_storage():
    return flask.g.oidc_provider_mock_storage


@app.before_request
def count_and_fail():
    path = flask.request.path
    if path in ("/jwks", "/.well-known/openid-configuration"):
        with lock:
            state["jwks_fetches" if path == "/jwks" else "discovery_fetches"] += 1
            if state["down"]:
                return flask.Response("down for the test", status=503)
    return None


def registered_client(name):
    """The provider's client registered for `name`, registered on first use."""
    with lock:
        known = state["clients"].get(name)
    if known is None:
        answer = app.test_client().post(
            "/oauth2/clients", json={"redirect_uris": ["https://app.test/callback"]}, base_url=state["base"])
        known = answer.get_json()
        with lock:
            known = state["clients"].setdefault(name, known)
    return known


@app.get("/test/client")
def test_client():
    return {"client_id": registered_client(flask.request.args["name"])["client_id"]}


@app.post("/test/id-token")
def test_id_token():
    body = flask.request.get_json()
    registered = registered_client(body.get("client", "ios"))
    web = app.test_client()
    sub = body["sub"]
    web.put(f"/users/{sub}", json=body.get("claims", {}), base_url=state["base"])
    query = {
        "client_id": registered["client_id"], "redirect_uri": "https://app.test/callback", "response_type": "code",
        "scope": "openid email profile", "state": secrets.token_hex(8),
    }
    if body.get("nonce") is not None:
        query["nonce"] = body["nonce"]
    authorized = web.post("/oauth2/authorize", query_string=query, data={"sub": sub}, base_url=state["base"])
    code = parse_qs(urlparse(authorized.headers["Location"]).query)["code"][0]
    credentials = base64.b64encode(f"{registered['client_id']}:{registered['client_secret']}".encode()).decode()
    issued = web.post(
        "/oauth2/token",
        data={"grant_type": "authorization_code", "code": code, "redirect_uri": "https://app.test/callback"},
        headers={"Authorization": "Basic " + credentials}, base_url=state["base"]).get_json()
    return {"id_token": issued["id_token"], "client_id": registered["client_id"]}


@app.post("/test/rotate-keys")
def rotate_keys():
    key = RSAKey.generate_key(is_private=True)
    provider_storage().jwk = key
    return {"kid": key.as_dict()["kid"]}


@app.post("/test/down")
def go_down():
    with lock:
        state["down"] = True
    return {}


@app.post("/test/up")
def come_up():
    with lock:
        state["down"] = False
    return {}


@app.get("/test/stats")
def stats():
    with lock:
        return {"jwks_fetches": state["jwks_fetches"], "discovery_fetches": state["discovery_fetches"]}


@app.get("/apple/keys")
def apple_keys():
    return {"keys": [stand_ins["apple"].as_dict(is_private=False)]}


@app.get("/google/keys")
def google_keys():
    return {"keys": [stand_ins["google"].as_dict(is_private=False)]}


@app.get("/ec/keys")
def ec_keys():
    return {"keys": [stand_ins["ec"].as_dict(is_private=False)]}


@app.get("/imposter/.well-known/openid-configuration")
def imposter_discovery():
    document = app.test_client().get("/.well-known/openid-configuration", base_url=state["base"]).get_json()
    return {**document, "issuer": "https://imposter.example"}


APPLE_TEAM_ID = "TEAM012345"
APPLE_KEY_ID = "KEY0123456"
APPLE_AUDIENCE = "https://appleid.apple.com"
apple_key = ec.generate_private_key(ec.SECP256R1())
apple = {"codes": {}, "issued": [], "revoked": [], "refused": [], "outage": 0}


def apple_client_refused(form):
    """Apple's 400 invalid_client when the posted client secret is not Apple's to accept (noting why), else None."""
    refusal = apple_client_refusal(form)
    if refusal is None:
        return None
    with lock:
        apple["refused"].append(refusal)
    return {"error": "invalid_client"}, 400


def apple_client_refusal(form):
    """Why the posted client secret is not Apple's to accept, or None."""
    from authlib.jose import jwt
    from authlib.jose.errors import JoseError
    public = apple_key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    try:
        claims = jwt.decode(form.get("client_secret", ""), public)
    except (JoseError, ValueError) as error:
        return f"signature: {error}"
    now = time.time()
    checks = [
        (claims.header.get("alg") == "ES256", "alg"),
        (claims.header.get("kid") == APPLE_KEY_ID, "kid"),
        (claims.get("iss") == APPLE_TEAM_ID, "iss"),
        (claims.get("sub") == form.get("client_id"), "sub"),
        (claims.get("aud") == APPLE_AUDIENCE, "aud"),
        (isinstance(claims.get("exp"), int) and claims["exp"] > now, "exp"),
        (isinstance(claims.get("iat"), int) and claims["iat"] <= now + 60 and claims["exp"] - claims["iat"] <= 15777000, "iat"),
    ]
    failed = [name for ok, name in checks if not ok]
    return ", ".join(failed) or None


@app.post("/auth/token")
def apple_token():
    form = flask.request.form
    refused = apple_client_refused(form)
    if refused:
        return refused
    with lock:
        client = apple["codes"].pop(form.get("code", ""), None)
    if form.get("grant_type") != "authorization_code" or client != form.get("client_id"):
        return {"error": "invalid_grant"}, 400
    refresh_token = "r" + secrets.token_hex(16) + ".0.apple"
    with lock:
        apple["issued"].append(refresh_token)
    return {"access_token": "a" + secrets.token_hex(16), "token_type": "Bearer", "expires_in": 3600,
            "refresh_token": refresh_token, "id_token": "not-read-by-the-gateway"}


@app.post("/auth/revoke")
def apple_revoke():
    form = flask.request.form
    refused = apple_client_refused(form)
    if refused:
        return refused
    with lock:
        if apple["outage"] > 0:
            apple["outage"] -= 1
            return flask.Response("unavailable", status=503)
        if form.get("token_type_hint") == "refresh_token" and form.get("token") in apple["issued"]:
            apple["revoked"].append(form["token"])
    return flask.Response("", status=200)


@app.get("/test/apple-api")
def apple_api():
    pem = apple_key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    return {"team_id": APPLE_TEAM_ID, "key_id": APPLE_KEY_ID, "private_key": pem}


@app.post("/test/apple-code")
def apple_code():
    code = "c" + secrets.token_hex(16) + ".0.apple"
    with lock:
        apple["codes"][code] = flask.request.get_json()["client_id"]
    return {"code": code}


@app.post("/test/apple-outage")
def apple_outage():
    with lock:
        apple["outage"] = flask.request.get_json()["revocations"]
    return {}


@app.get("/test/apple-state")
def apple_state():
    with lock:
        return {key: list(apple[key]) for key in ("issued", "revoked", "refused")}


@app.post("/test/sign")
def sign():
    body = flask.request.get_json()
    header, claims, kind = body["header"], body["claims"], body["key"]
    if kind == "none":
        return {"token": f"{b64(json.dumps(header).encode())}.{b64(json.dumps(claims).encode())}."}
    if kind == "hs256-public-key":
        public = provider_storage().jwk.get_public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        signing_input = f"{b64(json.dumps(header).encode())}.{b64(json.dumps(claims).encode())}"
        signature = hmac.new(public, signing_input.encode(), hashlib.sha256).digest()
        return {"token": f"{signing_input}.{b64(signature)}"}
    key = {"provider": provider_storage().jwk, "stranger": stranger}.get(kind) or stand_ins[kind]
    header = {**header, "kid": header.get("kid", key.as_dict()["kid"])}
    return {"token": sign_jws(header, claims, key.get_private_key())}


def sign_jws(header, claims, private_key):
    """A compact JWS with exactly this header (authlib's encoder would put the key's own kid in it)."""
    signing_input = f"{b64(json.dumps(header).encode())}.{b64(json.dumps(claims).encode())}".encode()
    if isinstance(private_key, ec.EllipticCurvePrivateKey):
        r, s = decode_dss_signature(private_key.sign(signing_input, ec.ECDSA(hashes.SHA256())))
        signature = r.to_bytes(32, "big") + s.to_bytes(32, "big")
    else:
        signature = private_key.sign(signing_input, padding.PKCS1v15(), hashes.SHA256())
    return f"{signing_input.decode()}.{b64(signature)}"


def main():
    server = werkzeug.serving.make_server("127.0.0.1", 0, app, threaded=True)
    state["base"] = f"http://127.0.0.1:{server.server_port}"
    print(f"listening on 127.0.0.1:{server.server_port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
