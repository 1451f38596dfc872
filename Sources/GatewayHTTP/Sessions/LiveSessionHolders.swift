import GatewayCore
import GatewayPluginKit

/// ``SessionHolders`` read from the sessions' table: the refresh token's
/// verdict (``RefreshTokens/verdict(on:in:settings:)``), without spending it,
/// and, for a credential added on its word, the user's second factor.
struct LiveSessionHolders: SessionHolders {
    let sessions: RefreshTokens
    let secondFactors: any SecondFactorStore

    func holder(
        of refreshToken: String?, adding credentialType: String?, in app: AppSettings, passage: inout PublicRequest
    ) async throws -> SessionHolder {
        guard let settings = app.sessions else {
            throw GatewayError(.unsupportedCredentialType, .invalidRequest, "This app keeps no sessions.")
        }
        guard let refreshToken else { throw GatewayError.invalidRequest("refresh_token is required.") }
        let reading = try await sessions.verdict(on: refreshToken, in: app, settings: settings, walking: false)
        if let session = reading.session {
            passage.row.userID = session.userID
            passage.row.detail["session_id"] = session.sessionID.lowercasedText
        }
        switch reading.verdict {
        case .rotate, .retry:
            guard let session = reading.session else { throw GatewayError.internalError }
            try await passage.limits([:])
            let holder = SessionHolder(
                userID: session.userID, sessionID: session.sessionID, methods: session.methods, authTime: session.authTime)
            if let credentialType { try await requireLevel(of: holder, adding: credentialType, in: app, &passage) }
            return holder
        case .reuse:
            // Not ended here: the refresh route is where a stolen family ends; this one only refuses it.
            try await passage.refuseHolder(RefreshVerdict.Reason.reused)
        case .refuse(let reason):
            // Counted before the walk that tells an older token of the family (reuse) from a forged one.
            func walkedReason() -> String {
                switch sessions.walked(reading, settings: settings).verdict {
                case .reuse: RefreshVerdict.Reason.reused
                case .refuse(let walked): walked
                case .rotate, .retry: reason
                }
            }
            try await passage.refuseHolder(walkedReason())
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

    /// A credential added on a one-factor session's word, where the user
    /// has a confirmed factor or the app's `mfa` exempts its type: refused,
    /// so it cannot count as two factors the session never showed.
    private func requireLevel(
        of holder: SessionHolder, adding credentialType: String, in app: AppSettings, _ passage: inout PublicRequest
    ) async throws {
        guard let mfa = app.mfa, !holder.isMultiFactor else { return }
        var bound = mfa.exemptCredentialTypes.contains(credentialType)
        if !bound { bound = try await secondFactors.factor(of: holder.userID, in: app.appID)?.isConfirmed ?? false }
        guard bound else { return }
        passage.row.reason = Self.oneFactorSession
        throw GatewayError(
            .stepUpRequired, .forbidden,
            "This session signed in with one factor; sign in with the second factor, then add the \(credentialType) with that session.")
    }

    /// The row's reason when a one-factor session may not add a credential.
    static let oneFactorSession = "session_one_factor"
}
