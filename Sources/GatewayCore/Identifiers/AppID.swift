public import Foundation

/// A Layer app id: `layer:///apps/staging/<uuid>`, `layer:///apps/production/<uuid>`
/// or the bare UUID. All forms name the same app; the tenant's own environment,
/// not the path segment, decides what the app may do.
public struct AppID: LayerIdentifier, Codable {
    public static let uriPrefixes = ["apps/staging/", "apps/production/"]
    public let uuid: UUID
    public init(uuid: UUID) { self.uuid = uuid }

    /// The written form: the bare lowercase UUID, which every accepted form
    /// maps to and which needs no escaping in a URL path.
    public var description: String { uuid.lowercasedText }
}
