import Foundation
import GatewayCore
import GatewayPluginKit
import Testing

/// A JSON body's profile fields in, an answer's profile fields out: every
/// field of the list, and nothing else.
@Suite struct ProfileInputTests {
    @Test func everyFieldIsReadCheckedAndNamedUnderItsPath() throws {
        let input = try JSONInput.parse(
            Array(#"{"first_name": " Ann ", "last_name": null, "display_name": "", "avatar_url": "https://e.com/a.png"}"#.utf8))
        #expect(try UserProfile.read(input) == UserProfile([.firstName: "Ann", .avatarURL: "https://e.com/a.png"]))
        let bad = try JSONInput.parse(Array(#"{"avatar_url": "mailto:ann@e.com"}"#.utf8), subject: "answer")
        #expect(throws: GatewayError.invalidRequest("answer.avatar_url must be an absolute http(s) URL of at most 2048 bytes.")) {
            try UserProfile.read(bad, at: "answer")
        }
        #expect(UserProfile.fieldNames == ["first_name", "last_name", "display_name", "avatar_url", "email"])
    }

    @Test func anAnswerCarriesThePresentFieldsBesideItsOwnMembers() throws {
        struct Members: Encodable, Sendable { let user_id: String }
        let answer = WithProfile(Members(user_id: "ann"), profile: UserProfile([.lastName: "Lee"]))
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        #expect(String(decoding: try encoder.encode(answer), as: UTF8.self) == #"{"last_name":"Lee","user_id":"ann"}"#)
    }
}
