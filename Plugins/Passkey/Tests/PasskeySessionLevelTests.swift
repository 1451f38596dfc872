import Foundation
import GatewayCore
import GatewayHTTPTestSupport
import HummingbirdTesting
import HTTPTypes
import GatewayRuntime
import GatewayTestSupport
import PasskeyTestSupport
import Testing

/// Issue 76.1: a passkey added with a session is bound at that session's
/// level. A session whose sign-in was one factor adds no passkey where the
/// user has a confirmed second factor or the app exempts passkeys from it
/// (403 `step_up_required`); where it may add one, the passkey never counts
/// as two factors and ends with the user's sessions.
@Suite struct PasskeySessionLevelTests {
    @Test func aOneFactorSessionAddsNoPasskeyThatSkipsTheSecondFactorInMemory() async throws {
        try await MemoryGateway.with(plugins: passkeyPlugins) { try await Self.stepUp(on: $0) }
    }

    @Test func aOneFactorSessionAddsNoPasskeyThatSkipsTheSecondFactorInPostgreSQL() async throws {
        try await TestGateway.with(plugins: passkeyPlugins) { try await Self.stepUp(on: $0) }
    }

    @Test func aPasskeyAddedAtOneFactorCountsAsOneAndEndsWithTheSessionsInMemory() async throws {
        try await MemoryGateway.with(plugins: passkeyPlugins) { try await Self.boundAtOneFactor(on: $0) }
    }

    @Test func aPasskeyAddedAtOneFactorCountsAsOneAndEndsWithTheSessionsInPostgreSQL() async throws {
        try await TestGateway.with(plugins: passkeyPlugins) { try await Self.boundAtOneFactor(on: $0) }
    }

    /// The review's attack: carol's password-only session, kept from before
    /// she enrolled TOTP, asks to add a passkey in an app that exempts
    /// passkeys. Refused before and after her enrolment; her session that
    /// passed TOTP adds one, which then signs in as two factors.
    static func stepUp(on gateway: some GatewayUnderTest) async throws {
        let app = try await gateway.createPasskeyApp(mfa: SecondFactorSettings(exemptCredentialTypes: ["passkey"]))
        let appID = app.appID.uuid.uuidString
        let oneFactor = try await gateway.aliceSession(app)

        // Passkeys are exempt: a one-factor session adds none, even before any factor exists.
        let options = try await gateway.post(["app_id": appID, "refresh_token": oneFactor], to: "/v1/passkeys/registration_options")
        #expect(options.status == .forbidden && options.json["error"] as? String == "step_up_required", "\(options.text)")
        #expect(try await gateway.reason(of: options, event: "passkey.challenge") == "session_one_factor")

        // Alice enrols TOTP with that session (an enrolment is how one gets a second factor).
        let enrolled = try await gateway.post(["app_id": appID, "refresh_token": oneFactor], to: "/v1/mfa/totp")
        #expect(enrolled.status == .created, "\(enrolled.text)")
        let secret = try #require(enrolled.json["secret"] as? String)
        let confirmed = try await gateway.post(
            ["app_id": appID, "refresh_token": oneFactor, "code": try await oathtoolCode(secret)], to: "/v1/mfa/totp/confirm")
        #expect(confirmed.status == .noContent, "\(confirmed.text)")

        // The old session is still one factor: both registration routes refuse it, and nothing is stored.
        let again = try await gateway.post(["app_id": appID, "refresh_token": oneFactor], to: "/v1/passkeys/registration_options")
        #expect(again.status == .forbidden && again.json["error"] as? String == "step_up_required", "\(again.text)")
        let forged = try await gateway.post(
            ["app_id": appID, "refresh_token": oneFactor, "client_data_json": "e30", "attestation_object": "oA"],
            to: "/v1/passkeys")
        #expect(forged.status == .forbidden && forged.json["error"] as? String == "step_up_required", "\(forged.text)")
        #expect(try await gateway.reason(of: forged, event: "passkey.registered") == "session_one_factor")

        // A sign-in that passes TOTP makes a two-factor session, which adds a passkey that skips TOTP.
        let firstStep = try await gateway.post(aliceRequest(app, nonce: "n-step"), to: "/v1/identity_tokens")
        #expect(firstStep.status == .forbidden && firstStep.json["error"] as? String == "mfa_required", "\(firstStep.text)")
        let ticket = try #require(firstStep.json["mfa_ticket"] as? String)
        let secondStep = try await gateway.post(
            [
                "app_id": appID, "nonce": "n-step",
                "credentials": ["type": "totp", "mfa_ticket": ticket, "code": try await oathtoolCode(secret, stepsAhead: 1)],
            ], to: "/v1/identity_tokens")
        #expect(secondStep.status == .ok, "\(secondStep.text)")
        let twoFactors = try #require(secondStep.json["refresh_token"] as? String)
        let authenticator = SoftwareAuthenticator()
        let registered = try await gateway.register(authenticator, app, refreshToken: twoFactors)
        #expect(registered.status == .created, "\(registered.text)")
        let handle = try await gateway.userHandle(of: twoFactors, app)
        let assertion = authenticator.assert(
            challenge: try await gateway.signInChallenge(app), rpID: MemoryGateway.rpID, origin: MemoryGateway.origin,
            userHandle: handle)
        let signedIn = try await gateway.post(MemoryGateway.passkeyRequest(app, assertion), to: "/v1/identity_tokens")
        #expect(signedIn.status == .ok && signedIn.json["identity_token"] is String, "\(signedIn.text)")

        let listed = try Answer(
            try await gateway.admin(
                .get, "/admin/v1/apps/\(app.appID.uuid)/users/alice/passkeys", token: try await gateway.operatorToken(), json: nil))
        #expect((listed.json["passkeys"] as? [[String: Any]])?.count == 1, "only the two-factor session's passkey: \(listed.text)")
    }

