import Foundation
import GatewayCore
import GatewayPluginKit
import Hummingbird

/// A user's own second factor, proven by their live session's refresh
/// token (which is not spent) or, for enrolment only, by a sign-in's
/// `mfa_ticket`:
///
/// - `POST /v1/mfa/totp` `{app_id, refresh_token | mfa_ticket}` → 201: a new
///   TOTP factor, not confirmed, its secret, `otpauth://` URI and ten
///   recovery codes shown this once. 409 when the user has a confirmed
///   factor (an operator or app admin resets it).
/// - `POST /v1/mfa/totp/confirm` `{app_id, refresh_token, code}` → 204: the
///   factor's first code; from then on sign-ins ask for it. (A sign-in's
///   second step with a ticket confirms it too.)
/// - `POST /v1/mfa/recovery_codes` `{app_id, refresh_token, code}` → 200:
///   ten new recovery codes for a code of the confirmed factor; the old
///   ones stop working.
///
/// A bad token or ticket counts against the client's `refresh_failures`,
/// a wrong code against the user's `mfa_failures` (reserved before the
/// check). Each change commits with its row (`mfa.enrolled`,
/// `mfa.confirmed`, `mfa.recovery_codes_replaced`); a refusal has its row
/// with the reason.
struct SecondFactorController: Sendable {
    static let enrolPath = "/v1/mfa/totp"
    static let confirmPath = "/v1/mfa/totp/confirm"
    static let recoveryCodesPath = "/v1/mfa/recovery_codes"
    static let maximumBodyBytes = 4 * 1024

    let gate: PublicRequestGate
    let sessions: RefreshTokens
    let secondFactors: SecondFactors

    func addRoutes(to router: Router<GatewayRequestContext>) {
        router.post(RouterPath(stringLiteral: Self.enrolPath)) { request, context in
            try await answer("mfa.enrolled", request, context) { try await enrol($0, $1, &$2) }
        }
        router.post(RouterPath(stringLiteral: Self.confirmPath)) { request, context in
            try await answer("mfa.confirmed", request, context) { try await confirm($0, $1, &$2) }
        }
        router.post(RouterPath(stringLiteral: Self.recoveryCodesPath)) { request, context in
            try await answer("mfa.recovery_codes_replaced", request, context) { try await replaceCodes($0, $1, &$2) }
        }
    }

    /// Runs `body` as one public request: its refusal leaves its row, and
    /// the limits' headers go with a 429.
    private func answer(
        _ event: String, _ request: Request, _ context: GatewayRequestContext,
        _ body: (Request, GatewayRequestContext, inout PublicRequest) async throws -> Response
    ) async throws -> Response {
        var passage = gate.open(event, credentialType: SecondFactors.totpType, request: request, context: context)
        do {
            var response = try await body(request, context, &passage)
            response.headers.set(passage.limits.headers)
            response.headers[.cacheControl] = "no-store"
            return response
        } catch {
            let answer = ErrorResponder.translate(error, logger: context.logger)
            await passage.deny(answer)
            if passage.limits.refusal != nil { throw HeaderedError(answer, headers: passage.limits.headers) }
            throw answer
        }
    }

    /// Who asks, and their app: the holder of a live session's refresh token
    /// or (where `ticketAllowed`) of an unspent sign-in ticket.
    private struct Holder {
        let app: AppSettings
        let userID: String
        let input: JSONInput
    }

