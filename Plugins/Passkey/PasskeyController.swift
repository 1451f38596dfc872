import Foundation
import GatewayCore
import GatewayPluginKit
import Hummingbird

/// The passkey plugin's public routes:
///
/// - `POST /v1/passkeys/authentication_options` `{app_id}` → 200: WebAuthn's
///   `PublicKeyCredentialRequestOptionsJSON` with a challenge for one
///   sign-in (no credentials listed: passkeys are discoverable, and a list
///   would tell who has one). Counted per client under `passkey_challenges`.
/// - `POST /v1/passkeys/registration_options` `{app_id, refresh_token}` →
///   200: `PublicKeyCredentialCreationOptionsJSON` for the session's user.
/// - `POST /v1/passkeys` `{app_id, refresh_token, client_data_json,
///   attestation_object, credential_id?, name?}` → 201: the passkey, registered
///   for the session's user (row `passkey.registered`).
///
/// The refresh token proves the user and is not spent; a bad one counts
/// against the client's `refresh_failures`. The passkey is bound at the
/// session's level: where the user has a confirmed second factor or the
/// app's `mfa` exempts passkeys, a session whose sign-in was one factor is
/// refused both routes (403 `step_up_required`); elsewhere the passkey a
/// one-factor session adds never counts as two factors, and goes with a new
/// password or when an admin ends every session of the user
/// (``PasskeyPlugin/hear(_:services:)``). A refused registration is a
/// 400 `passkey_rejected` naming the check, its row saying `passkey_<check>`.
/// A session that ended while its passkey was being added (the user's
/// deletion ends it) takes the passkey back (`passkey.revoked`, its reason
/// the session's): a 401 `invalid_credentials`.
struct PasskeyController: Sendable {
    static let authenticationOptionsPath = "/v1/passkeys/authentication_options"
    static let registrationOptionsPath = "/v1/passkeys/registration_options"
    static let registrationPath = "/v1/passkeys"
    /// An attestation object with a certificate chain fits.
    static let maximumBodyBytes = 32 * 1024

    let services: RouteServices
    let registrar: PasskeyRegistrar

    func addRoutes(to router: Router<GatewayRequestContext>) {
        let gate = services.gate
        router.post(RouterPath(stringLiteral: Self.authenticationOptionsPath)) { request, context in
            try await gate.answer(
                "passkey.challenge", credentialType: PasskeyPlugin.type, cost: .limitsFirst, request: request, context: context
            ) {
                try await authenticationOptions(request, context, &$0)
            }
        }
        router.post(RouterPath(stringLiteral: Self.registrationOptionsPath)) { request, context in
            try await gate.answer(
                "passkey.challenge", credentialType: PasskeyPlugin.type, cost: .limitsFirst, request: request, context: context
            ) {
                try await registrationOptions(request, context, &$0)
            }
        }
        router.post(RouterPath(stringLiteral: Self.registrationPath)) { request, context in
            try await gate.answer(
                "passkey.registered", credentialType: PasskeyPlugin.type, cost: .limitsFirst, request: request, context: context
            ) {
                try await register(request, context, &$0)
            }
        }
    }

    /// The request's body, its app, and the app's passkey options.
    private func read(
        _ request: Request, _ context: GatewayRequestContext, _ passage: inout PublicRequest, fields: Set<String>
    ) async throws -> (JSONInput, AppSettings, PasskeyOptions) {
        let input = try await JSONInput.read(request, maximumBytes: Self.maximumBodyBytes)
        try input.rejectUnknown(allowed: fields.union(["app_id"]))
        let appID = try TokenRequest.validatedAppID(try input.string("app_id"))
        passage.row.appID = appID
        context.logFacts.appID = appID
        let tenant = try await passage.app(appID)
        guard let verifier = try tenant.verifier(for: PasskeyPlugin.type) as? PasskeyVerifier else {
            throw GatewayError.internalError
        }
        return (input, tenant.settings, verifier.options)
    }

