import GatewayCore
import GatewayPluginKit
import Hummingbird

/// `POST /v1/sessions/revoke` `{app_id, refresh_token}` → 204: the user's
/// own sign-out. Any token of the session's family ends it (the live one, or
/// one spent before it). The answer is the same 204 whether or not a session
/// ended, as OAuth's token revocation answers (RFC 7009, section 2.2), so the
/// route tells nobody which tokens are live; the row says what happened
/// (`session.signed_out`, or its failure with the reason a refresh would have
/// had). A token that ends nothing counts against the client's
/// `refresh_failures`, as a refused refresh does.
struct SignOutController: Sendable {
    static let path = "/v1/sessions/revoke"
    static let maximumBodyBytes = 4 * 1024

    let gate: PublicRequestGate
    let sessions: RefreshTokens

    func addRoutes(to router: Router<GatewayRequestContext>) {
        router.post(RouterPath(stringLiteral: Self.path)) { request, context in try await signOut(request, context) }
    }

    private func signOut(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        try await gate.answer(
            "session.signed_out", credentialType: RefreshToken.credentialType, request: request, context: context
        ) { passage in
            try await end(request, context, &passage)
            return AdminResponses.noContent()
        }
    }

    private func end(
        _ request: Request, _ context: GatewayRequestContext, _ passage: inout PublicRequest
    ) async throws(GatewayError) {
        let (tenant, settings, presented) = try await passage.beforeTheAppsLimits { passage in
            let input = try await JSONInput.read(request, maximumBytes: Self.maximumBodyBytes)
            try input.rejectUnknown(allowed: ["app_id", "refresh_token"])
            let appID = try TokenRequest.validatedAppID(try input.string("app_id"))
            passage.row.appID = appID
            context.logFacts.appID = appID
            let presented = try input.string("refresh_token")
            let tenant = try await passage.app(appID)
            guard let settings = tenant.settings.sessions else {
                throw GatewayError(.unsupportedCredentialType, .invalidRequest, "This app keeps no sessions.")
            }
            return (tenant, settings, presented)
        }
        var reading: RefreshReading
        do {
            reading = try await sessions.verdict(on: presented, in: tenant.settings, settings: settings, walking: false)
        } catch {
            throw ErrorResponder.translate(error, logger: context.logger)
        }
        // An older token of the family (a sign-out with a spent token ends the session too) is told from a
        // forged one only by a walk: counted against the client's refresh_failures first, as a refusal.
        var counted = false
        if reading.needsWalk {
            try await passage.check([RateLimitPolicy.refreshFailures.name: passage.clientIP], app: tenant.settings)
            counted = true
            reading = sessions.walked(reading, settings: settings)
        }
        let ended: Bool
        switch reading.verdict {
        case .rotate, .retry, .reuse: ended = true
        case .refuse(let reason):
            ended = false
            passage.row.reason = reason
        }
        if let session = reading.session {
            passage.row.userID = session.userID
            passage.row.detail["session_id"] = session.sessionID.lowercasedText
        }
        guard ended, let session = reading.session else {
            if !counted { try await passage.check([RateLimitPolicy.refreshFailures.name: passage.clientIP], app: tenant.settings) }
            await passage.recordEventually()
            return
        }
        // The client's `ip` count, which a refusal above takes with its failure.
        if !counted { try await passage.check([:], app: tenant.settings) }
        var row = passage.row
        row.outcome = .success
        try await passage.record(
            row, changing: .revoke(appID: tenant.settings.appID, sessionID: session.sessionID, reason: "signed_out"))
    }
}
