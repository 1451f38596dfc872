public import Foundation

/// An app's settings with the times storage keeps for it.
public struct StoredApp: Sendable, Equatable {
    public var settings: AppSettings
    public var createdAt: Date
    public var updatedAt: Date

    public init(settings: AppSettings, createdAt: Date, updatedAt: Date) {
        self.settings = settings
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }
}
