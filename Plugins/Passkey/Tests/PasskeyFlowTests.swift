import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import GatewayRuntime
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import PasskeyPlugin
import PasswordPlugin
import StaticUsersPlugin
import PasskeyTestSupport
import Testing

/// Passkeys end to end against PostgreSQL: registered with the user's
/// session, used to sign in with no user id and no secret, listed,
/// renamed and revoked through the admin API; and every check attacked
/// through HTTP, each refusal's row naming it.
@Suite struct PasskeyFlowTests {
    @Test func aUserRegistersWithTheirSessionThenSignsInWithNothingButThePasskey() async throws {
        try await MemoryGateway.with(plugins: passkeyPlugins) { gateway in
            let app = try await gateway.createPasskeyApp()
            let session = try await gateway.aliceSession(app)
            let authenticator = SoftwareAuthenticator()
            let registered = try await gateway.register(authenticator, app, refreshToken: session)
            #expect(registered.status == .created, "\(registered.text)")
            #expect(registered.json["name"] as? String == "Alice's phone")
            #expect(registered.json["credential_id"] as? String == Base64URL.encode(authenticator.credentialID))
            #expect(registered.json["backup_eligible"] as? Bool == true && registered.json["backed_up"] as? Bool == true)
            #expect(registered.json["attestation_format"] as? String == "none")
            #expect(try await gateway.reason(of: registered, event: "passkey.registered") == nil)

            let handle = try await gateway.userHandle(of: session, app)
            let assertion = authenticator.assert(
                challenge: try await gateway.signInChallenge(app), rpID: MemoryGateway.rpID, origin: MemoryGateway.origin,
                userHandle: handle)
            let signedIn = try await gateway.post(MemoryGateway.passkeyRequest(app, assertion), to: "/v1/identity_tokens")
            #expect(signedIn.status == .ok, "\(signedIn.text)")
            let token = try #require(signedIn.json["identity_token"] as? String)
            #expect(ParsedIdentityToken(compact: token)?.claims["prn"] == .string("alice"))
            // A session began with the passkey, and remembers how: a synced key, the user present and verified,
            // and no `mfa`: the passkey was added with a one-factor (password) session, and is bound at its level.
            let sessions = try await gateway.admin(
                .get, "/admin/v1/apps/\(app.appID.uuid)/users/alice/sessions", token: try await gateway.operatorToken())
            let listed = try Answer(sessions)
            let items = try #require(listed.json["items"] as? [[String: Any]], "\(listed.text)")
            #expect(items.contains { $0["credential_type"] as? String == "passkey" && $0["amr"] as? [String] == ["swk", "user"] })

            // The same response again: its challenge is spent.
            let replayed = try await gateway.post(MemoryGateway.passkeyRequest(app, assertion), to: "/v1/identity_tokens")
            #expect(replayed.status == .unauthorized && replayed.json["identity_token"] == nil)
            #expect(try await gateway.reason(of: replayed, event: "token.denied") == "passkey_challenge")

            // Listed with its last use, renamed, revoked; then it signs nobody in.
            let operatorToken = try await gateway.operatorToken()
            let base = "/admin/v1/apps/\(app.appID.uuid)/users/alice/passkeys"
            let list = try Answer(try await gateway.admin(.get, base, token: operatorToken))
            let passkeys = try #require(list.json["passkeys"] as? [[String: Any]], "\(list.text)")
            #expect(passkeys.count == 1 && passkeys.first?["last_used_at"] is String)
            let id = Base64URL.encode(authenticator.credentialID)
            let renamed = try Answer(try await gateway.admin(.patch, "\(base)/\(id)", token: operatorToken, json: ["name": "Work laptop"]))
            #expect(renamed.status == .ok && renamed.json["name"] as? String == "Work laptop", "\(renamed.text)")
            let revoked = try await gateway.admin(.delete, "\(base)/\(id)", token: operatorToken)
            #expect(revoked.status == .noContent)
            #expect(try await gateway.admin(.delete, "\(base)/\(id)", token: operatorToken).status == .notFound)
            let events = try await gateway.auditRows().map(\.event)
            #expect(events.contains("passkey.renamed") && events.contains("passkey.revoked"))
            let afterRevoke = authenticator.assert(
                challenge: try await gateway.signInChallenge(app), rpID: MemoryGateway.rpID, origin: MemoryGateway.origin,
                userHandle: handle)
            let refused = try await gateway.post(MemoryGateway.passkeyRequest(app, afterRevoke), to: "/v1/identity_tokens")
            #expect(refused.status == .unauthorized)
            #expect(try await gateway.reason(of: refused, event: "token.denied") == "passkey_unknown_credential")
        }
    }

