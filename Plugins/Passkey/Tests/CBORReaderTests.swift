import Foundation
import PasskeyPlugin
import Testing

/// The strict CBOR reader held to PyPI's `cbor2` (Tests/Vendors/cbor_judge.py):
/// every canonical item cbor2 writes is read to the value cbor2 reads back;
/// every form refused by design is refused; and a randomly mutated input is
/// either refused or read to cbor2's own reading of it.
@Suite struct CBORReaderTests {
    @Test func cbor2JudgesEveryReading() async throws {
        let cases = try await VendorJudge.cases("cbor_judge.py", ["\(UInt32.random(in: 0...UInt32.max))", "400"])
        #expect(cases.count > 800)
        var read = 0
        for entry in cases {
            let hex = try #require(entry["hex"] as? String)
            let bytes = Self.bytes(hex)
            let ours = try? CBORReader().read(bytes)
            let theirs = entry["cbor2"] as? [String: Any]
            switch entry["strict"] as? Bool {
            case true?:
                let value = try #require(ours, "\(hex): refused, cbor2 wrote it")
                #expect(Self.same(Self.describe(value), theirs), "\(hex)")
            case false?:
                #expect(ours == nil, "\(hex): read as \(String(describing: ours))")
            case nil:
                if let ours {
                    #expect(theirs != nil && Self.same(Self.describe(ours), theirs), "\(hex): ours \(ours), cbor2 refused or differs")
                }
            }
            if ours != nil { read += 1 }
        }
        #expect(read >= 400, "the canonical cases at least")
    }

    @Test func limitsAndPrefixes() throws {
        // Eight arrays deep is taken, nine is not; a map of 600 members is over 1 024 items.
        #expect(try CBORReader().read(Array(repeating: 0x81, count: 8) + [0x00]) != .null)
        #expect(throws: CBORError.tooDeep) { try CBORReader().read(Array(repeating: 0x81, count: 9) + [0x00]) }
        var wide: [UInt8] = [0xb9, 0x02, 0x58]
        for key in 0..<600 { wide += [0x19, UInt8(key >> 8), UInt8(key & 0xff), 0x00] }
        #expect(throws: CBORError.tooManyItems) { try CBORReader().read(wide) }
        // A COSE key followed by extensions: the prefix and its length.
        let (value, used) = try CBORReader().readPrefix([0xa1, 0x01, 0x02, 0xa0][...])
        #expect(used == 3 && value[int: 1] == .unsigned(2))
        #expect(throws: CBORError.trailingBytes) { try CBORReader().read([0xa1, 0x01, 0x02, 0xa0]) }
    }

    static func bytes(_ hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    /// The value as cbor_judge.py describes cbor2's.
    static func describe(_ value: CBORValue) -> [String: Any] {
        switch value {
        case .unsigned(let number): ["i": String(number)]
        case .negative(let number): ["i": "-" + String(UInt128(number) + 1)]
        case .bytes(let bytes): ["b": bytes.map { String(format: "%02x", $0) }.joined()]
        case .text(let text): ["t": Array(text.utf8).map { String(format: "%02x", $0) }.joined()]
        case .array(let items): ["a": items.map(describe)]
        case .map(let entries): ["m": entries.map { [describe($0.key), describe($0.value)] }]
        case .bool(let flag): ["bool": flag ? "true" : "false"]
        case .null: ["null": ""]
        }
    }

    static func same(_ ours: [String: Any], _ theirs: [String: Any]?) -> Bool {
        guard let theirs else { return false }
        return NSDictionary(dictionary: ours).isEqual(to: theirs)
    }
}
