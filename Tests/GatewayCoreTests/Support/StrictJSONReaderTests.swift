import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

/// The reader behind every admin body, the phone-code and validation bodies
/// and each line of a user import (token bodies use it through `TokenRequestFields.init(json:)`).
@Suite struct StrictJSONReaderTests {
    @Test func readsWhatJSONDecoderReads() throws {
        var generator = SystemRandomNumberGenerator()
        let alphabet: [Character] = ["a", "Z", "0", " ", "\"", "\\", "/", "\n", "\u{1f}", "é", "😀", "\u{2028}"]
        func randomText() -> String {
            String((0..<Int.random(in: 0...8, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
        }
        func randomValue(depth: Int) -> Any {
            switch Int.random(in: 0...(depth < 4 ? 7 : 5), using: &generator) {
            case 0: return randomText()
            case 1: return Int.random(in: -1_000_000...1_000_000, using: &generator)
            case 2: return Double.random(in: -1e6...1e6, using: &generator)
            case 3: return Bool.random(using: &generator)
            case 4: return NSNull()
            case 5: return [Double.random(in: -1e-9...1e-9, using: &generator) * 1e300]
            case 6: return (0..<Int.random(in: 0...4, using: &generator)).map { _ in randomValue(depth: depth + 1) }
            default:
                return Dictionary((0..<Int.random(in: 0...4, using: &generator)).map { index in
                    (randomText() + "\(index)", randomValue(depth: depth + 1))
                }, uniquingKeysWith: { first, _ in first })
            }
        }
        for _ in 0..<300 {
            let object = Dictionary((0..<Int.random(in: 0...6, using: &generator)).map { index in
                (randomText() + "\(index)", randomValue(depth: 1))
            }, uniquingKeysWith: { first, _ in first })
            let data = try JSONSerialization.data(withJSONObject: object)
            let expected = try JSONDecoder().decode([String: JSONValue].self, from: data)
            #expect(try StrictJSONReader.object(Array(data)) == expected, "\(String(decoding: data, as: UTF8.self))")
        }
    }

    @Test(arguments: MalformedJSON.samples)
    func refusesWhatIsNotAJSONObject(_ body: [UInt8]) {
        #expect(throws: StrictJSONReader.Failure.malformed) { try StrictJSONReader.object(body) }
    }

    @Test func refusesAMemberNamedTwiceAtAnyDepthAndNestingPast32Levels() {
        #expect(throws: StrictJSONReader.Failure.duplicateMember) { try StrictJSONReader.object(Array(#"{"a":1,"a":1}"#.utf8)) }
        #expect(throws: StrictJSONReader.Failure.duplicateMember) {
            try StrictJSONReader.object(Array(#"{"a":[{"b":1,"c":2,"b":3}]}"#.utf8))
        }
        let limit = StrictJSONReader.maximumDepth
        func nested(_ levels: Int) -> [UInt8] {
            Array((#"{"a":"# + String(repeating: "[", count: levels) + String(repeating: "]", count: levels) + "}").utf8)
        }
        #expect((try? StrictJSONReader.object(nested(limit))) != nil)
        #expect(throws: StrictJSONReader.Failure.tooDeep) { try StrictJSONReader.object(nested(limit + 1)) }
        #expect(throws: StrictJSONReader.Failure.tooDeep) { try StrictJSONReader.object(nested(100_000)) }
        #expect(throws: StrictJSONReader.Failure.malformed) { try StrictJSONReader.object(Array(#"{"a":1e400}"#.utf8)) }
    }
}
