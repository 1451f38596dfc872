"""Checks every token profile the running gateway issues with the vendor's own library.

Usage: token_profiles_test.py BASE_URL OPERATOR_TOKEN ISSUER_BASE_URL

ISSUER_BASE_URL is the gateway's public name (its oidc.issuer_base_url); the
relying party reaches URLs under it at BASE_URL, as DNS would send it there.

Sets up two development apps over the admin API (static users, an active
key, every profile), asks the public token endpoint for one token of each
profile, and hands each to the library the vendor publishes:

- oidc: Authlib, as a relying party, validates the ID token (signature,
  iss, aud, exp, iat, nonce, auth_time) against the issuer's discovery
  document and key set fetched over HTTP; app A's token fails against app B.
- firebase: firebase-admin's create_custom_token for the same service
  account and uid has the same header and claims (times aside); google-auth
  verifies our signature with the account's X.509 certificate, as Google
  publishes one for each service-account key.
- stream: stream-chat's create_token has the same header and claims; PyJWT,
  which the SDK signs with, verifies ours with the secret.
- twilio: twilio's AccessToken with a ChatGrant has the same header and
  claim structure; twilio.jwt.Jwt.from_jwt accepts ours with the secret and
  refuses it with another.

A refreshed OpenID token is judged the same way, and keeps its sign-in's
auth_time and amr; so is one after a password and a TOTP code (pyotp's, for
the secret the enrolment answered), whose amr and acr say two factors. Then: the secrets never come back from the admin API, an app's own admin
cannot read or change another app's profiles, unknown or unlisted profiles
are 400 unsupported_token_profile, each issued row names its profile, and
Layer's answer is byte for byte what it was. Prints one decoded token of
each profile (signatures and secrets left out) and exits 0 with "every
profile held"; otherwise prints the check that failed.
"""

import base64
import datetime
import json
import sys
import time
import uuid
import warnings

from authlib.deprecate import AuthlibDeprecationWarning

# Authlib points to joserfc for new code; its OpenID relying-party checks still live here.
warnings.simplefilter("ignore", AuthlibDeprecationWarning)

import jwt as pyjwt
import pyotp
import requests
from authlib.jose import JsonWebKey
from authlib.jose import jwt as authlib_jwt
from authlib.jose.errors import JoseError
from authlib.oidc.core import CodeIDToken
from joserfc.errors import JoseError as JoserfcError
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
import firebase_admin
from firebase_admin import auth as firebase_auth
from firebase_admin import credentials as firebase_credentials
from google.auth import crypt as google_crypt
from google.auth import jwt as google_jwt
from stream_chat import StreamChat
from twilio.jwt import Jwt as TwilioJwt
from twilio.jwt import JwtDecodeError
from twilio.jwt.access_token import AccessToken
from twilio.jwt.access_token.grants import ChatGrant

BASE, OPERATOR, PUBLIC = sys.argv[1], sys.argv[2], sys.argv[3]
FIREBASE_AUDIENCE = "https://identitytoolkit.googleapis.com/google.identity.identitytoolkit.v1.IdentityToolkit"
USER = "alice@example.com"
STREAM_KEY, STREAM_SECRET = "stream-key-1", "s3cr3t-stream-api-secret-0123456789"
TWILIO_ACCOUNT = "AC" + "0123456789abcdef" * 2
TWILIO_KEY = "SK" + "fedcba9876543210" * 2
TWILIO_SECRET = "twilio-api-key-secret-abcdef012345"
TWILIO_SERVICE = "IS" + "00112233445566778899aabbccddeeff"


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def admin(method, path, token=OPERATOR, body=None):
    response = requests.request(method, BASE + path, json=body, timeout=30,
                                headers={"Authorization": "Bearer " + token})
    return response.status_code, (response.json() if response.content else None)


def decoded(token):
    """Header and claims of a compact JWS, unverified: only to compare shapes."""
    def part(text):
        return json.loads(base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)))
    header, claims, _ = token.split(".")
    return part(header), part(claims)


