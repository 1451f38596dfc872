import Foundation
import GatewayCore
import GatewayTestSupport
import IdentityGatewayClient
import Testing

/// The library's self-service and second-factor calls against the gateway:
/// sign up, verify, recover, delete the account; enrol TOTP and complete a
/// sign-in that asks for it. The codes come from a real SMTP server's mailbox.
@Suite struct AccountTests {
    @Test func signUpVerifySignInByCodeRecoverAndDeleteTheAccount() async throws {
        try await SMTPSink.with { sink in
            let app: [String: any Sendable] = [
                "credential_types": ["password", "email_code"],
                "plugins": [
                    "password": ["argon2": ["memory_kib": 8192, "iterations": 1]],
                    "email_code": [
                        "from": "accounts@shop.example",
                        "sender": [
                            "type": "smtp", "host": "localhost", "port": sink.ports["starttls"]!, "tls": "starttls",
                            "username": "mailer", "password": SMTPSink.password,
                        ] as [String: any Sendable],
                    ] as [String: any Sendable],
                ] as [String: any Sendable],
                "self_service": [
                    "sign_up": "verified_email", "password_reset": true, "account_deletion": true,
                ] as [String: any Sendable],
            ]
            let environment = ["GATEWAY_EMAIL_ALLOW_PRIVATE_ADDRESSES": "true", "GATEWAY_EMAIL_SMTP_CA_FILE": sink.caFile]
            try await ClientGateway.with(app, environment: environment) { gateway in
                let store = MemorySessionStore()
                let client = gateway.client(store: store)
                let email = "grace@shop.example"
                let sent = try await client.signUp(email: email, password: "correct horse battery", firstName: "Grace")
                #expect(sent.expiresIn > .zero)
                let userID = try #require(try await client.confirmVerification(email: email, code: try await code(in: sink, number: 1)))
                guard case .signedIn = try await client.signIn(userID: userID, credential: .password("correct horse battery"), nonce: "n1")
                else { throw Failure(description: "a second factor was asked for") }
                #expect(try await client.session()?.userID == userID)

                // An email code signs the same user in; the session learns who from the token.
                _ = try await client.requestEmailCode(to: email)
                let emailCode = try await code(in: sink, number: 2)
                try await client.signOut()
                guard case .signedIn(let token) = try await client.signIn(userID: nil, credential: .emailCode(email: email, code: emailCode), nonce: "by-code")
                else { throw Failure(description: "a second factor was asked for") }
                #expect(try claims(of: token)["prn"] as? String == userID)
                #expect(try await client.session()?.userID == userID)

                await #expect(throws: IdentityGatewayError.invalidCredentials) {
                    try await client.changePassword(current: "wrong horse", new: "a new long password")
                }
                // A 401 of the route is not the session's end.
                #expect(try await client.session() != nil)

                _ = try await client.requestPasswordReset(for: email)
                let ended = try await client.confirmPasswordReset(
                    email: email, code: try await code(in: sink, number: 3), newPassword: "a new long password")
                #expect(ended == 1)
                await #expect(throws: IdentityGatewayError.signedOut) { try await client.identityToken(forNonce: "n2") }
                #expect(await store.load() == nil)

                _ = try await client.signIn(userID: userID, credential: .password("a new long password"), nonce: "n3")
                try await client.deleteAccount()
                #expect(await store.load() == nil)
                await #expect(throws: IdentityGatewayError.invalidCredentials) {
                    try await client.signIn(userID: userID, credential: .password("a new long password"), nonce: "n4")
                }
            }
        }
    }

    @Test func aSecondFactorIsEnrolledAndAsksForItsCodeAtTheNextSignIn() async throws {
        try await ClientGateway.with(["mfa": [String: any Sendable]()]) { gateway in
            let client = gateway.client()
            try await gateway.signIn(client)
            let enrollment = try await client.enrollTOTP()
            #expect(enrollment.recoveryCodes.count == 10)
            let secret = try #require(TOTPSecret(bytes: base32Decoded(enrollment.secret)))
            try await client.confirmTOTP(code: TOTP.code(secret, step: TOTP.step(at: Date())))
            guard
                case .secondFactorRequired(let challenge) = try await client.signIn(
                    userID: "alice", credential: .staticUser(password: "wonderland"), nonce: "two-steps")
            else {
                throw Failure(description: "the sign-in asked for no second factor")
            }
            #expect(!challenge.needsEnrollment)
            #expect(challenge.methods.contains("recovery_code"))
            await #expect(throws: IdentityGatewayError.invalidCredentials) {
                try await client.completeSignIn(challenge, with: .recoveryCode("aaaaa-aaaaa"))
            }
            let token = try await client.completeSignIn(challenge, with: .recoveryCode(enrollment.recoveryCodes[0]))
            #expect(try claims(of: token)["nce"] as? String == "two-steps")
            // The two-step sign-in's session answers challenges.
            _ = try await client.identityToken(forNonce: "after-two-steps")
        }
    }

    @Test func theExampleSignsInAndAnswersThreeChallenges() async throws {
        try await ClientGateway.with { gateway in
            let example = try GatewayProcess.binary().deletingLastPathComponent().appendingPathComponent("gateway-client-example")
            let sessionFile = FileManager.default.temporaryDirectory.appendingPathComponent("example-\(UUID().uuidString).json")
            defer { try? FileManager.default.removeItem(at: sessionFile) }
            let run = try await GatewayProcess.runProgram(
                example.path, [gateway.proxyURL, gateway.appID, "alice", "wonderland", "static", sessionFile.path], environment: [:])
            #expect(run.status == 0, "\(run.output)")
            #expect(run.output.components(separatedBy: "\n").filter { $0.hasPrefix("challenge ") }.count == 3, "\(run.output)")
            #expect(run.output.contains("signed out"))
            #expect(try await gateway.rows("token.issued", session: "refreshed") == 3)
            #expect(!FileManager.default.fileExists(atPath: sessionFile.path))
        }
    }
}

/// The code in the `number`th message the sink received.
func code(in sink: SMTPSink, number: Int) async throws -> String {
    let messages = try await sink.messages(atLeast: number)
    let text = try #require(messages[number - 1]["text"] as? String)
    return try #require(text.firstMatch(of: /\b[0-9]{6,10}\b/)).output.description
}

/// RFC 4648 base32 without padding, as the enrolment answers the secret.
func base32Decoded(_ text: String) -> [UInt8] {
    let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
    var bytes: [UInt8] = []
    var buffer = 0
    var bits = 0
    for character in text.uppercased() {
        guard let value = alphabet.firstIndex(of: character) else { continue }
        buffer = buffer << 5 | value
        bits += 5
        if bits >= 8 {
            bits -= 8
            bytes.append(UInt8(buffer >> bits & 0xff))
        }
    }
    return bytes
}
