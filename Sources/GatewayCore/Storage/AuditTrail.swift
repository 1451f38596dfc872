public import Foundation

/// The audit trail as the admin API reads it: newest first, in pages
/// that stay stable while new rows arrive.
public protocol AuditTrail: Sendable {
    /// At most `limit` events matching `filter`, newest first, after `position` when given.
    func page(_ filter: AuditFilter, after position: StoredAuditEvent.Position?, limit: Int) async throws
        -> [StoredAuditEvent]
    /// Token requests (`token.issued`, `token.denied`) in `[from, to)` counted
    /// per minute, outcome and reason; every app's when `appID` is `nil`.
    func tokenCountsPerMinute(appID: AppID?, from: Date, to: Date) async throws -> [AuditMinuteCount]
}

/// How many token requests of one outcome and reason a minute saw.
public struct AuditMinuteCount: Sendable, Equatable {
    /// The minute's start.
    public var minute: Date
    public var issued: Bool
    /// The denial's reason; `nil` for issued tokens.
    public var reason: String?
    public var count: Int

    public init(minute: Date, issued: Bool, reason: String?, count: Int) {
        self.minute = minute
        self.issued = issued
        self.reason = reason
        self.count = count
    }
}

/// Which audit events to read; every field narrows.
public struct AuditFilter: Sendable {
    public var appID: AppID?
    public var from: Date?
    public var to: Date?
    public var event: String?
    public var outcome: String?
    public var reason: String?
    public var userID: String?
    public var requestID: String?

    public init() {}
}
