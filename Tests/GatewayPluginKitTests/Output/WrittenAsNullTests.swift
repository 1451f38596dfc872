import Foundation
import GatewayCore
import GatewayPluginKit
import Testing

/// A member openapi.yaml makes required is written as `null` when it has no
/// value, and as its value when it has one; the synthesized encoder would
/// leave a plain optional out.
@Suite struct WrittenAsNullTests {
    struct Answer: Encodable {
        @WrittenAsNull var when: String?
        let plain: String?
    }

    func json(_ value: some Encodable) throws -> String {
        try JSONCoding.text(of: value)
    }

    @Test func aMissingValueIsNullAndAPresentOneIsItself() throws {
        #expect(try json(Answer(when: nil, plain: nil)) == #"{"when":null}"#)
        #expect(try json(Answer(when: "2026-12-02T00:00:00Z", plain: "p")) == #"{"plain":"p","when":"2026-12-02T00:00:00Z"}"#)
        #expect(try json(AdminResponses.Page(items: [1, 2], next_cursor: nil)) == #"{"items":[1,2],"next_cursor":null}"#)
        #expect(try json(AdminResponses.Page(items: [Int](), next_cursor: "c")) == #"{"items":[],"next_cursor":"c"}"#)
    }
}
