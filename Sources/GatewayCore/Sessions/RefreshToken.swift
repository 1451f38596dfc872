public import Crypto
public import Foundation

/// A session's refresh token: `rt1.` and the base64url of the session id
/// (16 bytes), the token's generation in its family (4 bytes, big-endian)
/// and a 256-bit secret. Shown to the client once; the gateway keeps only
/// the secret's SHA-256 (``digest``).
///
/// A session's first secret is random. Each refresh spends the token for
/// its ``successor(under:in:)``, whose secret is an HMAC of the spent one
/// under a key only the gateway holds: the gateway stores no successor yet
/// can answer a retried refresh with the same one, and can tell a spent
/// token of the family from a made-up one by deriving forward from it.
public struct RefreshToken: Sendable, Equatable {
    /// The `credentials.type` of a refresh.
    public static let credentialType = "refresh_token"
    static let prefix = "rt1."
    static let secretBytes = 32
    /// The text's length: the prefix and the base64url of 52 bytes.
    public static let textBytes = 4 + 70

    public let sessionID: UUID
    public let generation: UInt32
    public let secret: [UInt8]

    public init(sessionID: UUID, generation: UInt32, secret: [UInt8]) {
        precondition(secret.count == Self.secretBytes, "a refresh token's secret is 32 bytes")
        self.sessionID = sessionID
        self.generation = generation
        self.secret = secret
    }

    /// A new session's first token: a random secret.
    public static func first(of sessionID: UUID) -> RefreshToken {
        RefreshToken(sessionID: sessionID, generation: 0, secret: SymmetricKey(size: .bits256).withUnsafeBytes { Array($0) })
    }

    /// Reads a token as a client sends it; `nil` for anything else.
    public init?(text: String) {
        guard text.utf8.count == Self.textBytes, text.hasPrefix(Self.prefix),
            let bytes = Base64URL.decode(text.dropFirst(Self.prefix.count)), bytes.count == 52
        else { return nil }
        let raw = Array(bytes)
        let uuid = raw[0..<16].withUnsafeBytes { $0.loadUnaligned(as: uuid_t.self) }
        // Only the canonical encoding: one token has one text.
        let generation = raw[16..<20].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        self.init(sessionID: UUID(uuid: uuid), generation: generation, secret: Array(raw[20...]))
        guard self.text == text else { return nil }
    }

    /// The text the client holds.
    public var text: String {
        var raw = withUnsafeBytes(of: sessionID.uuid) { Array($0) }
        raw += [UInt8(generation >> 24), UInt8(generation >> 16 & 0xFF), UInt8(generation >> 8 & 0xFF), UInt8(generation & 0xFF)]
        raw += secret
        return Self.prefix + Base64URL.encode(raw)
    }

    /// What the gateway stores of it: the SHA-256 of its secret.
    public var digest: [UInt8] { Array(SHA256.hash(data: secret)) }

    /// The token this one is spent for: the next generation, its secret an
    /// HMAC-SHA256 under `key` of the app, the session, the generation and this secret.
    public func successor(under key: SymmetricKey, in appID: AppID) -> RefreshToken {
        let next = generation &+ 1
        var message = Array("refresh-token-successor".utf8)
        message += withUnsafeBytes(of: appID.uuid.uuid) { Array($0) }
        message += withUnsafeBytes(of: sessionID.uuid) { Array($0) }
        message += [UInt8(next >> 24), UInt8(next >> 16 & 0xFF), UInt8(next >> 8 & 0xFF), UInt8(next & 0xFF)]
        message += secret
        let mac = HMAC<SHA256>.authenticationCode(for: message, using: key)
        return RefreshToken(sessionID: sessionID, generation: next, secret: Array(mac))
    }
}

extension RefreshToken: CustomStringConvertible, CustomDebugStringConvertible {
    /// Never the token: logs, spans and errors that print one print this.
    public var description: String { "refresh token of session \(sessionID.lowercasedText), generation \(generation)" }
    public var debugDescription: String { description }
}
