public import GatewayCore

/// Who holds a live session: what a public route asks where only the user
/// themself may act (enrol a second factor, register a passkey). The
/// refresh token proves it and is not spent.
public protocol SessionHolders: Sendable {
    /// The user whose live session of `app` `refreshToken` belongs to, the
    /// app's limits checked. A missing, unknown, ended or spent token is a
    /// 401 `invalid_credentials` (the row's reason says which) counted
    /// against the client's `refresh_failures`; a 400 where the app keeps
    /// no sessions.
    func user(holding refreshToken: String?, in app: AppSettings, passage: inout PublicRequest) async throws -> String

    /// Why the session `refreshToken` belongs to no longer holds (its
    /// refusal's audit reason, `session_revoked` after the user's deletion
    /// ended it), or nil while it is live. Asked again once a route has
    /// added a credential on the session's word: a session ended meanwhile
    /// takes the credential back, so nothing outlives a deletion that ran
    /// while the route did.
    func endedReason(of refreshToken: String, in app: AppSettings) async throws -> String?
}