    private func holder(
        _ request: Request, _ context: GatewayRequestContext, _ passage: inout PublicRequest, fields: Set<String>,
        ticketAllowed: Bool
    ) async throws -> Holder {
        let (app, input) = try await passage.beforeTheAppsLimits { passage in
            let input = try await JSONInput.read(request, maximumBytes: Self.maximumBodyBytes)
            try input.rejectUnknown(allowed: fields.union(["app_id", "refresh_token"]).union(ticketAllowed ? ["mfa_ticket"] : []))
            let appID = try TokenRequest.validatedAppID(try input.string("app_id"))
            passage.row.appID = appID
            context.logFacts.appID = appID
            let tenant = try await passage.app(appID)
            guard tenant.settings.mfa != nil else {
                throw GatewayError(.unsupportedCredentialType, .invalidRequest, "This app asks for no second factor.")
            }
            return (tenant.settings, input)
        }
        let clientFailures = [RateLimitPolicy.refreshFailures.name: passage.clientIP]
        func refuse(_ reason: String, _ passage: inout PublicRequest) async throws -> Never {
            try await passage.check(clientFailures, app: app)
            passage.row.reason = reason
            throw GatewayError.invalidCredentials
        }
        let presentedTicket = ticketAllowed ? try input.string("mfa_ticket") : nil
        let presentedToken = try input.string("refresh_token")
        guard (presentedTicket == nil) != (presentedToken == nil) else {
            throw GatewayError.invalidRequest(
                ticketAllowed ? "Send either refresh_token or mfa_ticket." : "refresh_token is required.")
        }
        if let presentedTicket {
            let reading = try await secondFactors.read(ticket: presentedTicket, in: app.appID)
            if let found = reading.ticket { passage.row.userID = found.grant.userID }
            guard let found = reading.ticket, reading.refusal == nil else {
                try await refuse(reading.refusal ?? SecondFactorRefusal.ticketUnknown, &passage)
            }
            try await passage.check([:], app: app)
            return Holder(app: app, userID: found.grant.userID, input: input)
        }
        guard let settings = app.sessions else {
            throw GatewayError(.unsupportedCredentialType, .invalidRequest, "This app keeps no sessions.")
        }
        let reading = try await sessions.verdict(on: presentedToken, in: app, settings: settings)
        if let session = reading.session {
            passage.row.userID = session.userID
            passage.row.detail["session_id"] = session.sessionID.lowercasedText
        }
        switch reading.verdict {
        case .rotate, .retry:
            guard let session = reading.session else { throw GatewayError.internalError }
            try await passage.check([:], app: app)
            return Holder(app: app, userID: session.userID, input: input)
        case .reuse:
            // Not ended here: the refresh route is where a stolen family ends; this one only refuses it.
            try await refuse(RefreshVerdict.Reason.reused, &passage)
        case .refuse(let reason):
            try await refuse(reason, &passage)
        }
    }

    private func enrol(_ request: Request, _ context: GatewayRequestContext, _ passage: inout PublicRequest) async throws
        -> Response
    {
        let holder = try await holder(request, context, &passage, fields: [], ticketAllowed: true)
        var row = passage.row
        row.outcome = .success
        row.userID = holder.userID
        guard let new = try await secondFactors.enrol(holder.userID, in: holder.app, recording: row) else {
            throw GatewayError(
                .conflict, .conflict,
                "This user has a confirmed second factor; it is replaced only after an admin resets it.")
        }
        return try AdminResponses.json(new, status: .created)
    }

    /// The user's factor and the step of `code` on it, with `mfa_failures`
    /// reserved; a wrong code keeps the reservation and is refused.
    private func checkedCode(
        _ holder: Holder, confirmed: Bool, _ passage: inout PublicRequest
    ) async throws -> (StoredSecondFactor, Int64) {
        let code = try holder.input.requiredString("code")
        try await passage.check([RateLimitPolicy.mfaFailures.name: holder.userID], app: holder.app)
        guard let factor = try await secondFactors.store.factor(of: holder.userID, in: holder.app.appID),
            factor.isConfirmed == confirmed
        else {
            passage.row.reason = SecondFactorRefusal.noFactor
            throw confirmed
                ? GatewayError(.notFound, .notFound, "This user has no confirmed second factor.")
                : GatewayError(.conflict, .conflict, "This user has no second factor waiting to be confirmed.")
        }
        switch try secondFactors.check(code, for: factor, at: Date()) {
        case .success(let step): return (factor, step)
        case .failure(let refusal):
            passage.row.reason = refusal.reason
            throw GatewayError.invalidCredentials
        }
    }

    private func confirm(_ request: Request, _ context: GatewayRequestContext, _ passage: inout PublicRequest) async throws
        -> Response
    {
        let holder = try await holder(request, context, &passage, fields: ["code"], ticketAllowed: false)
        let (factor, step) = try await checkedCode(holder, confirmed: false, &passage)
        var row = passage.row
        row.outcome = .success
        guard try await secondFactors.store.confirm(factor.factorID, step: step, recording: row) else {
            passage.row.reason = SecondFactorRefusal.codeReplayed
            throw GatewayError(.conflict, .conflict, "The factor was confirmed or replaced meanwhile.")
        }
        await passage.giveBackReservations()
        return AdminResponses.noContent()
    }

    private func replaceCodes(_ request: Request, _ context: GatewayRequestContext, _ passage: inout PublicRequest)
        async throws -> Response
    {
        let holder = try await holder(request, context, &passage, fields: ["code"], ticketAllowed: false)
        let (factor, step) = try await checkedCode(holder, confirmed: true, &passage)
        var row = passage.row
        row.outcome = .success
        let codes = RecoveryCode.generate()
        guard
            try await secondFactors.store.replaceRecoveryCodes(
                of: factor.factorID, step: step, digests: codes.compactMap(RecoveryCode.digest(of:)), recording: row)
        else {
            passage.row.reason = SecondFactorRefusal.codeReplayed
            throw GatewayError.invalidCredentials
        }
        await passage.giveBackReservations()
        return try AdminResponses.json(RecoveryCodes(recovery_codes: codes))
    }

    struct RecoveryCodes: Encodable {
        let recovery_codes: [String]
    }
}
