import Foundation
import GatewayCore
import GatewayOutbound

/// One code's message as it travels: an RFC 5322 message with a plain-text
/// and an HTML part (`multipart/alternative`), both UTF-8 in base64, a
/// `Subject` in RFC 2047 words when it is not ASCII, a `Date`, and a
/// `Message-ID` made from the outbox row's id, so every delivery of it is
/// recognisably the same message. Header values come from checked options
/// and variables whose control characters are flattened (``HeaderText``):
/// nothing typed can add a header.
struct EmailMessage: Sendable, Equatable {
    let from: EmailAddress
    let fromName: String?
    let to: EmailAddress
    let subject: String
    let text: String
    let html: String
    let id: UUID
    let date: Date

    /// The template's message for `code`.
    init(
        _ template: EmailTemplates.Template, code: String, appName: String, minutes: Int, from: EmailAddress,
        fromName: String?, to: EmailAddress, id: UUID, date: Date
    ) {
        let variables = ["{code}": code, "{app_name}": HeaderText.flattened(appName), "{minutes}": String(minutes)]
        func fill(_ text: String, escaping: (String) -> String = { $0 }) -> String {
            variables.reduce(text) { $0.replacingOccurrences(of: $1.key, with: escaping($1.value)) }
        }
        self.from = from
        self.fromName = fromName
        self.to = to
        self.subject = HeaderText.flattened(fill(template.subject))
        self.text = fill(template.text)
        self.html =
            template.html.map { fill($0, escaping: HTMLText.escaped) }
            ?? "<!doctype html>\n<html><body><p>"
            + HTMLText.escaped(self.text).replacingOccurrences(of: "\n", with: "<br>\n") + "</p></body></html>\n"
        self.id = id
        self.date = date
    }

    /// `<uuid@sender's domain>`.
    var messageID: String {
        "<\(id.uuidString.lowercased())@\(from.mailbox.split(separator: "@").last ?? "localhost")>"
    }

    /// The message's bytes, CRLF line ends throughout.
    var bytes: [UInt8] {
        let boundary = "=_identity-gateway_" + id.uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        var lines: [String] = [
            "From: " + (fromName.map { "\(HeaderText.displayName($0)) <\(from.mailbox)>" } ?? "<\(from.mailbox)>"),
            "To: <\(to.mailbox)>",
            "Subject: " + HeaderText.unstructured(subject),
            "Date: " + Self.dateText(date),
            "Message-ID: " + messageID,
            "MIME-Version: 1.0",
            "Auto-Submitted: auto-generated",
            "Content-Type: multipart/alternative; boundary=\"\(boundary)\"",
            "",
        ]
        for (type, body) in [("text/plain", text), ("text/html", html)] {
            lines += [
                "--" + boundary, "Content-Type: \(type); charset=utf-8", "Content-Transfer-Encoding: base64", "",
            ]
            lines += Self.base64Lines(Array(body.utf8))
        }
        lines.append("--" + boundary + "--")
        return Array((lines.joined(separator: "\r\n") + "\r\n").utf8)
    }

    /// The envelope SMTP carries it in.
    var envelope: SMTPEnvelope {
        SMTPEnvelope(sender: from.mailbox, recipient: to.mailbox, message: bytes)
    }

    static func base64Lines(_ bytes: [UInt8]) -> [String] {
        let encoded = Data(bytes).base64EncodedString()
        var lines: [String] = []
        var start = encoded.startIndex
        while start < encoded.endIndex {
            let end = encoded.index(start, offsetBy: 76, limitedBy: encoded.endIndex) ?? encoded.endIndex
            lines.append(String(encoded[start..<end]))
            start = end
        }
        return lines
    }

    /// RFC 5322 §3.3 in UTC: `Wed, 02 Dec 2026 18:22:39 +0000`.
    static func dateText(_ date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.weekday, .day, .month, .year, .hour, .minute, .second], from: date)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int?) -> String { value.map { $0 < 10 ? "0\($0)" : "\($0)" } ?? "00" }
        return "\(days[(parts.weekday ?? 1) - 1]), \(two(parts.day)) \(months[(parts.month ?? 1) - 1]) \(parts.year ?? 1970) "
            + "\(two(parts.hour)):\(two(parts.minute)):\(two(parts.second)) +0000"
    }
}
