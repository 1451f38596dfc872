import Crypto
import Foundation
import GatewayCore

/// What an email code's outbox row carries, sealed: the envelope, the
/// message, and its text (which the `log` sender shows). AES-256-GCM under
/// the plugin's outbox key, bound to the app and the message id, so the
/// code inside is no more readable at rest than its HMAC, and a row's
/// payload cannot be moved to another.
struct EmailOutboxPayload: Sendable, Equatable {
    let sender: String
    let recipient: String
    let text: String
    let message: [UInt8]

    struct Unreadable: Error {}

    init(_ message: EmailMessage) {
        self.sender = message.from.mailbox
        self.recipient = message.to.mailbox
        self.text = message.text
        self.message = message.bytes
    }

    private init(sender: String, recipient: String, text: String, message: [UInt8]) {
        self.sender = sender
        self.recipient = recipient
        self.text = text
        self.message = message
    }

    func sealed(with key: SymmetricKey, appID: AppID, id: UUID) throws -> [UInt8] {
        var plain: [UInt8] = [1]
        for part in [Array(sender.utf8), Array(recipient.utf8), Array(text.utf8), message] {
            withUnsafeBytes(of: UInt32(part.count).bigEndian) { plain += $0 }
            plain += part
        }
        let box = try AES.GCM.seal(plain, using: key, authenticating: Self.context(appID, id))
        guard let combined = box.combined else { throw Unreadable() }
        return Array(combined)
    }

    static func open(_ sealed: [UInt8], with key: SymmetricKey, appID: AppID, id: UUID) throws -> EmailOutboxPayload {
        let plain = Array(try AES.GCM.open(try AES.GCM.SealedBox(combined: sealed), using: key, authenticating: context(appID, id)))
        guard plain.first == 1 else { throw Unreadable() }
        var parts: [[UInt8]] = []
        var index = 1
        while parts.count < 4 {
            guard index + 4 <= plain.count else { throw Unreadable() }
            let length = plain[index..<index + 4].reduce(0) { $0 << 8 | Int($1) }
            index += 4
            guard length <= plain.count - index else { throw Unreadable() }
            parts.append(Array(plain[index..<index + length]))
            index += length
        }
        guard index == plain.count else { throw Unreadable() }
        return EmailOutboxPayload(
            sender: String(decoding: parts[0], as: UTF8.self), recipient: String(decoding: parts[1], as: UTF8.self),
            text: String(decoding: parts[2], as: UTF8.self), message: parts[3])
    }

    private static func context(_ appID: AppID, _ id: UUID) -> Data {
        Data("email-outbox|\(appID.uuid.lowercasedText)|\(id.uuidString.lowercased())".utf8)
    }
}
