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
/// with the reason. A factor enrolled on the word of a session or ticket
/// that ended meanwhile (the user's deletion ends both) is taken back: an
/// `mfa.reset` row naming why, and 401 `invalid_credentials`.
struct SecondFactorController: Sendable {
    static let enrolPath = "/v1/mfa/totp"
    static let confirmPath = "/v1/mfa/totp/confirm"
    static let recoveryCodesPath = "/v1/mfa/recovery_codes"
    static let maximumBodyBytes = 4 * 1024

    let gate: PublicRequestGate
    let sessionHolders: any SessionHolders
    let secondFactors: SecondFactors

    func addRoutes(to router: Router<GatewayRequestContext>) {
        router.post(RouterPath(stringLiteral: Self.enrolPath)) { request, context in
            try await gate.answer(
                "mfa.enrolled", credentialType: SecondFactors.totpType, cost: .limitsFirst, request: request, context: context
            ) {
                try await enrol(request, context, &$0)
            }
        }
        router.post(RouterPath(stringLiteral: Self.confirmPath)) { request, context in
            try await gate.answer(
                "mfa.confirmed", credentialType: SecondFactors.totpType, cost: .limitsFirst, request: request, context: context
            ) {
                try await confirm(request, context, &$0)
            }
        }
        router.post(RouterPath(stringLiteral: Self.recoveryCodesPath)) { request, context in
            try await gate.answer(
                "mfa.recovery_codes_replaced", credentialType: SecondFactors.totpType, cost: .limitsFirst, request: request,
                context: context
            ) { try await replaceCodes(request, context, &$0) }
        }
    }

    /// Who asks, and their app: the holder of a live session's refresh token
    /// or (where `ticketAllowed`) of an unspent sign-in ticket.
    private struct Holder {
        let app: AppSettings
        let userID: String
        let input: JSONInput
        let proof: Proof

        enum Proof {
            case session(refreshToken: String)
            case ticket(String)
        }
    }

    private func holder(
        _ request: Request, _ context: GatewayRequestContext, _ passage: inout PublicRequest, fields: Set<String>,
        ticketAllowed: Bool
    ) async throws -> Holder {
        let input = try await JSONInput.read(request, maximumBytes: Self.maximumBodyBytes)
        try input.rejectUnknown(allowed: fields.union(["app_id", "refresh_token"]).union(ticketAllowed ? ["mfa_ticket"] : []))
        let appID = try TokenRequest.validatedAppID(try input.string("app_id"))
        passage.row.appID = appID
        context.logFacts.appID = appID
        let app = try await passage.app(appID).settings
        guard app.mfa != nil else {
            throw GatewayError(.unsupportedCredentialType, .invalidRequest, "This app asks for no second factor.")
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
                try await passage.refuseHolder(reading.refusal ?? SecondFactorRefusal.ticketUnknown)
            }
            try await passage.limits([:])
            return Holder(app: app, userID: found.grant.userID, input: input, proof: .ticket(presentedTicket))
        }
        let holder = try await sessionHolders.holder(of: presentedToken, adding: nil, in: app, passage: &passage)
        return Holder(app: app, userID: holder.userID, input: input, proof: .session(refreshToken: presentedToken ?? ""))
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
        try await passage.succeededInTheRoutesStatement()
        try await takeBackIfEnded(holder, row: row, &passage)
        return try AdminResponses.json(new, status: .created)
    }

    /// The user's factor and the step of `code` on it, with `mfa_failures`
    /// reserved; a wrong code keeps the reservation and is refused.
    private func checkedCode(
        _ holder: Holder, confirmed: Bool, _ passage: inout PublicRequest
    ) async throws -> (StoredSecondFactor, Int64) {
        let code = try holder.input.requiredString("code")
        try await passage.limits([RateLimitPolicy.mfaFailures.name: holder.userID])
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
        try await passage.succeededInTheRoutesStatement()
        return AdminResponses.noContent()
    }

    /// Takes back the factor an enrolment just stored when what proved its
    /// holder ended meanwhile (deleting the user ends their sessions and
    /// tickets, and takes the factor it finds, twice): the factor goes, with
    /// an `mfa.reset` row naming why, and the answer is 401. A confirmation
    /// needs no such check: the factor it confirms is one of these, gone
    /// with the deletion or taken back by its own enrolment.
    private func takeBackIfEnded(_ holder: Holder, row: AuditEvent, _ passage: inout PublicRequest) async throws {
        let ended: String? =
            switch holder.proof {
            case .session(let refreshToken): try await sessionHolders.endedReason(of: refreshToken, in: holder.app)
            case .ticket(let ticket): try await secondFactors.read(ticket: ticket, in: holder.app.appID).refusal
            }
        guard let ended else { return }
        var reset = row
        reset.event = "mfa.reset"
        reset.detail["reason"] = ended
        _ = try await secondFactors.store.reset(holder.userID, in: holder.app.appID, recording: reset)
        passage.row.reason = ended
        throw GatewayError.invalidCredentials
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
        try await passage.succeededInTheRoutesStatement()
        return try AdminResponses.json(RecoveryCodes(recovery_codes: codes))
    }

    struct RecoveryCodes: Encodable {
        let recovery_codes: [String]
    }
}