def service_account():
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    # Google publishes a self-signed certificate for each service-account key.
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "signer.gateway-test.iam.gserviceaccount.com")])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
                   .not_valid_after(now + datetime.timedelta(days=1)).sign(key, hashes.SHA256()))
    public = certificate.public_bytes(serialization.Encoding.PEM).decode()
    account = {
        "type": "service_account", "project_id": "gateway-test", "private_key_id": uuid.uuid4().hex,
        "private_key": pem, "client_email": "signer@gateway-test.iam.gserviceaccount.com",
        "client_id": "1234567890", "token_uri": "https://oauth2.googleapis.com/token",
    }
    return account, public


def make_app(name, profiles, sessions=None, mfa=None):
    app_uuid = str(uuid.uuid4())
    status, body = admin("POST", "/admin/v1/apps", body={
        "app_id": app_uuid, "name": name, "environment": "development", "provider_id": str(uuid.uuid4()),
        "credential_types": ["static"],
        "plugins": {"static": {"users": [{"user_id": USER, "password": "pw-" + name, "display_name": "Alice A.",
                                          "email": "alice@example.com"}]}},
        "token_profiles": profiles, "sessions": sessions, "mfa": mfa})
    check(status == 201, f"create {name}: {status} {body}")
    status, key = admin("POST", f"/admin/v1/apps/{app_uuid}/keys", body={"generate": {"bits": 2048}})
    check(status == 201, f"generate key for {name}: {status} {key}")
    key_uuid = key["key_id"].rsplit("/", 1)[-1]
    status, body = admin("POST", f"/admin/v1/apps/{app_uuid}/keys/{key_uuid}/activate")
    check(status == 200, f"activate key for {name}: {status} {body}")
    return app_uuid


def token_request(app_uuid, name, nonce, profile=None):
    body = {"app_id": app_uuid, "user_id": USER, "nonce": nonce,
            "credentials": {"type": "static", "password": "pw-" + name}}
    if profile is not None:
        body["token_profile"] = profile
    return requests.post(BASE + "/v1/identity_tokens", json=body, timeout=30)


def issue(app_uuid, name, profile, nonce="n-" + uuid.uuid4().hex):
    response = token_request(app_uuid, name, nonce, profile)
    check(response.status_code == 200, f"{profile} token: {response.status_code} {response.text}")
    answer = response.json()
    expected = {"identity_token"} | ({"token_profile"} if profile != "layer" else set())
    check(set(answer) == expected, f"{profile} answer members: {sorted(answer)}")
    if profile != "layer":
        check(answer["token_profile"] == profile, f"{profile} answer names {answer['token_profile']}")
    return answer["identity_token"], nonce


def fetch(url):
    """GET a URL under the gateway's public name, at the address it runs on here."""
    check(url.startswith(PUBLIC + "/"), f"{url} is not under the gateway's public URL {PUBLIC}")
    return requests.get(BASE + url[len(PUBLIC):], timeout=30)


def relying_party(app_uuid, audience):
    """What an OpenID relying party does with an issuer: discovery, then keys."""
    issuer = f"{PUBLIC}/v1/apps/{app_uuid}"
    discovery = fetch(issuer + "/.well-known/openid-configuration")
    check(discovery.status_code == 200, f"discovery of {issuer}: {discovery.status_code}")
    metadata = discovery.json()
    check(metadata["issuer"] == issuer, f"discovery issuer {metadata['issuer']} != {issuer}")
    check("RS256" in metadata["id_token_signing_alg_values_supported"], "RS256 not offered")
    keys = JsonWebKey.import_key_set(fetch(metadata["jwks_uri"]).json())
    return metadata, keys


def validate_id_token(token, metadata, keys, audience, nonce):
    claims = authlib_jwt.decode(
        token, keys, claims_cls=CodeIDToken,
        claims_options={"iss": {"essential": True, "value": metadata["issuer"]}},
        claims_params={"nonce": nonce, "client_id": audience})
    claims.validate(leeway=5)
    return claims


