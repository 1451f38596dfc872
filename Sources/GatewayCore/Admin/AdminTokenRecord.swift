public import Foundation

/// An admin token as stored: everything but the secret, which is kept only
/// as a digest.
public struct AdminTokenRecord: Sendable, Equatable {
    public var id: UUID
    public var name: String
    public var scope: AdminScope
    public var createdAt: Date
    public var expiresAt: Date?
    public var revokedAt: Date?
    public var lastUsedAt: Date?

    public init(
        id: UUID = UUID(), name: String, scope: AdminScope, createdAt: Date = Date(), expiresAt: Date? = nil,
        revokedAt: Date? = nil, lastUsedAt: Date? = nil
    ) {
        self.id = id
        self.name = name
        self.scope = scope
        self.createdAt = createdAt
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
        self.lastUsedAt = lastUsedAt
    }
}