    /// Where neither rule applies (no factor, passkeys not exempt), a
    /// one-factor session adds a passkey; it signs in without `mfa` in its
    /// `amr`, so exempting passkeys later does not let it skip the second
    /// factor, and ending every session of the user takes it back.
    static func boundAtOneFactor(on gateway: some GatewayUnderTest) async throws {
        let app = try await gateway.createPasskeyApp(mfa: SecondFactorSettings())
        let oneFactor = try await gateway.aliceSession(app)
        let authenticator = SoftwareAuthenticator()
        let registered = try await gateway.register(authenticator, app, refreshToken: oneFactor)
        #expect(registered.status == .created, "\(registered.text)")
        let handle = try await gateway.userHandle(of: oneFactor, app)
        var count: UInt32 = 0
        func signIn() async throws -> Answer {
            count += 1
            let assertion = authenticator.assert(
                challenge: try await gateway.signInChallenge(app), rpID: MemoryGateway.rpID, origin: MemoryGateway.origin,
                userHandle: handle, signCount: count)
            return try await gateway.post(MemoryGateway.passkeyRequest(app, assertion), to: "/v1/identity_tokens")
        }
        let signedIn = try await signIn()
        #expect(signedIn.status == .ok, "\(signedIn.text)")
        let token = try #require(signedIn.json["identity_token"] as? String)
        #expect(ParsedIdentityToken(compact: token)?.claims["prn"] == .string("alice"))

        // The operator now exempts passkeys and requires a factor: this one is still one factor.
        let operatorToken = try await gateway.operatorToken()
        let changed = try await gateway.admin(
            .patch, "/admin/v1/apps/\(app.appID.uuid)", token: operatorToken,
            json: ["mfa": ["requirement": "required", "exempt_credential_types": ["passkey"]] as [String: any Sendable]])
        #expect(changed.status == .ok)
        gateway.tenants.invalidate(app.appID)
        let held = try await signIn()
        #expect(held.status == .forbidden && held.json["error"] as? String == "mfa_enrollment_required", "\(held.text)")

        // Ending every session of alice takes the passkey too.
        let ended = try Answer(
            try await gateway.admin(.delete, "/admin/v1/apps/\(app.appID.uuid)/users/alice/sessions", token: operatorToken, json: nil))
        #expect(ended.status == .ok && ended.json["revoked"] as? Int ?? 0 >= 1, "\(ended.text)")
        let revoked = try await gateway.auditRows().filter { $0.event == "passkey.revoked" }
        #expect(revoked.count == 1 && revoked[0].text.contains("sessions_ended"), "\(revoked.map(\.text))")
        let gone = try await signIn()
        #expect(gone.status == .unauthorized, "\(gone.text)")
        #expect(try await gateway.reason(of: gone, event: "token.denied") == "passkey_unknown_credential")
    }
}

/// The TOTP code Debian's oathtool shows for `secret` (base32), `stepsAhead` time steps from now.
func oathtoolCode(_ secret: String, stepsAhead: Int = 0) async throws -> String {
    let oathtool = try SuiteEnvironment.value("GATEWAY_TEST_OATHTOOL")
    let moment = Int(Date().timeIntervalSince1970) + stepsAhead * Int(TOTP.period)
    let shown = try await GatewayProcess.runProgram(
        oathtool, ["--totp", "--base32", "--now=@\(moment)", secret], environment: [:])
    let code = shown.output.trimmingCharacters(in: .whitespacesAndNewlines)
    try #require(shown.status == 0 && code.count == TOTP.digits, "oathtool: \(shown.output)")
    return code
}
