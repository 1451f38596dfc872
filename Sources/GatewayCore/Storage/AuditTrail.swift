public import Foundation

/// The audit trail as the admin API reads it: newest first, in pages
/// that stay stable while new rows arrive.
public protocol AuditTrail: Sendable {
    /// At most `limit` events matching `filter`, newest first, after `position` when given.
    func page(_ filter: AuditFilter, after position: StoredAuditEvent.Position?, limit: Int) async throws
        -> [StoredAuditEvent]
}

/// Which audit events to read; every field narrows.
public struct AuditFilter: Sendable {
    public var appID: AppID?
    public var from: Date?
    public var to: Date?
    public var event: String?
    public var outcome: String?
    public var userID: String?
    public var requestID: String?

    public init() {}
}
