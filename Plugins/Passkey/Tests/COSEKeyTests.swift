import Foundation
import PasskeyPlugin
import Testing

/// COSE keys and signatures made by PyPI's `cryptography` and `cbor2`
/// (Tests/Vendors/cose_judge.py), as authenticators make them: each key
/// taken or refused as the case says, and each signature judged as it is.
@Suite struct COSEKeyTests {
    @Test func keysAndSignaturesFromCryptography() async throws {
        let cases = try await VendorJudge.cases("cose_judge.py")
        #expect(cases.count > 100)
        for entry in cases {
            let name = entry["name"] as? String ?? "?"
            let key = try? COSEKey(bytes: CBORReaderTests.bytes(entry["key"] as? String ?? ""))
            #expect((key != nil) == (entry["key_ok"] as? Bool), "\(name): key \(key == nil ? "refused" : "taken")")
            guard let key else { continue }
            let valid = key.isValidSignature(
                CBORReaderTests.bytes(entry["signature"] as? String ?? ""), for: CBORReaderTests.bytes(entry["message"] as? String ?? ""))
            #expect(valid == (entry["valid"] as? Bool), "\(name): signature \(valid ? "taken" : "refused")")
        }
    }
}
