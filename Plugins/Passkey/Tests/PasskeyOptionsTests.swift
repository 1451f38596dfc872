import Foundation
import GatewayCore
@testable import PasskeyPlugin
import Testing

/// `plugins.passkey` is read strictly: each bad option is a 400 naming it,
/// and the origins an app ends up with are its web ones and those its
/// Android apps' fingerprints make.
@Suite struct PasskeyOptionsTests {
    static func options(_ members: [String: JSONValue], _ environment: AppEnvironment = .development) throws(GatewayError)
        -> PasskeyOptions
    {
        try PasskeyOptions(.object(members), environment: environment)
    }

    @Test func eachBadOptionIsRefusedNamingIt() {
        let fingerprint = JSONValue.string((0..<32).map { String(format: "%02X", $0) }.joined(separator: ":"))
        let refused: [([String: JSONValue], AppEnvironment, String)] = [
            ([:], .development, "rp_id"),
            (["rp_id": .string("https://example.com")], .development, "rp_id"),
            (["rp_id": .string("Example.com")], .development, "rp_id"),
            (["rp_id": .string("localhost")], .production, "rp_id localhost"),
            (["rp_id": .string("example.com"), "origins": .array([.string("https://evil.example")])], .development, "origins"),
            (["rp_id": .string("example.com"), "origins": .array([.string("https://example.com.evil.example")])], .development, "origins"),
            (["rp_id": .string("example.com"), "origins": .array([.string("http://example.com")])], .development, "origins"),
            (["rp_id": .string("example.com"), "origins": .array([.string("https://example.com:0")])], .development, "origins"),
            (["rp_id": .string("example.com"), "user_verification": .string("discouraged")], .development, "user_verification"),
            (["rp_id": .string("example.com"), "algorithms": .array([.string("RS256")])], .development, "algorithms must include ES256"),
            (["rp_id": .string("example.com"), "algorithms": .array([.string("HS256")])], .development, "algorithms"),
            (["rp_id": .string("example.com"), "ios_app_ids": .array([.string("com.example.app")])], .development, "ios_app_ids"),
            (
                ["rp_id": .string("example.com"), "android_apps": .array([.object(["package_name": .string("chat"), "sha256_cert_fingerprints": .array([fingerprint])])])],
                .development, "package_name"
            ),
            (
                ["rp_id": .string("example.com"), "android_apps": .array([.object(["package_name": .string("com.example.chat"), "sha256_cert_fingerprints": .array([.string("+A:BC")])])])],
                .development, "sha256_cert_fingerprints"
            ),
            (["rp_id": .string("example.com"), "challenge_lifetime_seconds": .number(600)], .development, "challenge_lifetime_seconds"),
            (["rp_id": .string("example.com"), "attestation": .string("direct")], .development, "attestation"),
        ]
        for (members, environment, named) in refused {
            #expect(throws: GatewayError.self, "\(members)") { try Self.options(members, environment) }
            do {
                _ = try Self.options(members, environment)
            } catch {
                #expect(error.message.contains(named), "\(members): \(error.message)")
            }
        }
    }

    @Test func theOriginsAreTheWebOnesAndThoseOfTheAndroidApps() throws {
        let bytes = (0..<32).map { UInt8($0) }
        let fingerprint = bytes.map { String(format: "%02x", $0) }.joined(separator: ":")
        let options = try Self.options([
            "rp_id": .string("example.com"),
            "origins": .array([.string("https://example.com"), .string("https://app.example.com:8443")]),
            "android_apps": .array([
                .object(["package_name": .string("com.example.chat"), "sha256_cert_fingerprints": .array([.string(fingerprint)])])
            ]),
        ], .production)
        #expect(options.relyingParty.origins == [
            "https://example.com", "https://app.example.com:8443", "android:apk-key-hash:\(Base64URL.encode(bytes))",
        ])
        #expect(options.relyingParty.requiresUserVerification && options.relyingParty.algorithms == [.es256, .rs256, .edDSA])
        #expect(options.androidApps.first?.fingerprintTexts == [fingerprint.uppercased()])
        let local = try Self.options(["rp_id": .string("localhost"), "origins": .array([.string("http://localhost:8080")])])
        #expect(local.relyingParty.origins == ["http://localhost:8080"])
    }
}