    /// Only the user's live session (or the admin API) registers a passkey,
    /// and a registration that fails a check is refused naming it.
    @Test func registrationsAreRefusedForAnyoneButTheUserAndForEveryBrokenCheck() async throws {
        try await MemoryGateway.with(plugins: passkeyPlugins) { gateway in
            let app = try await gateway.createPasskeyApp()
            let appID = app.appID.uuid.uuidString
            let noToken = try await gateway.post(["app_id": appID], to: "/v1/passkeys/registration_options")
            #expect(noToken.status == .badRequest, "\(noToken.text)")
            let forged = try await gateway.post(
                ["app_id": appID, "refresh_token": "rt1.\(String(repeating: "A", count: 60))"], to: "/v1/passkeys/registration_options")
            #expect(forged.status == .unauthorized && forged.json["error"] as? String == "invalid_credentials", "\(forged.text)")

            let session = try await gateway.aliceSession(app)
            let authenticator = SoftwareAuthenticator()
            let attacks: [(String, String, (inout SoftwareAuthenticator.Registration) -> Void)] = [
                ("another origin", "passkey_origin", { _ in }),
                ("not base64url", "passkey_malformed", { $0.clientDataJSON = [] }),
                ("another credential id", "passkey_credential_data", { $0.credentialID = [1, 2, 3] }),
            ]
            for (name, reason, bend) in attacks {
                let answer = try await gateway.register(
                    authenticator, app, refreshToken: session, origin: name == "another origin" ? "https://evil.example" : MemoryGateway.origin,
                    bend: bend)
                #expect(answer.status == .badRequest && answer.json["error"] as? String == "passkey_rejected", "\(name): \(answer.text)")
                #expect(try await gateway.reason(of: answer, event: "passkey.registered") == reason, "\(name)")
            }
            // An attestation object over 16 KiB, and one nested past the reader's depth: refused unread.
            let oversized = try await gateway.register(authenticator, app, refreshToken: session) {
                $0.attestationObject = CBORValue.map([
                    CBORMapEntry(.text("fmt"), .text("packed")),
                    CBORMapEntry(.text("attStmt"), .map([CBORMapEntry(.text("x5c"), .bytes([UInt8](repeating: 1, count: 17 * 1024)))])),
                    CBORMapEntry(.text("authData"), .bytes([])),
                ]).encoded
            }
            #expect(oversized.status == .badRequest && oversized.json["error"] as? String == "passkey_rejected", "\(oversized.text)")
            #expect(try await gateway.reason(of: oversized, event: "passkey.registered") == "passkey_malformed")
            let nested = try await gateway.register(authenticator, app, refreshToken: session) {
                $0.attestationObject = [0xA3, 0x63] + Array("fmt".utf8) + [0x64] + Array("none".utf8) + [0x67] + Array("attStmt".utf8)
                    + [UInt8](repeating: 0x81, count: 64) + [0xA0]
            }
            #expect(try await gateway.reason(of: nested, event: "passkey.registered") == "passkey_malformed")

            // A sign-in challenge does not register; a registration's challenge is spent once.
            let signInChallenge = try await gateway.signInChallenge(app)
            let withSignInChallenge = try await gateway.register(authenticator, app, refreshToken: session) { registration in
                registration = authenticator.register(challenge: signInChallenge, rpID: MemoryGateway.rpID, origin: MemoryGateway.origin)
            }
            #expect(try await gateway.reason(of: withSignInChallenge, event: "passkey.registered") == "passkey_challenge")
            #expect(try await gateway.register(authenticator, app, refreshToken: session).status == .created)
            let again = try await gateway.register(authenticator, app, refreshToken: session)
            #expect(again.status == .conflict, "\(again.text)")
            #expect(try await gateway.reason(of: again, event: "passkey.registered") == "passkey_duplicate")

            // The app's admin registers for its own users; another app's admin sees no such app.
            let other = try await gateway.createPasskeyApp()
            let otherAdmin = try await gateway.adminToken(.app(other.appID), expiresAt: nil, revoked: false, name: "other")
            let foreign = try await gateway.admin(
                .post, "/admin/v1/apps/\(appID)/users/alice/passkeys:registration_options", token: otherAdmin)
            #expect(foreign.status == .notFound)
            let ownAdmin = try await gateway.adminToken(.app(app.appID), expiresAt: nil, revoked: false, name: "own")
            let options = try Answer(
                try await gateway.admin(.post, "/admin/v1/apps/\(appID)/users/bob/passkeys:registration_options", token: ownAdmin))
            let challenge = try base64URLBytes(options.json["challenge"])
            let bobs = SoftwareAuthenticator(.edDSA)
            let registration = bobs.register(challenge: Array(challenge), rpID: MemoryGateway.rpID, origin: MemoryGateway.origin)
            let body: [String: any Sendable] = [
                "client_data_json": Base64URL.encode(registration.clientDataJSON),
                "attestation_object": Base64URL.encode(registration.attestationObject),
            ]
            // The challenge was given for bob: alice's session cannot spend it.
            let stolen = try await gateway.post(
                body.merging(["app_id": appID, "refresh_token": session]) { $1 }, to: "/v1/passkeys")
            #expect(stolen.status == .badRequest)
            #expect(try await gateway.reason(of: stolen, event: "passkey.registered") == "passkey_challenge")
            let options2 = try Answer(
                try await gateway.admin(.post, "/admin/v1/apps/\(appID)/users/bob/passkeys:registration_options", token: ownAdmin))
            let challenge2 = try base64URLBytes(options2.json["challenge"])
            let registration2 = bobs.register(challenge: Array(challenge2), rpID: MemoryGateway.rpID, origin: MemoryGateway.origin)
            let byAdmin = try Answer(
                try await gateway.admin(
                    .post, "/admin/v1/apps/\(appID)/users/bob/passkeys", token: ownAdmin,
                    json: [
                        "client_data_json": Base64URL.encode(registration2.clientDataJSON),
                        "attestation_object": Base64URL.encode(registration2.attestationObject),
                    ]))
            #expect(byAdmin.status == .created, "\(byAdmin.text)")
        }
    }

