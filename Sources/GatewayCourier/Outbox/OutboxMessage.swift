public import Foundation
public import GatewayCore

/// A message to queue with what it carries (``CodeStore/storeUnlessTooSoon(code:for:in:attempts:lifetimeSeconds:resendAfterSeconds:queueing:)``):
/// its id, made once, so that a retried delivery is the same message
/// (an email's `Message-ID`), its channel, and its payload as the channel
/// sealed it.
public struct OutboxMessage: Sendable {
    public let id: UUID
    public let channel: String
    public let payload: [UInt8]
    /// The request that queued it, so its delivery's rows can be found beside the request's.
    public let requestID: String
    /// The user it is for, when known: their deletion or disabling cancels it (``OutboxStore/cancel(for:in:reason:)``).
    public let userID: String?

    public init(id: UUID = UUID(), channel: String, payload: [UInt8], requestID: String, userID: String? = nil) {
        self.id = id
        self.channel = channel
        self.payload = payload
        self.requestID = requestID
        self.userID = userID
    }
}

/// A message a worker holds the lease of, to deliver now.
public struct ClaimedMessage: Sendable {
    public let appID: AppID
    public let id: UUID
    public let payload: [UInt8]
    public let requestID: String
    /// This delivery's number, from 1; it fences the finish of a lease that ran out.
    public let attempt: Int
    /// Whether what it carries has expired (a code's lifetime): it is given up, not delivered.
    public let hasExpired: Bool

    public init(appID: AppID, id: UUID, payload: [UInt8], requestID: String, attempt: Int, hasExpired: Bool) {
        self.appID = appID
        self.id = id
        self.payload = payload
        self.requestID = requestID
        self.attempt = attempt
        self.hasExpired = hasExpired
    }
}

/// How one delivery attempt ended, as the channel's sender tells it.
public enum DeliveryResult: Sendable, Equatable {
    /// The receiving server took the message (its reply, for the trail).
    case delivered(reply: String)
    /// It may take it later (a 4xx reply, no connection, a timeout): tried again after a pause.
    case transient(reply: String)
    /// It never will (a 5xx reply, a refused address, settings that cannot deliver): given up now.
    case permanent(reply: String)

    public var reply: String {
        switch self {
        case .delivered(let reply), .transient(let reply), .permanent(let reply): reply
        }
    }
}

extension DeliveryResult {
    /// A delivery whose app's settings could not be read (`error`, from the
    /// tenant lookup or its plugin's options): tried again while the
    /// database is away, given up for an app that is gone or settings that
    /// no longer deliver.
    public static func unreadableSettings(_ error: GatewayError, of what: String) -> DeliveryResult {
        switch error.code {
        case .unknownApp: .permanent(reply: "the app is gone")
        case .unavailable: .transient(reply: "the app's settings could not be read")
        default: .permanent(reply: "the app's \(what) settings are not valid: \(error.message)")
        }
    }
}

/// How a worker finishes a claimed message.
public enum OutboxFinish: Sendable, Equatable {
    case delivered(reply: String)
    case retry(after: Duration, reply: String)
    case failed(reply: String)

    /// `delivered`, `retrying` or `failed`: the metric's outcome.
    public var name: String {
        switch self {
        case .delivered: "delivered"
        case .retry: "retrying"
        case .failed: "failed"
        }
    }
}

extension OutboxFinish {
    /// The audit row of an attempt's end, for any channel: `events` names
    /// it by how the attempt ended; it carries the message id, the attempt
    /// and the reply (200 characters at most) beside `detail`, and `reason`
    /// when the attempt failed.
    public func row(
        of message: ClaimedMessage, events: (delivered: String, retrying: String, failed: String), reason: String,
        credentialType: String, userID: String? = nil, detail: [String: String] = [:]
    ) -> AuditEvent {
        let (event, reply): (String, String)
        switch self {
        case .delivered(let text): (event, reply) = (events.delivered, text)
        case .retry(_, let text): (event, reply) = (events.retrying, text)
        case .failed(let text): (event, reply) = (events.failed, text)
        }
        let failed = event != events.delivered
        var detail = detail
        detail["message_id"] = message.id.uuidString.lowercased()
        detail["attempt"] = String(message.attempt)
        detail["reply"] = String(reply.prefix(200))
        return AuditEvent(
            appID: message.appID, event: event, outcome: failed ? .failure : .success, reason: failed ? reason : nil,
            userID: userID, credentialType: credentialType, requestID: message.requestID, detail: detail)
    }
}
