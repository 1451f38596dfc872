public import Foundation

/// One entry of the audit trail. Never holds a secret: no password, code,
/// private key, admin token or identity token.
public struct AuditEvent: Sendable, Equatable {
    public enum Outcome: String, Sendable {
        case success
        case failure
    }

    /// `nil` when the request named no readable app.
    public var appID: AppID?
    /// What happened, e.g. `token.issued`, `token.denied`.
    public var event: String
    public var outcome: Outcome
    /// A stable code saying why, for failures (`invalid_credentials`, `unknown_user`, ...).
    public var reason: String?
    public var userID: String?
    public var credentialType: String?
    public var keyID: KeyID?
    public var requestID: String
    /// The client's address (see ``ClientAddress``).
    public var clientIP: String?
    /// The client's User-Agent, cut to ``maximumUserAgentBytes``.
    public var userAgent: String? {
        didSet { userAgent = userAgent.map(Self.truncated) }
    }
    /// The admin token behind an admin event.
    public var actor: UUID?
    /// Facts worth keeping that have no column, e.g. which settings changed.
    public var detail: [String: String]

    public init(
        appID: AppID?, event: String, outcome: Outcome, reason: String? = nil, userID: String? = nil,
        credentialType: String? = nil, keyID: KeyID? = nil, requestID: String, actor: UUID? = nil,
        detail: [String: String] = [:]
    ) {
        self.appID = appID
        self.event = event
        self.outcome = outcome
        self.reason = reason
        self.userID = userID
        self.credentialType = credentialType
        self.keyID = keyID
        self.requestID = requestID
        self.actor = actor
        self.detail = detail
    }
}

extension AuditEvent {
    public static let maximumUserAgentBytes = 256

    static func truncated(_ text: String) -> String {
        guard text.utf8.count > maximumUserAgentBytes else { return text }
        var cut = ""
        for character in text {
            guard cut.utf8.count + String(character).utf8.count <= maximumUserAgentBytes else { break }
            cut.append(character)
        }
        return cut
    }

    /// Stored as the app of events whose request named no readable app.
    public static let noApp = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
}