def check_oidc(app_a, app_b):
    token, nonce = issue(app_a, "a", "oidc")
    metadata, keys = relying_party(app_a, "client-a")
    claims = validate_id_token(token, metadata, keys, "client-a", nonce)
    check(claims["sub"] == USER and claims["name"] == "Alice A." and claims["email"] == "alice@example.com"
          and "email_verified" not in claims, f"oidc claims {dict(claims)}")
    # Discovery lists every claim the token carries (issue 56: it once lacked email).
    missing = set(claims) - set(metadata["claims_supported"])
    check(not missing, f"claims_supported lacks {sorted(missing)}")
    header, _ = decoded(token)
    check(header["alg"] == "RS256" and header["kid"].startswith("layer:///keys/"), f"oidc header {header}")
    for wrong, why in ((("client-b", nonce), "another audience"), (("client-a", "other-nonce"), "another nonce")):
        try:
            validate_id_token(token, metadata, keys, *wrong)
            raise AssertionError(f"oidc token accepted with {why}")
        except (JoseError, JoserfcError):
            pass
    metadata_b, keys_b = relying_party(app_b, "client-b")
    try:
        validate_id_token(token, metadata_b, keys_b, "client-a", nonce)
        raise AssertionError("app A's oidc token accepted by app B's issuer")
    except (JoseError, JoserfcError, ValueError):
        pass
    check(requests.get(f"{BASE}/v1/apps/{uuid.uuid4()}/.well-known/openid-configuration", timeout=30).status_code == 404,
          "discovery of an unknown app")
    return token


def check_oidc_session():
    """A refreshed OpenID token (issue 58), judged by Authlib as any other: it keeps
    the sign-in's auth_time, and amr says how that sign-in was made."""
    app_uuid = make_app("c", [{"type": "oidc", "audiences": ["client-c"]}], sessions={"reuse_grace_seconds": 5})
    nonce = "n-" + uuid.uuid4().hex
    response = token_request(app_uuid, "c", nonce)
    check(response.status_code == 200, f"oidc sign-in: {response.status_code} {response.text}")
    signed_in = response.json()
    metadata, keys = relying_party(app_uuid, "client-c")
    first = validate_id_token(signed_in["identity_token"], metadata, keys, "client-c", nonce)
    check(first["amr"] == ["pwd"] and first["acr"] == "aal1" and first["auth_time"] == first["iat"],
          f"oidc sign-in claims {dict(first)}")
    time.sleep(1.1)  # so the refreshed token's iat is a later second than the sign-in's
    nonce = "n-" + uuid.uuid4().hex
    response = requests.post(BASE + "/v1/identity_tokens", json={
        "app_id": app_uuid, "nonce": nonce,
        "credentials": {"type": "refresh_token", "refresh_token": signed_in["refresh_token"]}}, timeout=30)
    check(response.status_code == 200, f"oidc refresh: {response.status_code} {response.text}")
    refreshed = validate_id_token(response.json()["identity_token"], metadata, keys, "client-c", nonce)
    check(refreshed["auth_time"] == first["auth_time"] and refreshed["iat"] > refreshed["auth_time"]
          and refreshed["amr"] == ["pwd"] and refreshed["sub"] == USER, f"refreshed oidc claims {dict(refreshed)}")
    check(response.json()["refresh_token"] != signed_in["refresh_token"], "the refresh token was not rotated")
    return response.json()["identity_token"]


