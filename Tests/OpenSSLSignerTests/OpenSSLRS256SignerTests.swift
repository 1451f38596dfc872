import _CryptoExtras
import Foundation
import GatewayCore
import GatewayTestSupport
import OpenSSLSigner
import Testing

/// The OpenSSL signer must be a drop-in for the swift-crypto one: PKCS#1 v1.5
/// is deterministic, so the same key and input give the same bytes.
@Suite struct OpenSSLRS256SignerTests {
    static let claims = IdentityTokenClaims(
        issuer: ProviderID(uuid: UUID()), identity: VerifiedIdentity(userID: "alice", profile: UserProfile([.firstName: "Alice"])),
        nonce: "abc+/=123", issuedAt: 1_461_023_254, lifetimeSeconds: 120)

    @Test(arguments: ["pkcs8", "pkcs1"])
    func tokensAreByteIdenticalToSwiftCryptos(format: String) async throws {
        let pair = try RSAKeyPair(pem: try await TestKeys.opensslPEM(format: format))
        let keyID = KeyID(uuid: UUID())
        let reference = try TokenSigningKey(keyID: keyID, signer: pair.signer).mint(Self.claims)
        let openSSL = try TokenSigningKey(keyID: keyID, signer: try OpenSSLRS256Signer(pair)).mint(Self.claims)
        #expect(openSSL == reference)
        let direct = try OpenSSLRS256Signer(privateKeyPEM: try await TestKeys.opensslPEM(format: format))
        #expect(direct.signatureBytes == 256)
    }

    @Test func aLargerKeyGivesTheSameBytesToo() async throws {
        let pair = try RSAKeyPair(pem: try await TestKeys.opensslPEM(format: "pkcs8", bits: 3072))
        let message = Array("header.payload".utf8)
        #expect(try OpenSSLRS256Signer(pair).sign(message) == pair.signer.sign(message))
    }

    @Test func theOpenSSLCommandVerifiesItsSignatures() async throws {
        let pair = TestKeys.shared
        let message = Data("eyJ0eXAiOiJKV1QifQ.eyJwcm4iOiJhbGljZSJ9".utf8)
        let signature = try OpenSSLRS256Signer(pair).sign(Array(message))
        #expect(try await OpenSSL.verifiesRS256(message: message, signature: Data(signature), publicKeyPEM: pair.publicKeyPEM))
        var tampered = signature
        tampered[10] ^= 1
        #expect(try await OpenSSL.verifiesRS256(message: message, signature: Data(tampered), publicKeyPEM: pair.publicKeyPEM) == false)
    }

    @Test func oneSignerServesManyTasksAtOnce() async throws {
        let signer = try OpenSSLRS256Signer(TestKeys.shared)
        let messages = (0..<64).map { Array("message \($0)".utf8) }
        let expected = try messages.map { try TestKeys.shared.signer.sign($0) }
        let mismatches = try await withThrowingTaskGroup(of: Int.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var mismatches = 0
                    for round in 0..<50 {
                        let index = (worker * 50 + round) % messages.count
                        if try signer.sign(messages[index]) != expected[index] { mismatches += 1 }
                    }
                    return mismatches
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(mismatches == 0)
    }

    @Test(arguments: [
        "not a key",
        "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
    ])
    func unreadableKeysAreRefusedWithoutEchoingThem(pem: String) {
        #expect {
            _ = try OpenSSLRS256Signer(privateKeyPEM: pem)
        } throws: { error in
            guard let error = error as? OpenSSLError else { return false }
            return error.operation == "reading the private key" && !error.description.contains("AAAA")
        }
    }

    @Test func anECKeyIsRefused() async throws {
        let pem = try await OpenSSL.generatedPEM(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"])
        #expect {
            _ = try OpenSSLRS256Signer(privateKeyPEM: pem)
        } throws: { error in
            (error as? OpenSSLError)?.reason == "not an RSA key"
        }
    }
}
