public import Foundation

/// An audit event as stored, with its place in the trail.
public struct StoredAuditEvent: Sendable {
    /// Where a page ends: the event's time (microseconds since the epoch) and row id.
    public struct Position: Sendable, Equatable {
        public let micros: Int64
        public let id: Int64

        public init(micros: Int64, id: Int64) {
            self.micros = micros
            self.id = id
        }
    }

    public let position: Position
    public let occurredAt: Date
    public let appID: UUID
    public let event: String
    public let outcome: String
    public let reason: String?
    public let userID: String?
    public let credentialType: String?
    public let keyID: UUID?
    public let clientIP: String?
    public let userAgent: String?
    public let requestID: String
    public let actor: UUID?
    /// The event's `detail` object, as JSON text.
    public let detail: String

    public init(
        position: Position, occurredAt: Date, appID: UUID, event: String, outcome: String, reason: String?,
        userID: String?, credentialType: String?, keyID: UUID?, clientIP: String?, userAgent: String?,
        requestID: String, actor: UUID?, detail: String
    ) {
        self.position = position
        self.occurredAt = occurredAt
        self.appID = appID
        self.event = event
        self.outcome = outcome
        self.reason = reason
        self.userID = userID
        self.credentialType = credentialType
        self.keyID = keyID
        self.clientIP = clientIP
        self.userAgent = userAgent
        self.requestID = requestID
        self.actor = actor
        self.detail = detail
    }
}
