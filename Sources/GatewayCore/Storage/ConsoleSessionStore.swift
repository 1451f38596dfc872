public import Foundation

/// The console's sign-ins. A session is found by the digest of the id in its
/// cookie and holds the admin token it acts with, sealed under the master
/// key, so every console page is an admin API call with that token.
public protocol ConsoleSessionStore: Sendable {
    /// Stores a new session, and forgets sessions that have ended.
    func open(_ session: ConsoleSessionRecord) async throws
    /// The sealed token of a live session, whose idle expiry moves to
    /// `now + idle` (never past its end); `nil` when there is none or it ended.
    func resume(digest: Data, idle: Duration) async throws -> Data?
    /// Ends the session (sign-out); nothing when there is none.
    func close(digest: Data) async throws
}

/// A console session as stored: never the id itself, only its digest.
public struct ConsoleSessionRecord: Sendable {
    /// SHA-256 of the session id in the cookie.
    public var digest: Data
    /// The admin token, sealed under the master key.
    public var sealedToken: Data
    /// When an idle session ends; each page moves it forward.
    public var expiresAt: Date
    /// When the session ends however busy it is.
    public var endsAt: Date

    public init(digest: Data, sealedToken: Data, expiresAt: Date, endsAt: Date) {
        self.digest = digest
        self.sealedToken = sealedToken
        self.expiresAt = expiresAt
        self.endsAt = endsAt
    }
}
