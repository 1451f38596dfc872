public import Foundation

/// An identifier Layer writes as a `layer:///` URI around a UUID
/// (`layer:///keys/<uuid>`, `layer:///providers/<uuid>`, ...). The bare UUID is
/// accepted for every kind and means the same thing; matching ignores case.
public protocol LayerIdentifier: Hashable, Sendable, CustomStringConvertible, LosslessStringConvertible {
    /// The URI path prefixes that may precede the UUID, e.g. `["keys/"]`;
    /// the first is the one written out.
    static var uriPrefixes: [String] { get }
    var uuid: UUID { get }
    init(uuid: UUID)
}

extension LayerIdentifier {
    /// Parses the URI or bare-UUID form; `nil` for anything else.
    public init?(_ text: String) {
        guard let uuid = Self.parseUUID(text) else { return nil }
        self.init(uuid: uuid)
    }

    /// The `layer:///...` form with a lowercase UUID.
    public var description: String { "layer:///" + Self.uriPrefixes[0] + uuid.lowercasedText }

    static func parseUUID(_ text: String) -> UUID? {
        // A UUID string is 36 characters; the longest prefix is short. Bound
        // the work before looking at hostile input.
        guard text.utf8.count <= 80 else { return nil }
        if text.utf8.count == 36 { return UUID(canonicalText: text) }
        // Bytes, with only ASCII letters folded: Unicode case mapping would
        // read "\u{212A}eys/" (Kelvin sign) as "keys/".
        let bytes = Array(text.utf8).map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }
        for prefix in uriPrefixes {
            let expected = Array(("layer:///" + prefix).utf8)
            if bytes.count == expected.count + 36, bytes.starts(with: expected) {
                return UUID(canonicalText: String(decoding: bytes.suffix(36), as: UTF8.self))
            }
        }
        return nil
    }
}

extension LayerIdentifier where Self: Codable {
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        guard let uuid = Self.parseUUID(text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "not a \(Self.self): expected layer:///\(Self.uriPrefixes[0])<uuid> or a UUID")
        }
        self.init(uuid: uuid)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