def check_oidc_second_factor():
    """A sign-in in two steps (issue 60): the password, then pyotp's code for
    the secret the enrolment showed. Authlib validates the token, whose amr
    says both factors and acr aal2; a refresh of that session says the same."""
    app_uuid = make_app("d", [{"type": "oidc", "audiences": ["client-d"]},
                              {"type": "firebase", "service_account": account, "sign_in_claims": True}],
                        sessions={}, mfa={"issuer": "Gateway test"})
    signed_in = token_request(app_uuid, "d", "n-" + uuid.uuid4().hex)
    check(signed_in.status_code == 200, f"sign-in before enrolment: {signed_in.status_code} {signed_in.text}")
    session = signed_in.json()["refresh_token"]
    enrolled = requests.post(BASE + "/v1/mfa/totp", json={"app_id": app_uuid, "refresh_token": session}, timeout=30)
    check(enrolled.status_code == 201, f"enrolment: {enrolled.status_code} {enrolled.text}")
    totp = pyotp.parse_uri(enrolled.json()["otpauth_uri"])
    check(totp.issuer == "Gateway test" and totp.name == USER, f"otpauth label: {totp.issuer} {totp.name}")
    now = int(time.time())
    confirmed = requests.post(BASE + "/v1/mfa/totp/confirm", timeout=30,
                              json={"app_id": app_uuid, "refresh_token": session, "code": totp.at(now)})
    check(confirmed.status_code == 204, f"confirmation: {confirmed.status_code} {confirmed.text}")

    nonce = "n-" + uuid.uuid4().hex
    first = token_request(app_uuid, "d", nonce)
    check(first.status_code == 403 and first.json()["error"] == "mfa_required", f"first step: {first.status_code} {first.text}")
    # The next step's code: the confirmation took this one's.
    second = requests.post(BASE + "/v1/identity_tokens", timeout=30, json={
        "app_id": app_uuid, "nonce": nonce,
        "credentials": {"type": "totp", "mfa_ticket": first.json()["mfa_ticket"], "code": totp.at(now + 30)}})
    check(second.status_code == 200, f"second step: {second.status_code} {second.text}")
    metadata, keys = relying_party(app_uuid, "client-d")
    claims = validate_id_token(second.json()["identity_token"], metadata, keys, "client-d", nonce)
    check(claims["amr"] == ["pwd", "otp", "mfa"] and claims["acr"] == "aal2" and claims["sub"] == USER,
          f"two-factor oidc claims {dict(claims)}")
    check("acr" in metadata["claims_supported"], "claims_supported lacks acr")
    nonce = "n-" + uuid.uuid4().hex
    refreshed = requests.post(BASE + "/v1/identity_tokens", timeout=30, json={
        "app_id": app_uuid, "nonce": nonce,
        "credentials": {"type": "refresh_token", "refresh_token": second.json()["refresh_token"]}})
    check(refreshed.status_code == 200, f"refresh of the two-factor session: {refreshed.status_code} {refreshed.text}")
    again = validate_id_token(refreshed.json()["identity_token"], metadata, keys, "client-d", nonce)
    check(again["amr"] == ["pwd", "otp", "mfa"] and again["acr"] == "aal2", f"refreshed two-factor claims {dict(again)}")
    # Firebase reserves amr and acr; with sign_in_claims the developer claims say the same, as
    # firebase-admin would put them for the same uid and claims.
    response = requests.post(BASE + "/v1/identity_tokens", timeout=30, json={
        "app_id": app_uuid, "nonce": "n-" + uuid.uuid4().hex, "token_profile": "firebase",
        "credentials": {"type": "refresh_token", "refresh_token": refreshed.json()["refresh_token"]}})
    check(response.status_code == 200, f"firebase refresh: {response.status_code} {response.text}")
    _, ours = decoded(response.json()["identity_token"])
    expected = {"sign_in_amr": ["pwd", "otp", "mfa"], "sign_in_acr": "aal2"}
    _, theirs = decoded(firebase_auth.create_custom_token(USER, expected, app=firebase_app).decode())
    check(set(ours) == set(theirs) and ours["claims"] == theirs["claims"] == expected,
          f"firebase sign-in claims {ours} != firebase-admin's {theirs}")
    return second.json()["identity_token"]


