public import Foundation

/// A Layer provider id, `layer:///providers/<uuid>` or the bare UUID; the token's `iss`.
public struct ProviderID: LayerIdentifier, Codable {
    public static let uriPrefixes = ["providers/"]
    public let uuid: UUID
    public init(uuid: UUID) { self.uuid = uuid }
}
