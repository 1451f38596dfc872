import Foundation
import GatewayCore
import PasskeyPlugin
import Testing

/// Registrations and assertions made by a software authenticator written
/// with `cryptography` and `cbor2` (Tests/Vendors/passkey_ceremony_judge.py:
/// ES256, RS256 and EdDSA keys, web and Android origins, synced and
/// device-bound flags, counters at 0 and counting), each also bent one way
/// (a flag, the origin, the challenge, the RP ID, the type, the counter, a
/// signature bit or another key, truncated CBOR or client data), verified
/// by py_webauthn there and by the plugin's ceremonies here. Every verdict
/// must agree, but for the forms refused by design (a cross-origin frame, a
/// member named twice, BS without BE, attested data in an assertion) and
/// the attestation policy (a packed statement taken unverified).
@Suite struct PasskeyCeremonyTests {
    static let rpID = "example.com"

    /// The plugin's verdict on one case: its challenge must be the one
    /// expected (the store spends it in the gateway), then the ceremony's checks.
    static func ours(_ entry: [String: Any]) throws -> Bool {
        let origins = Set(entry["origins"] as? [String] ?? [])
        let algorithms = Set((entry["algorithms"] as? [Int] ?? []).compactMap { COSEKey.Algorithm(rawValue: Int64($0)) })
        let party = RelyingParty(
            id: entry["rp_id"] as? String ?? "", origins: origins, requiresUserVerification: entry["require_uv"] as? Bool ?? true,
            algorithms: algorithms)
        let credential = try #require(entry["credential"] as? [String: Any])
        let response = try #require(credential["response"] as? [String: Any])
        func bytes(_ value: Any?) -> [UInt8]? { (value as? String).flatMap(Base64URL.decode).map { Array($0) } }
        guard let clientDataJSON = bytes(response["clientDataJSON"]),
            let clientData = try? ClientData(bytes: clientDataJSON), clientData.challenge == bytes(entry["challenge"])
        else { return false }
        if entry["kind"] as? String == "registration" {
            guard let attestationObject = bytes(response["attestationObject"]) else { return false }
            return (try? PasskeyCeremonies.register(
                clientData: clientData, attestationObject: attestationObject, credentialID: bytes(credential["rawId"]),
                relyingParty: party)) != nil
        }
        guard let authenticatorData = bytes(response["authenticatorData"]), let signature = bytes(response["signature"]),
            let key = bytes(entry["public_key"])
        else { return false }
        let stored = CredentialRecord(publicKey: key, signCount: UInt32(entry["sign_count"] as? Int ?? 0))
        return (try? PasskeyCeremonies.assert(
            clientData: clientData, clientDataJSON: clientDataJSON, authenticatorData: authenticatorData, signature: signature,
            credential: stored, relyingParty: party)) != nil
    }

    @Test func pyWebAuthnJudgesEveryCeremony() async throws {
        let cases = try await VendorJudge.cases("passkey_ceremony_judge.py", ["\(UInt32.random(in: 0...UInt32.max))"])
        #expect(cases.count == 720)
        var verifiedByBoth = 0
        for entry in cases {
            let name = entry["name"] as? String ?? "?"
            let theirs = entry["verified"] as? Bool ?? false
            let why = entry["error"] as? String ?? ""
            let ours = try Self.ours(entry)
            switch entry["expect"] as? String {
            case "agree":
                #expect(ours == theirs, "\(name): py_webauthn \(theirs) \(why)")
                if ours && theirs { verifiedByBoth += 1 }
            case "stricter":
                #expect(!ours, "\(name): taken although refused by design")
            case "unverified_attestation":
                #expect(ours && !theirs, "\(name): py_webauthn \(theirs) \(why)")
            default:
                Issue.record("\(name): no expectation")
            }
        }
        // Every good registration and assertion was good for both: the judge is not refusing everything.
        #expect(verifiedByBoth == 108)
    }
}