def check_firebase(app_uuid, account, certificate_pem):
    token, _ = issue(app_uuid, "a", "firebase")
    ours_header, ours = decoded(token)
    theirs_header, theirs = decoded(firebase_auth.create_custom_token(USER, app=firebase_app).decode())
    check(ours_header == theirs_header, f"firebase header {ours_header} != firebase-admin's {theirs_header}")
    check(set(ours) == set(theirs), f"firebase claims {sorted(ours)} != firebase-admin's {sorted(theirs)}")
    for name in ("iss", "sub", "aud", "uid"):
        check(ours[name] == theirs[name], f"firebase {name}: {ours[name]} != {theirs[name]}")
    check(0 < ours["exp"] - ours["iat"] <= 3600, f"firebase lifetime {ours['exp'] - ours['iat']}")
    verified = google_jwt.decode(token, certs={account["private_key_id"]: certificate_pem}, audience=FIREBASE_AUDIENCE)
    check(verified["uid"] == USER, f"google-auth read uid {verified['uid']}")
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    try:
        google_jwt.decode(token, certs={account["private_key_id"]: other}, audience=FIREBASE_AUDIENCE)
        raise AssertionError("firebase token verified with another key")
    except ValueError:
        pass
    return token


def check_stream(app_uuid):
    token, _ = issue(app_uuid, "a", "stream")
    ours_header, ours = decoded(token)
    now = int(time.time())
    theirs_header, theirs = decoded(StreamChat(STREAM_KEY, STREAM_SECRET).create_token(USER, exp=now + 120, iat=now))
    check(ours_header == theirs_header, f"stream header {ours_header} != stream-chat's {theirs_header}")
    check(set(ours) == set(theirs), f"stream claims {sorted(ours)} != stream-chat's {sorted(theirs)}")
    verified = pyjwt.decode(token, STREAM_SECRET, algorithms=["HS256"], options={"require": ["exp", "iat"]})
    check(verified["user_id"] == USER, f"stream user_id {verified['user_id']}")
    try:
        pyjwt.decode(token, "another-secret-of-enough-length-0123", algorithms=["HS256"])
        raise AssertionError("stream token verified with another secret")
    except pyjwt.InvalidSignatureError:
        pass
    return token


def check_twilio(app_uuid):
    token, _ = issue(app_uuid, "a", "twilio")
    ours_header, ours = decoded(token)
    reference = AccessToken(TWILIO_ACCOUNT, TWILIO_KEY, TWILIO_SECRET, identity=USER, ttl=3600,
                            grants=[ChatGrant(service_sid=TWILIO_SERVICE)])
    theirs_header, theirs = decoded(reference.to_jwt())
    check(ours_header == theirs_header, f"twilio header {ours_header} != twilio's {theirs_header}")
    check(set(ours) == set(theirs), f"twilio claims {sorted(ours)} != twilio's {sorted(theirs)}")
    check(ours["grants"] == theirs["grants"], f"twilio grants {ours['grants']} != {theirs['grants']}")
    for name in ("iss", "sub"):
        check(ours[name] == theirs[name], f"twilio {name}: {ours[name]} != {theirs[name]}")
    check(ours["jti"] == f"{TWILIO_KEY}-{ours['nbf']}", f"twilio jti {ours['jti']}")
    accepted = TwilioJwt.from_jwt(token, TWILIO_SECRET)
    check(accepted.payload["grants"]["identity"] == USER, "twilio from_jwt identity")
    try:
        TwilioJwt.from_jwt(token, "another-secret-of-enough-length-0123")
        raise AssertionError("twilio token accepted with another secret")
    except JwtDecodeError:
        pass
    return token


def check_layer_unchanged(app_uuid):
    nonce = "layer+nonce/" + uuid.uuid4().hex
    response = token_request(app_uuid, "a", nonce)
    check(response.status_code == 200, f"layer token: {response.status_code} {response.text}")
    token = response.json()["identity_token"]
    check(response.content == b'{"identity_token":"' + token.encode() + b'"}', f"layer answer bytes {response.content!r}")
    header, claims = decoded(token)
    check(list(header) == ["typ", "alg", "cty", "kid"] and header["cty"] == "layer-eit;v=1", f"layer header {header}")
    check(claims["nce"] == nonce and claims["prn"] == USER, f"layer claims {claims}")
    return token