    /// Each check of an assertion attacked through the token endpoint: a
    /// 401 with no token, the row naming the check.
    @Test func assertionsAreRefusedForEveryBrokenCheck() async throws {
        try await MemoryGateway.with(plugins: passkeyPlugins) { gateway in
            let app = try await gateway.createPasskeyApp()
            let session = try await gateway.aliceSession(app)
            let authenticator = SoftwareAuthenticator()
            #expect(try await gateway.register(authenticator, app, refreshToken: session).status == .created)
            let handle = try await gateway.userHandle(of: session, app)
            let (rp, origin) = (MemoryGateway.rpID, MemoryGateway.origin)

            func signIn(_ make: ([UInt8]) -> SoftwareAuthenticator.Assertion, user: String? = nil) async throws -> (Answer, String?) {
                var body = MemoryGateway.passkeyRequest(app, make(try await gateway.signInChallenge(app)))
                body["user_id"] = user
                let answer = try await gateway.post(body, to: "/v1/identity_tokens")
                return (answer, try await gateway.reason(of: answer, event: answer.status == .ok ? "token.issued" : "token.denied"))
            }
            // A counter that grows, then one that goes back: the clone is refused.
            #expect(try await signIn { authenticator.assert(challenge: $0, rpID: rp, origin: origin, userHandle: handle, signCount: 5) }.0.status == .ok)
            let cloned = try await signIn { authenticator.assert(challenge: $0, rpID: rp, origin: origin, userHandle: handle, signCount: 3) }
            #expect(cloned.0.status == .unauthorized && cloned.1 == "passkey_counter")
            // The backup state may change after registration (a passkey synced later).
            let unsynced = try await signIn {
                authenticator.assert(
                    challenge: $0, rpID: rp, origin: origin, userHandle: handle, signCount: 6,
                    flags: [.userPresent, .userVerified, .backupEligible])
            }
            #expect(unsynced.0.status == .ok, "\(unsynced.0.text)")

            let attacks: [(String, String, ([UInt8]) -> SoftwareAuthenticator.Assertion)] = [
                ("passkey_user_handle", "another user's handle", {
                    authenticator.assert(challenge: $0, rpID: rp, origin: origin, userHandle: [UInt8](repeating: 0, count: 32), signCount: 7)
                }),
                ("passkey_origin", "another origin", {
                    authenticator.assert(challenge: $0, rpID: rp, origin: "https://evil.example", userHandle: handle, signCount: 8)
                }),
                ("passkey_rp_id", "another RP ID", {
                    authenticator.assert(challenge: $0, rpID: "evil.example", origin: origin, userHandle: handle, signCount: 9)
                }),
                ("passkey_user_verification", "no user verification", {
                    authenticator.assert(challenge: $0, rpID: rp, origin: origin, userHandle: handle, signCount: 10, flags: [.userPresent])
                }),
                ("passkey_signature", "another key", {
                    SoftwareAuthenticator(credentialID: authenticator.credentialID).assert(
                        challenge: $0, rpID: rp, origin: origin, userHandle: handle, signCount: 11)
                }),
                ("passkey_unknown_credential", "an unregistered passkey", {
                    SoftwareAuthenticator().assert(challenge: $0, rpID: rp, origin: origin, userHandle: handle)
                }),
                ("passkey_challenge", "a made-up challenge", { _ in
                    authenticator.assert(challenge: [UInt8](repeating: 3, count: 32), rpID: rp, origin: origin, userHandle: handle, signCount: 12)
                }),
            ]
            for (reason, name, make) in attacks {
                let (answer, written) = try await signIn(make)
                #expect(answer.status == .unauthorized && answer.json["identity_token"] == nil, "\(name): \(answer.text)")
                #expect(written == reason, "\(name)")
            }
            // Alice's passkey at another app of the same RP ID: it is not that app's passkey.
            let other = try await gateway.createPasskeyApp()
            let otherChallenge = try await gateway.signInChallenge(other)
            let elsewhere = try await gateway.post(
                MemoryGateway.passkeyRequest(
                    other,
                    authenticator.assert(challenge: otherChallenge, rpID: rp, origin: origin, userHandle: handle, signCount: 20)),
                to: "/v1/identity_tokens")
            #expect(elsewhere.status == .unauthorized)
            #expect(try await gateway.reason(of: elsewhere, event: "token.denied") == "passkey_unknown_credential")
            // A challenge of this app spent at the other: not the other's challenge.
            let crossed = try await gateway.post(
                MemoryGateway.passkeyRequest(
                    other,
                    authenticator.assert(
                        challenge: try await gateway.signInChallenge(app), rpID: rp, origin: origin, userHandle: handle, signCount: 21)),
                to: "/v1/identity_tokens")
            #expect(try await gateway.reason(of: crossed, event: "token.denied") == "passkey_challenge")
            let namedOther = try await signIn(
                { authenticator.assert(challenge: $0, rpID: rp, origin: origin, userHandle: handle, signCount: 13) }, user: "bob")
            #expect(namedOther.0.status == .unauthorized && namedOther.1 == "passkey_user_id")
        }
    }