    private func authenticationOptions(
        _ request: Request, _ context: GatewayRequestContext, _ passage: inout PublicRequest
    ) async throws -> Response {
        let (_, app, options) = try await read(request, context, &passage, fields: [])
        try await passage.limits([RateLimitPolicy.passkeyChallenges.name: passage.clientIP])
        let challenge = PasskeyChallenge.generate()
        try await registrar.store.keepChallenge(
            PasskeyChallenge.digest(challenge), for: .assertion, userID: nil, in: app.appID,
            lifetimeSeconds: options.challengeLifetimeSeconds)
        passage.row.outcome = .success
        try await passage.succeedWithoutWaiting()
        let party = options.relyingParty
        return try AdminResponses.json(
            JSONValue.object([
                "challenge": .string(Base64URL.encode(challenge)), "rpId": .string(party.id),
                "timeout": .number(Double(options.challengeLifetimeSeconds * 1000)),
                "userVerification": .string(party.requiresUserVerification ? "required" : "preferred"),
                "allowCredentials": .array([]),
            ]))
    }

    private func registrationOptions(
        _ request: Request, _ context: GatewayRequestContext, _ passage: inout PublicRequest
    ) async throws -> Response {
        let (input, app, options) = try await read(request, context, &passage, fields: ["refresh_token"])
        let holder = try await services.sessionHolders.holder(
            of: try input.string("refresh_token"), adding: PasskeyPlugin.type, in: app, passage: &passage)
        let creation = try await registrar.creationOptions(for: holder.userID, in: app.appID, options: options)
        passage.row.outcome = .success
        try await passage.succeedWithoutWaiting()
        return try AdminResponses.json(creation)
    }

    private func register(
        _ request: Request, _ context: GatewayRequestContext, _ passage: inout PublicRequest
    ) async throws -> Response {
        let (input, app, options) = try await read(
            request, context, &passage, fields: PasskeyRegistrar.fields.union(["refresh_token"]))
        let refreshToken = try input.string("refresh_token")
        let holder = try await services.sessionHolders.holder(
            of: refreshToken, adding: PasskeyPlugin.type, in: app, passage: &passage)
        let userID = holder.userID
        var row = passage.row
        row.outcome = .success
        var refusal: String?
        do {
            let passkey = try await registrar.register(
                input, for: userID, in: app.appID, options: options,
                boundTo: holder.isMultiFactor ? nil : holder.sessionID, row: row, refusal: &refusal)
            try await passage.succeededInTheRoutesStatement()
            // The session may have ended while the passkey was added (deleting the user
            // ends it, and takes the passkeys it finds): then this one goes too.
            if let ended = try await services.sessionHolders.endedReason(of: refreshToken ?? "", in: app) {
                var revoked = row
                revoked.event = "passkey.revoked"
                revoked.detail["credential_id"] = Base64URL.encode(passkey.credentialID)
                revoked.detail["reason"] = ended
                _ = try await registrar.store.revoke(passkey.credentialID, of: userID, in: app.appID, recording: revoked)
                refusal = ended
                throw GatewayError.invalidCredentials
            }
            return try AdminResponses.json(PasskeyAnswer(passkey), status: .created)
        } catch {
            passage.row.reason = refusal
            throw error
        }
    }
}

/// A passkey as the API shows it (never its key), and as the console reads it.
struct PasskeyAnswer: Codable, Sendable {
    let credential_id: String
    let name: String
    let created_at: String
    let last_used_at: String?
    let backup_eligible: Bool
    let backed_up: Bool
    let aaguid: String
    let attestation_format: String

    init(_ passkey: StoredPasskey) {
        credential_id = Base64URL.encode(passkey.credentialID)
        name = passkey.name
        created_at = timestamp(passkey.createdAt)
        last_used_at = passkey.lastUsedAt.map(timestamp)
        backup_eligible = passkey.backupEligible
        backed_up = passkey.backedUp
        aaguid = passkey.aaguid.lowercasedText
        attestation_format = passkey.attestationFormat
    }
}