def check_refusals(app_a):
    for profile, why in (("google", "not offered"), ("twilio", "not listed")):
        app = app_a if profile == "google" else app_b_uuid
        name = "a" if profile == "google" else "b"
        response = token_request(app, name, "n-1", profile)
        check(response.status_code == 400 and response.json()["error"] == "unsupported_token_profile",
              f"{why} profile {profile}: {response.status_code} {response.text}")
    response = token_request(app_a, "a", "n-1", "Not A Name")
    check(response.status_code == 400 and response.json()["error"] == "invalid_request", f"bad profile name: {response.text}")


def check_secrets_and_isolation(app_a, app_b):
    status, app = admin("GET", f"/admin/v1/apps/{app_a}")
    check(status == 200, f"read app A: {status}")
    shown = json.dumps(app)
    for secret in (STREAM_SECRET, TWILIO_SECRET, "PRIVATE KEY"):
        check(secret not in shown, f"a profile secret came back: {secret[:12]}...")
    settings = {entry["type"]: entry for entry in app["token_profiles"]}
    check(settings["stream"]["api_secret"] == "********" and settings["twilio"]["api_key_secret"] == "********"
          and settings["firebase"]["service_account"] == "********", f"redaction: {settings}")
    check(settings["stream"]["api_key"] == STREAM_KEY, "the stream api key is shown")
    # Sending the redacted marker back keeps each stored secret (that profile type's), and the
    # tokens still verify with the secret the vendor's library knows.
    status, body = admin("PATCH", f"/admin/v1/apps/{app_a}", body={"token_profiles": app["token_profiles"]})
    check(status == 200, f"marker written back: {status} {body}")
    check_stream(app_a)
    # A marker for a profile the app never had a secret for is refused: it must be the secret itself.
    status, body = admin("PATCH", f"/admin/v1/apps/{app_b}", body={"token_profiles": [
        {"type": "stream", "api_key": "k", "api_secret": "********"}]})
    check(status == 400 and "must be the secret itself" in body["message"], f"marker without a stored secret: {status} {body}")
    status, created = admin("POST", "/admin/v1/admin_tokens", body={"name": "b-admin", "scope": f"app:{app_b}"})
    check(status == 201, f"app token: {status} {created}")
    b_admin = created["token"]
    status, _ = admin("GET", f"/admin/v1/apps/{app_a}", token=b_admin)
    check(status == 404, f"B's admin reads A: {status}")
    status, _ = admin("PATCH", f"/admin/v1/apps/{app_a}", token=b_admin, body={"token_profiles": [{"type": "layer"}]})
    check(status == 404, f"B's admin changes A's profiles: {status}")
    status, body = admin("PATCH", f"/admin/v1/apps/{app_b}", token=b_admin,
                         body={"token_profiles": [{"type": "stream", "api_key": "k", "api_secret": "b-own-secret-0123456"}]})
    check(status == 200, f"B's admin sets B's own profiles: {status} {body}")
    for bad, field in (({"type": "twilio", "account_sid": "AC123", "api_key_sid": TWILIO_KEY, "api_key_secret": TWILIO_SECRET,
                         "chat_service_sid": TWILIO_SERVICE}, "account_sid"),
                       ({"type": "firebase", "service_account": {"type": "service_account"}}, "service_account"),
                       ({"type": "twilio", "account_sid": TWILIO_ACCOUNT, "api_key_sid": TWILIO_KEY,
                         "api_key_secret": TWILIO_SECRET, "chat_service_sid": TWILIO_SERVICE,
                         "lifetime_seconds": 90000}, "lifetime_seconds")):
        status, body = admin("PATCH", f"/admin/v1/apps/{app_b}", token=b_admin, body={"token_profiles": [bad]})
        check(status == 400 and field in body["message"], f"bad {bad['type']} settings: {status} {body}")