    /// An app that requires a second factor and exempts passkeys: a passkey
    /// the device verified its user with is two factors and gets its token;
    /// the same passkey used without user verification (allowed, since the
    /// app's `user_verification` is `preferred`) is one, and is sent to the
    /// second factor like a password. (Registered by the app's admin: one a
    /// one-factor session added is never two, PasskeySessionLevelTests.)
    @Test func onlyAPasskeyWithUserVerificationSkipsARequiredSecondFactor() async throws {
        try await MemoryGateway.with(plugins: passkeyPlugins) { gateway in
            let app = try await gateway.createPasskeyApp(["user_verification": .string("preferred")])
            let session = try await gateway.aliceSession(app)
            let authenticator = SoftwareAuthenticator()
            let registered = try await gateway.registerByAdmin(authenticator, app, user: "alice")
            #expect(registered.status == .created, "\(registered.text)")
            let handle = try await gateway.userHandle(of: session, app)
            let changed = try await gateway.admin(
                .patch, "/admin/v1/apps/\(app.appID.uuid)", token: try await gateway.operatorToken(),
                json: ["mfa": ["requirement": "required", "exempt_credential_types": ["passkey"]] as [String: any Sendable]])
            #expect(changed.status == .ok)
            gateway.tenants.invalidate(app.appID)  // what the change listener does on a NOTIFY, which this gateway does not run

            let verified = authenticator.assert(
                challenge: try await gateway.signInChallenge(app), rpID: MemoryGateway.rpID, origin: MemoryGateway.origin,
                userHandle: handle, signCount: 1)
            let twoFactors = try await gateway.post(MemoryGateway.passkeyRequest(app, verified), to: "/v1/identity_tokens")
            #expect(twoFactors.status == .ok && twoFactors.json["identity_token"] is String, "\(twoFactors.text)")

            let presentOnly = authenticator.assert(
                challenge: try await gateway.signInChallenge(app), rpID: MemoryGateway.rpID, origin: MemoryGateway.origin,
                userHandle: handle, signCount: 2, flags: [.userPresent, .backupEligible, .backedUp])
            let oneFactor = try await gateway.post(MemoryGateway.passkeyRequest(app, presentOnly), to: "/v1/identity_tokens")
            #expect(oneFactor.status == .forbidden && oneFactor.json["identity_token"] == nil, "\(oneFactor.text)")
            #expect(oneFactor.json["error"] as? String == "mfa_enrollment_required")
            #expect(oneFactor.json["mfa_ticket"] is String)

            let password = try await gateway.post(aliceRequest(app, nonce: "n-\(UUID())"), to: "/v1/identity_tokens")
            #expect(password.status == .forbidden && password.json["error"] as? String == "mfa_enrollment_required")
        }
    }

