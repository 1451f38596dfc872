import Foundation
import Testing

@testable import EmailCodePlugin

/// The message's bytes: nothing typed adds a header, and the parts are what the template says.
@Suite struct EmailMessageTests {
    static let hostile = "Evil\r\nBcc: mallory@example.net\r\n\r\nbody\u{0}\u{2028}"

    static func message(appName: String = "Test app", fromName: String? = "Gateway", subject: String = "Code {code} for {app_name}")
        throws -> EmailMessage
    {
        EmailMessage(
            EmailTemplates.Template(subject: subject, text: "Use {code} within {minutes} minutes for {app_name}.", html: nil),
            code: "123456", appName: appName, minutes: 10, from: try #require(EmailAddress("codes@gateway.example")),
            fromName: fromName, to: try #require(EmailAddress("ada@example.com")), id: UUID(), date: Date(timeIntervalSince1970: 0))
    }

    /// The header block ends at the first empty line; no line in it starts a header the gateway did not write.
    static func headerNames(_ message: EmailMessage) -> [String] {
        let text = String(decoding: message.bytes, as: UTF8.self)
        let head = text.components(separatedBy: "\r\n\r\n")[0]
        return head.components(separatedBy: "\r\n").filter { !$0.hasPrefix(" ") }.map { String($0.prefix { $0 != ":" }) }
    }

    @Test func anAppNameWithLineBreaksAddsNoHeader() throws {
        let message = try Self.message(appName: Self.hostile)
        #expect(Self.headerNames(message) == ["From", "To", "Subject", "Date", "Message-ID", "MIME-Version", "Auto-Submitted", "Content-Type"])
        #expect(!message.subject.contains("\r") && !message.subject.contains("\n"))
    }

    @Test func everyLineEndsInCRLFAndNoneIsLongerThan998Bytes() throws {
        let bytes = try Self.message(appName: String(repeating: "ü", count: 300)).bytes
        let lines = String(decoding: bytes, as: UTF8.self).components(separatedBy: "\r\n")
        #expect(!bytes.enumerated().contains { $0.element == 10 && ($0.offset == 0 || bytes[$0.offset - 1] != 13) })
        #expect(lines.allSatisfy { $0.utf8.count <= 998 })
        #expect(bytes.allSatisfy { $0 < 0x80 }, "8-bit bytes in a message that declares none")
    }

    @Test func aSubjectThatIsNotASCIITravelsAsEncodedWords() throws {
        let words = HeaderText.encodedWords(String(repeating: "Grüße ", count: 20))
        #expect(words.count > 1)
        #expect(words.allSatisfy { $0.hasPrefix("=?UTF-8?B?") && $0.hasSuffix("?=") && $0.count <= 75 })
        let decoded = words.map { word -> String in
            let base64 = word.dropFirst(10).dropLast(2)
            return String(decoding: Data(base64Encoded: String(base64)) ?? Data(), as: UTF8.self)
        }.joined()
        #expect(decoded == String(repeating: "Grüße ", count: 20))
    }

    @Test func theDateIsRFC5322InUTC() {
        #expect(EmailMessage.dateText(Date(timeIntervalSince1970: 0)) == "Thu, 01 Jan 1970 00:00:00 +0000")
        #expect(EmailMessage.dateText(Date(timeIntervalSince1970: 1_796_242_839)) == "Wed, 02 Dec 2026 20:20:39 +0000")
    }
}
