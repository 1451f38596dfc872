import Foundation
import GatewayCore
import GatewayPluginKit
import GatewayRuntime
import Hummingbird

/// `POST /v1/identity_tokens/validate` `{identity_token, app_id?, token_profile?}`:
/// every problem a token has, each a stable code and a sentence. A token
/// whose signature does not verify is never called valid.
///
/// Without `app_id`, the token is checked as a Layer identity token, as
/// Layer's dashboard tool did: the key is found by its `iss` and `kid`
/// among every app's, and the answer's `app_id` names the app whose key
/// signed it, so a token minted under another tenant's issuer is seen for
/// what it is. With `app_id`, it is checked as that app's token of
/// `token_profile` (the app's first profile when absent), under that app's
/// keys and secrets.
struct TokenValidationController: Sendable {
    struct Answer: Encodable {
        let valid: Bool
        /// The app whose key the token names, when the key was found; null otherwise.
        @WrittenAsNull var app_id: String?
        let problems: [TokenValidationReport.Problem]
        let header: [String: JSONValue]
        let claims: [String: JSONValue]
    }

    let keys: any KeyStore
    let tenants: TenantCache
    let databaseTimeout: Duration
    /// Validations per client address: each may cost a key lookup.
    let throttle: ClientThrottle

    func addRoutes(to router: Router<GatewayRequestContext>) {
        router.post("/v1/identity_tokens/validate") { request, context in try await validate(request, context) }
    }

    private func validate(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        try throttle.take(context.clientIP)
        let input = try await JSONInput.read(request)
        try input.rejectUnknown(allowed: ["identity_token", "app_id", "token_profile"])
        let compact = try input.requiredString("identity_token")
        if let app = try input.string("app_id") {
            return try await validate(compact, of: try TokenRequest.validatedAppID(app), profile: try input.string("token_profile"))
        }
        if let profile = try input.string("token_profile"), profile != TokenProfileEntry.layer.type {
            throw GatewayError.invalidRequest("app_id is required to check a '\(profile)' token: its keys and secrets are the app's.")
        }
        var report = TokenValidationReport(compact: compact)
        var appID: AppID?
        if let lookup = report.keyLookup {
            let keys = self.keys
            let key = try await withDatabaseTimeout(databaseTimeout) {
                try await keys.publicKeyPEM(issuer: lookup.issuer, keyID: lookup.keyID)
            }
            appID = key?.appID
            report.checkSignature(publicKeyPEM: key?.pem)
        }
        return try AdminResponses.json(
            Answer(
                valid: report.isValid, app_id: appID?.description, problems: report.problems, header: report.header,
                claims: report.claims))
    }

    /// `compact` checked as `appID`'s token of `profile` (its first when `nil`).
    private func validate(_ compact: String, of appID: AppID, profile requested: String?) async throws -> Response {
        let tenant = try await tenants.tenant(for: appID, within: databaseTimeout)
        let profile = try tenant.profileName(requested: requested)
        guard let token = ParsedIdentityToken(compact: compact) else {
            let report = TokenValidationReport(compact: compact)
            return try AdminResponses.json(Answer(valid: false, app_id: nil, problems: report.problems, header: [:], claims: [:]))
        }
        let problems: [TokenValidationReport.Problem]
        do {
            problems = try tenant.minter(for: profile).problems(in: token)
        } catch {
            // The app cannot issue this profile now (no active key, say): nothing can be valid under it.
            problems = [TokenValidationReport.Problem(error.code.rawValue, error.message)]
        }
        let signed = !problems.contains { $0.code == "bad_signature" }
        return try AdminResponses.json(
            Answer(
                valid: problems.isEmpty, app_id: signed ? appID.description : nil, problems: problems, header: token.header,
                claims: token.claims))
    }
}
