import GatewayCore
import Testing

/// Profile fields are bounded as sent, then trimmed: the bound the API
/// contract states (`maxLength`) holds for what the client wrote, so a value
/// padded with whitespace past it is refused, not silently cut.
@Suite struct ProfileFieldTests {
    @Test func aNamePaddedPastTheBoundIsRefusedAndAShortOneIsTrimmed() throws {
        let padded = "×" + String(repeating: "\n", count: 300)
        #expect(throws: GatewayError.self) { try ProfileField.firstName.checked(padded) }
        #expect(try ProfileField.firstName.checked("  Ann \n") == "Ann")
        #expect(try ProfileField.firstName.checked(String(repeating: "a", count: ProfileField.firstName.maximumBytes)) != nil)
        #expect(try ProfileField.firstName.checked("   ") == nil)
    }

    @Test func anAvatarURLPaddedPastTheBoundIsRefused() throws {
        let padded = "https://example.com/a.png" + String(repeating: " ", count: ProfileField.avatarURL.maximumBytes)
        #expect(throws: GatewayError.self) { try ProfileField.avatarURL.checked(padded) }
        #expect(try ProfileField.avatarURL.checked(" https://example.com/a.png ") == "https://example.com/a.png")
        #expect(throws: GatewayError.self) { try ProfileField.avatarURL.checked("ftp://example.com/a.png") }
    }

    @Test(arguments: [
        ("ann@example.com", true), (" ann.lee+gw@mail.example.org ", true), ("ann", false), ("ann@example", false),
        ("@example.com", false), ("ann@@example.com", false), ("ann lee@example.com", false), ("ann@.com", false),
        ("ann@example.com.", false), ("<ann@example.com>", false), ("ann@exa\u{7}mple.com", false),
    ])
    func anEmailIsOneAddressWithADottedDomain(text: String, accepted: Bool) {
        #expect(((try? ProfileField.email.checked(text)) != nil) == accepted)
    }

    @Test func anEmailPastTheBoundIsRefused() throws {
        let long = String(repeating: "a", count: 250) + "@e.co"
        #expect(throws: GatewayError.invalidRequest("email must be an email address (name@domain) of at most 254 bytes.")) {
            try ProfileField.email.checked(long)
        }
    }

    @Test func aRefusalNamesThePathItWasGiven() {
        #expect(throws: GatewayError.invalidRequest("answer.avatar_url must be an absolute http(s) URL of at most 2048 bytes.")) {
            try ProfileField.avatarURL.checked("not a url", at: "answer.avatar_url")
        }
    }

    @Test func aProfileKeepsNoEmptyValueAndListsItsFieldsInOrder() {
        var profile = UserProfile([.displayName: "Ann A.", .firstName: "Ann", .lastName: ""])
        #expect(profile.fields.map(\.field) == [.firstName, .displayName])
        profile[.firstName] = ""
        #expect(profile[.firstName] == nil)
        #expect(profile == UserProfile([.displayName: "Ann A."]))
    }
}
