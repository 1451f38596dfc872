public import Foundation

/// A Layer key id, `layer:///keys/<uuid>` or the bare UUID; the token's `kid`.
public struct KeyID: LayerIdentifier, Codable {
    public static let uriPrefixes = ["keys/"]
    public let uuid: UUID
    public init(uuid: UUID) { self.uuid = uuid }
}
