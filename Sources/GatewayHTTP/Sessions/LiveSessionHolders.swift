import GatewayCore
import GatewayPluginKit

/// ``SessionHolders`` read from the sessions' table: the refresh token's
/// verdict (``RefreshTokens/verdict(on:in:settings:)``), without spending it.
struct LiveSessionHolders: SessionHolders {
    let sessions: RefreshTokens

    func user(holding refreshToken: String?, in app: AppSettings, passage: inout PublicRequest) async throws -> String {
        guard let settings = app.sessions else {
            throw GatewayError(.unsupportedCredentialType, .invalidRequest, "This app keeps no sessions.")
        }
        guard let refreshToken else { throw GatewayError.invalidRequest("refresh_token is required.") }
        let reading = try await sessions.verdict(on: refreshToken, in: app, settings: settings)
        if let session = reading.session {
            passage.row.userID = session.userID
            passage.row.detail["session_id"] = session.sessionID.lowercasedText
        }
        switch reading.verdict {
        case .rotate, .retry:
            guard let session = reading.session else { throw GatewayError.internalError }
            try await passage.check([:], app: app)
            return session.userID
        case .reuse:
            // Not ended here: the refresh route is where a stolen family ends; this one only refuses it.
            try await Self.refuse(RefreshVerdict.Reason.reused, &passage, app: app)
        case .refuse(let reason):
            try await Self.refuse(reason, &passage, app: app)
        }
    }

    func endedReason(of refreshToken: String, in app: AppSettings) async throws -> String? {
        guard let settings = app.sessions else { return RefreshVerdict.Reason.unknown }
        switch try await sessions.verdict(on: refreshToken, in: app, settings: settings).verdict {
        case .rotate, .retry: return nil
        case .reuse: return RefreshVerdict.Reason.reused
        case .refuse(let reason): return reason
        }
    }

    /// A bad proof of who asks: counted against the client's `refresh_failures`, the row saying why.
    static func refuse(_ reason: String, _ passage: inout PublicRequest, app: AppSettings) async throws -> Never {
        try await passage.check([RateLimitPolicy.refreshFailures.name: passage.clientIP], app: app)
        passage.row.reason = reason
        throw GatewayError.invalidCredentials
    }
}