    /// The association files an operator serves at the RP domain, from the app's options.
    @Test func theAdminAPIRendersTheAssociationFiles() async throws {
        try await MemoryGateway.with(plugins: passkeyPlugins) { gateway in
            let fingerprint = (0..<32).map { String(format: "%02X", $0) }.joined(separator: ":")
            let app = try await gateway.createPasskeyApp([
                "ios_app_ids": .array([.string("ABCDE12345.com.example.chat")]),
                "android_apps": .array([
                    .object([
                        "package_name": .string("com.example.chat"), "sha256_cert_fingerprints": .array([.string(fingerprint)]),
                    ])
                ]),
            ])
            let answer = try Answer(
                try await gateway.admin(
                    .get, "/admin/v1/apps/\(app.appID.uuid)/passkeys/association", token: try await gateway.operatorToken()))
            #expect(answer.status == .ok, "\(answer.text)")
            let apple = try #require(answer.json["apple_app_site_association"] as? [String: Any])
            #expect((apple["webcredentials"] as? [String: Any])?["apps"] as? [String] == ["ABCDE12345.com.example.chat"])
            let links = try #require(answer.json["assetlinks"] as? [[String: Any]])
            #expect(links.first?["relation"] as? [String] == ["delegate_permission/common.get_login_creds"])
            let target = try #require(links.first?["target"] as? [String: Any])
            #expect(target["namespace"] as? String == "android_app" && target["package_name"] as? String == "com.example.chat")
            #expect(target["sha256_cert_fingerprints"] as? [String] == [fingerprint])

            // The Android app's origin is the one its fingerprint makes: a sign-in from it is taken.
            let session = try await gateway.aliceSession(app)
            let androidOrigin = "android:apk-key-hash:" + Base64URL.encode((0..<32).map { UInt8($0) })
            let authenticator = SoftwareAuthenticator()
            let registered = try await gateway.register(authenticator, app, refreshToken: session, origin: androidOrigin)
            #expect(registered.status == .created, "\(registered.text)")
        }
    }
}