def check_audit(app_uuid, profiles):
    status, page = admin("GET", f"/admin/v1/apps/{app_uuid}/audit_events?event=token.issued&limit=100")
    check(status == 200, f"audit: {status} {page}")
    named = {row["detail"].get("token_profile") for row in page["items"]}
    check(set(profiles) <= named, f"issued rows name {sorted(filter(None, named))}, expected {sorted(profiles)}")


def validate(body):
    response = requests.post(BASE + "/v1/identity_tokens/validate", json=body, timeout=30)
    check(response.status_code == 200, f"validate {sorted(body)}: {response.status_code} {response.text}")
    return response.json()


def check_validation(app_a, app_b, issued):
    """The gateway's own validator knows every profile's tokens, under the app's keys and secrets."""
    for profile, token in issued.items():
        verdict = validate({"identity_token": token, "app_id": app_a, "token_profile": profile})
        check(verdict["valid"] and verdict["problems"] == [], f"validate {profile}: {verdict['problems']}")
        header, claims, signature = token.split(".")
        forged = header + "." + claims + "." + ("A" if signature[0] != "A" else "B") + signature[1:]
        verdict = validate({"identity_token": forged, "app_id": app_a, "token_profile": profile})
        check(not verdict["valid"] and "bad_signature" in {p["code"] for p in verdict["problems"]},
              f"validate a forged {profile} token: {verdict['problems']}")
        check(verdict["app_id"] is None, f"a forged {profile} token names an app")
    # Layer's validator without app_id stays as it was.
    check(validate({"identity_token": issued["layer"]})["valid"], "layer token without app_id")
    # A token checked as another profile, or against another app, is not valid.
    check(not validate({"identity_token": issued["stream"], "app_id": app_a, "token_profile": "twilio"})["valid"],
          "a stream token passed as twilio")
    check(not validate({"identity_token": issued["oidc"], "app_id": app_b, "token_profile": "oidc"})["valid"],
          "app A's oidc token passed as app B's")
    response = requests.post(BASE + "/v1/identity_tokens/validate", json={"identity_token": issued["stream"],
                             "token_profile": "stream"}, timeout=30)
    check(response.status_code == 400 and "app_id" in response.json()["message"], f"profile without app: {response.text}")


def shown(profile, token):
    header, claims = decoded(token)
    print(f"{profile}:\n  header {json.dumps(header)}\n  claims {json.dumps(claims)}")


account, certificate_pem = service_account()
firebase_app = firebase_admin.initialize_app(firebase_credentials.Certificate(account), name="gateway-test")
app_a_uuid = make_app("a", [
    {"type": "layer"},
    {"type": "oidc", "audiences": ["client-a"]},
    {"type": "firebase", "service_account": account},
    {"type": "stream", "api_key": STREAM_KEY, "api_secret": STREAM_SECRET},
    {"type": "twilio", "account_sid": TWILIO_ACCOUNT, "api_key_sid": TWILIO_KEY, "api_key_secret": TWILIO_SECRET,
     "chat_service_sid": TWILIO_SERVICE},
])
app_b_uuid = make_app("b", [{"type": "oidc", "audiences": ["client-b"]}])

issued = {
    "layer": check_layer_unchanged(app_a_uuid),
    "oidc": check_oidc(app_a_uuid, app_b_uuid),
    "firebase": check_firebase(app_a_uuid, account, certificate_pem),
    "stream": check_stream(app_a_uuid),
    "twilio": check_twilio(app_a_uuid),
}
issued_after_refresh = check_oidc_session()
issued_after_second_factor = check_oidc_second_factor()
check_refusals(app_a_uuid)
check_validation(app_a_uuid, app_b_uuid, issued)
check_secrets_and_isolation(app_a_uuid, app_b_uuid)
check_audit(app_a_uuid, issued)
for profile, token in issued.items():
    shown(profile, token)
shown("oidc, refreshed", issued_after_refresh)
shown("oidc, password + TOTP", issued_after_second_factor)
print("every profile held")
