public import Foundation
public import GatewayCore

/// Who holds a live session: what a public route asks where only the user
/// themself may act (enrol a second factor, register a passkey). The
/// refresh token proves it and is not spent.
public protocol SessionHolders: Sendable {
    /// The holder of `app`'s live session `refreshToken` belongs to, the
    /// app's limits checked. A missing, unknown, ended or spent token is a
    /// 401 `invalid_credentials` (the row's reason says which) counted
    /// against the client's `refresh_failures`; a 400 where the app keeps
    /// no sessions.
    ///
    /// With `adding`, the route adds a credential of that type on the
    /// session's word, and the credential is bound at the session's level:
    /// where the user has a confirmed second factor, or the app's `mfa`
    /// exempts that type, a session whose own sign-in was one factor is
    /// refused, 403 `step_up_required` (the row's reason
    /// `session_one_factor`), so a stolen one-factor session never mints a
    /// credential that skips the second factor.
    func holder(
        of refreshToken: String?, adding credentialType: String?, in app: AppSettings, passage: inout PublicRequest
    ) async throws -> SessionHolder

    /// Why the session `refreshToken` belongs to no longer holds (its
    /// refusal's audit reason, `user_deleted` after the user's deletion
    /// ended it), or nil while it is live. Asked again once a route has
    /// added a credential on the session's word: a session ended meanwhile
    /// takes the credential back, so nothing outlives a change that ran
    /// while the route did.
    func endedReason(of refreshToken: String, in app: AppSettings) async throws -> String?
}

/// The holder of a live session, as a route that acts on its word sees it.
public struct SessionHolder: Sendable, Equatable {
    public let userID: String
    public let sessionID: UUID
    /// How the session's sign-in proved the user (RFC 8176 values).
    public let methods: [String]
    /// When the session's sign-in was (a refresh keeps it).
    public let authTime: Date

    public init(userID: String, sessionID: UUID, methods: [String], authTime: Date) {
        self.userID = userID
        self.sessionID = sessionID
        self.methods = methods
        self.authTime = authTime
    }

    /// Whether the session's sign-in was at most `seconds` before `now`.
    public func signedInWithin(seconds: Int, of now: Date = Date()) -> Bool {
        now.timeIntervalSince(authTime) <= TimeInterval(seconds)
    }

    /// Whether the session's own sign-in was two factors (`mfa` among its methods).
    public var isMultiFactor: Bool { AuthenticationMethods.areMultipleFactors(methods) }
}

extension GatewayError.Code {
    /// 403: a session whose sign-in was one factor asked to add a credential
    /// that must be bound at two; sign in with the second factor first.
    public static let stepUpRequired = GatewayError.Code(rawValue: "step_up_required")
}
