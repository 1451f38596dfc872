import Foundation
import PasskeyPlugin
import Testing

/// Authenticator data as authenticators write it, held to py_webauthn's
/// reading (Tests/Vendors/authenticator_data_judge.py): registrations and
/// assertions, with and without extensions, read field for field as it
/// reads them; what it refuses, refused; the forms refused by design (BS
/// without BE, a credential id over 1 023 bytes, a key not in canonical
/// CBOR) refused although it may take them.
@Suite struct AuthenticatorDataTests {
    @Test func pyWebAuthnJudgesEveryReading() async throws {
        let cases = try await VendorJudge.cases("authenticator_data_judge.py", ["\(UInt32.random(in: 0...UInt32.max))"])
        #expect(cases.count >= 144)
        var agreedReadings = 0
        for entry in cases {
            let name = entry["name"] as? String ?? "?"
            let ours = try? AuthenticatorData(bytes: CBORReaderTests.bytes(entry["hex"] as? String ?? ""))
            let theirs = entry["webauthn"] as? [String: Any]
            switch entry["expect"] as? String {
            case "refuse":
                #expect(ours == nil, "\(name): read although refused by design")
            case "agree":
                #expect((ours == nil) == (theirs == nil), "\(name): ours \(ours == nil ? "refused" : "read"), py_webauthn's not")
                if let ours, let theirs {
                    #expect(Self.reading(ours) == theirs as NSDictionary, "\(name)")
                    agreedReadings += 1
                }
            default:
                // A flipped bit: where we read it, py_webauthn reads the same.
                if let ours { #expect(theirs.map { Self.reading(ours) == $0 as NSDictionary } == true, "\(name)") }
            }
        }
        #expect(agreedReadings >= 48)
    }

    /// Our reading in the judge's terms.
    static func reading(_ data: AuthenticatorData) -> NSDictionary {
        func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
        let credential = data.attestedCredential
        let extensions = data.extensions.map { hex($0.encoded) }
        return [
            "rp_id_hash": hex(data.rpIDHash), "flags": Int(data.flags.rawValue), "sign_count": Int(data.signCount),
            "aaguid": credential.map { hex($0.aaguid) } ?? NSNull(),
            "credential_id": credential.map { hex($0.credentialID) } ?? NSNull(),
            "credential_public_key": credential.map { hex($0.publicKeyBytes) } ?? NSNull(),
            "extensions": extensions ?? NSNull(),
        ]
    }
}
