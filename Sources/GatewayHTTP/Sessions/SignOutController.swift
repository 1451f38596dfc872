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
            "session.signed_out", credentialType: RefreshToken.credentialType, cost: .limitsFirst, request: request,
            context: context
        ) { passage in
            try await end(request, context, &passage)
            return AdminResponses.noContent()
        }
    }

    private func end(_ request: Request, _ context: GatewayRequestContext, _ passage: inout PublicRequest) async throws {
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
        try await passage.limits([:])
        var reading = try await sessions.verdict(on: presented, in: tenant.settings, settings: settings, walking: false)
        // An older token of the family (a sign-out with a spent token ends the session too) is told from a
        // forged one only by a walk: counted against the client's refresh_failures first, as a refusal.
        if reading.needsWalk {
            try await passage.beforeCostlyWork([RateLimitPolicy.refreshFailures.name: passage.clientIP])
            reading = sessions.walked(reading, settings: settings)
        }
        if let session = reading.session {
            passage.row.userID = session.userID
            passage.row.detail["session_id"] = session.sessionID.lowercasedText
        }
        switch reading.verdict {
        case .rotate, .retry, .reuse:
            guard let session = reading.session else { throw GatewayError.internalError }
            var row = passage.row
            row.outcome = .success
            try await passage.succeed(
                recording: row, changing: .revoke(appID: tenant.settings.appID, sessionID: session.sessionID, reason: "signed_out"))
        case .refuse(let reason):
            // Answered alike, so the route tells nobody which tokens are live; the row says why nothing ended.
            try await passage.holderRefused()
            passage.row.reason = reason
            try await passage.succeedWithoutWaiting()
        }
    }
}
