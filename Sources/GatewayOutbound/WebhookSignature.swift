import Crypto
public import Foundation

/// How the gateway signs what it posts to a tenant's service (an SMS
/// webhook, a credential webhook), so the tenant can refuse forgeries and
/// replays: `X-Gateway-Timestamp` is the Unix time in seconds, and
/// `X-Gateway-Signature` is `v1=` and the hex HMAC-SHA256, under the app's
/// secret, of the timestamp, a dot and the body's exact bytes
/// (docs/plugins.md, "Verifying the gateway's signature").
public enum WebhookSignature {
    public static let timestampHeader = "X-Gateway-Timestamp"
    public static let signatureHeader = "X-Gateway-Signature"

    /// The headers of a signed JSON post of `body`.
    public static func headers(for body: [UInt8], secret: String, now: Date) -> [(name: String, value: String)] {
        let timestamp = String(Int(now.timeIntervalSince1970))
        return [
            ("Content-Type", "application/json"), (timestampHeader, timestamp),
            (signatureHeader, "v1=" + signature(secret: secret, timestamp: timestamp, body: body)),
        ]
    }

    /// The hex HMAC-SHA256 of `timestamp.body` under `secret`.
    public static func signature(secret: String, timestamp: String, body: [UInt8]) -> String {
        var message = Array(timestamp.utf8)
        message.append(UInt8(ascii: "."))
        message += body
        let mac = HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Data(secret.utf8)))
        var hex: [UInt8] = []
        hex.reserveCapacity(2 * SHA256.byteCount)
        for byte in mac {
            hex.append(hexDigits[Int(byte >> 4)])
            hex.append(hexDigits[Int(byte & 0x0F)])
        }
        return String(decoding: hex, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
