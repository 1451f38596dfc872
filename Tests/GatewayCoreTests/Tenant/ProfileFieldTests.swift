import GatewayCore
import GatewayPluginKit
import Testing

/// Profile fields are bounded as sent, then trimmed: the bound the API
/// contract states (`maxLength`) holds for what the client wrote, so a value
/// padded with whitespace past it is refused, not silently cut.
@Suite struct ProfileFieldsTests {
    @Test func aNamePaddedPastTheBoundIsRefusedAndAShortOneIsTrimmed() throws {
        let padded = "×" + String(repeating: "\n", count: 300)
        #expect(throws: GatewayError.self) { try ProfileFields.name(padded, field: "first_name") }
        #expect(try ProfileFields.name("  Ann \n", field: "first_name") == "Ann")
        #expect(try ProfileFields.name(String(repeating: "a", count: ProfileFields.maximumNameBytes), field: "first_name") != nil)
        #expect(try ProfileFields.name("   ", field: "first_name") == nil)
    }

    @Test func anAvatarURLPaddedPastTheBoundIsRefused() throws {
        let padded = "https://example.com/a.png" + String(repeating: " ", count: ProfileFields.maximumURLBytes)
        #expect(throws: GatewayError.self) { try ProfileFields.avatarURL(padded) }
        #expect(try ProfileFields.avatarURL(" https://example.com/a.png ") == "https://example.com/a.png")
    }
}
