import Foundation
import GatewayCore
import GatewayTestSupport
import IdentityGatewayClient
import PasskeyTestSupport
import Testing

/// The passkey sign-in's HTTP half, which builds and runs everywhere: the
/// options, and the assertion as a credential. A software authenticator
/// stands in for AuthenticationServices (`PlatformPasskeys`, Apple only).
@Suite struct PasskeySignInTests {
    @Test func aPasskeyAssertionSignsInAndItsSessionAnswersChallenges() async throws {
        let settings: [String: any Sendable] = [
            "credential_types": ["static", "passkey"],
            "plugins": [
                "static": ClientGateway.staticUsers, "passkey": ["rp_id": "example.com"] as [String: any Sendable],
            ] as [String: any Sendable],
        ]
        try await ClientGateway.with(settings) { gateway in
            let store = MemorySessionStore()
            let client = gateway.client(store: store)
            try await gateway.signIn(client)
            // Alice adds a passkey with her session (the app does this once, after a sign-in).
            let refreshToken = try #require(await store.load()).refreshToken
            let options = try await HTTPCall.send(
                "POST", "\(gateway.proxyURL)/v1/passkeys/registration_options",
                json: ["app_id": gateway.appID, "refresh_token": refreshToken])
            try #require(options.status == 200, "\(options.text)")
            let challengeText = try #require(options.json["challenge"] as? String)
            let challenge = try #require(Base64URL.decode(challengeText))
            let user = try #require(options.json["user"] as? [String: Any])
            let userHandleText = try #require(user["id"] as? String)
            let userHandle = try #require(Base64URL.decode(userHandleText))
            let authenticator = SoftwareAuthenticator()
            let registration = authenticator.register(challenge: Array(challenge), rpID: "example.com", origin: "https://example.com")
            let added = try await HTTPCall.send(
                "POST", "\(gateway.proxyURL)/v1/passkeys",
                json: [
                    "app_id": gateway.appID, "refresh_token": refreshToken, "name": "Alice's phone",
                    "credential_id": Base64URL.encode(registration.credentialID),
                    "client_data_json": Base64URL.encode(registration.clientDataJSON),
                    "attestation_object": Base64URL.encode(registration.attestationObject),
                ])
            try #require(added.status == 201, "\(added.text)")
            try await client.signOut()

            let request = try await client.passkeyRequestOptions()
            #expect(request.relyingPartyID == "example.com")
            #expect(request.challenge.count == 32)
            let assertion = authenticator.assert(
                challenge: Array(request.challenge), rpID: request.relyingPartyID, origin: "https://example.com",
                userHandle: Array(userHandle))
            let credential = Credential.passkey(
                PasskeyAssertion(
                    credentialID: Data(assertion.credentialID), clientDataJSON: Data(assertion.clientDataJSON),
                    authenticatorData: Data(assertion.authenticatorData), signature: Data(assertion.signature),
                    userHandle: Data(assertion.userHandle)))
            guard case .signedIn(let token) = try await client.signIn(userID: nil, credential: credential, nonce: "by-passkey") else {
                throw Failure(description: "a second factor was asked for")
            }
            #expect(try claims(of: token)["prn"] as? String == "alice")
            #expect(try await client.session()?.userID == "alice")
            _ = try await client.identityToken(forNonce: "after-the-passkey")
            // The challenge is single use: the same assertion again is refused.
            await #expect(throws: IdentityGatewayError.invalidCredentials) {
                try await client.signIn(userID: nil, credential: credential, nonce: "again")
            }
        }
    }
}
