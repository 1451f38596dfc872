import Foundation
import GatewayCore
import Testing

/// The gateway's one JSON reader and writer, judged by Foundation's coders:
/// what one writes the other reads back the same, and for the shapes the
/// admin API answers with, the bytes are Foundation's with sorted keys.
@Suite struct JSONCodingTests {
    struct Settings: Codable, Equatable {
        var name: String
        var count: Int
        var ratio: Double
        var enabled: Bool
        var tags: [String]
        var nested: [String: Int]
        var note: String?
        var link: URL?
        var blob: Data?
        var options: JSONValue?
        var children: [Settings]
    }

    static let sample = Settings(
        name: "a \"quoted\" / slashed\nline\u{1}é", count: -42, ratio: 0.1, enabled: true, tags: ["x", "", "y z"],
        nested: ["b": 2, "a": 1, "a_b": 3], note: nil, link: URL(string: "https://example.com/a?b=c"), blob: Data([0, 1, 254, 255]),
        options: .object(["k": .array([.null, .bool(false), .number(1.5), .string("s")])]),
        children: [Settings(name: "child", count: 9_007_199_254_740_992, ratio: 1e-7, enabled: false, tags: [], nested: [:],
            note: "here", link: nil, blob: nil, options: nil, children: [])])

    @Test func foundationReadsWhatItWritesAndItReadsFoundations() throws {
        let ours = try JSONCoding.bytes(of: Self.sample)
        #expect(try JSONDecoder().decode(Settings.self, from: Data(ours)) == Self.sample)
        #expect(try JSONCoding.decode(Settings.self, from: try JSONEncoder().encode(Self.sample)) == Self.sample)
        #expect(try JSONCoding.decode(Settings.self, from: JSONCoding.bytes(of: Self.sample, indented: true)) == Self.sample)
    }

    @Test func itsBytesAreFoundationsWithSortedKeysAndSlashesAsTheyAre() throws {
        struct Answer: Encodable {
            let id: String
            let items: [[String: String]]
            let next_cursor: String?
            let total: Int
            let url: URL
            let flags: [String: Bool]
        }
        let answer = Answer(
            id: "layer:///apps/0d6e", items: [["b": "2", "a": "\"1\"\t"], [:]], next_cursor: nil, total: 3,
            url: URL(string: "https://example.com/x")!, flags: ["zeta": true, "alpha": false, "alpha_beta": true])
        let foundation = JSONEncoder()
        foundation.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        #expect(String(decoding: try JSONCoding.bytes(of: answer), as: UTF8.self) == String(decoding: try foundation.encode(answer), as: UTF8.self))
    }

    @Test func anIntegerADoubleWouldRoundIsRefusedNotChanged() {
        #expect(throws: EncodingError.self) { try JSONCoding.bytes(of: ["n": Int64(9_007_199_254_740_993)]) }
        #expect(throws: EncodingError.self) { try JSONCoding.bytes(of: ["n": Double.nan]) }
    }

    @Test func readingIsStrict() {
        #expect(throws: (any Error).self) { try JSONCoding.value(#"{"a": 1, "a": 2}"#) }
        #expect(throws: (any Error).self) { try JSONCoding.value(#"{"a": 1} x"#) }
        #expect(throws: (any Error).self) { try JSONCoding.value(String(repeating: "[", count: 40) + String(repeating: "]", count: 40)) }
        #expect(throws: DecodingError.self) { try JSONCoding.decode([String: Int].self, from: #"{"a": 1.5}"#) }
        #expect(throws: DecodingError.self) { try JSONCoding.decode([String: UInt8].self, from: #"{"a": 256}"#) }
        #expect(throws: DecodingError.self) { try JSONCoding.decode(Settings.self, from: #"{"name": "x"}"#) }
        #expect(throws: DecodingError.self) { try JSONCoding.decode([String].self, from: #"["a", 1]"#) }
        #expect((try? JSONCoding.value("  [1, true, null]  ")) == .array([.number(1), .bool(true), .null]))
    }

    @Test func numbersAreWrittenInTheirShortestForm() throws {
        let value = JSONValue.array([.number(3), .number(-0.5), .number(1e21), .number(0.1), .number(-9_007_199_254_740_992)])
        #expect(String(decoding: JSONCoding.bytes(of: value), as: UTF8.self) == "[3,-0.5,1e+21,0.1,-9007199254740992]")
        #expect(try JSONCoding.value(JSONCoding.bytes(of: value)) == value)
    }
}
