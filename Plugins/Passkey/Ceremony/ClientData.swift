import GatewayCore

/// The client data a browser or platform collected for a ceremony and the
/// authenticator signed the hash of (WebAuthn Level 3, §5.8.1): its `type`,
/// the challenge, the origin, and whether it ran in a cross-origin frame.
/// Read with the strict JSON reader (a member named twice is refused), as
/// the hash covers these exact bytes.
public struct ClientData: Sendable, Equatable {
    public enum Ceremony: String, Sendable {
        case registration = "webauthn.create"
        case assertion = "webauthn.get"
    }

    /// At most this many bytes: Android adds its package name, nothing more is expected.
    public static let maximumBytes = 2048

    public let type: String
    public let challenge: [UInt8]
    public let origin: String
    public let crossOrigin: Bool
    public let topOrigin: String?

    public init(bytes: [UInt8]) throws(PasskeyRefusal) {
        guard bytes.count <= Self.maximumBytes else { throw .malformed }
        let members: [String: JSONValue]
        do {
            members = try StrictJSONReader.object(bytes)
        } catch {
            throw .malformed
        }
        guard case .string(let type)? = members["type"], case .string(let challengeText)? = members["challenge"],
            case .string(let origin)? = members["origin"],
            let challenge = Base64URL.decode(challengeText)
        else { throw .malformed }
        switch members["crossOrigin"] {
        case nil, .null?: crossOrigin = false
        case .bool(let value)?: crossOrigin = value
        default: throw .malformed
        }
        switch members["topOrigin"] {
        case nil: topOrigin = nil
        case .string(let value)?: topOrigin = value
        default: throw .malformed
        }
        self.type = type
        self.challenge = Array(challenge)
        self.origin = origin
    }

    /// Checks the type, and that the ceremony ran at one of `origins`, not
    /// framed by another site; the challenge is the caller's to spend.
    public func check(_ ceremony: Ceremony, origins: Set<String>) throws(PasskeyRefusal) {
        guard type == ceremony.rawValue else { throw .type }
        guard origins.contains(origin), !crossOrigin, topOrigin == nil else { throw .origin }
    }
}
