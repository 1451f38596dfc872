import Foundation
import GatewayCore
import GatewayPluginKit
import Hummingbird

/// `POST /v1/identity_tokens/validate` `{identity_token}`: the checks Layer's
/// dashboard validation tool made, each problem a stable code and a
/// sentence. A token whose signature does not verify is never called valid.
/// `app_id` names the app whose key signed it, so a token minted under
/// another tenant's issuer is seen for what it is.
struct TokenValidationController: Sendable {
    struct Answer: Encodable {
        let valid: Bool
        /// The app whose key the token names, when the key was found.
        let app_id: String?
        let problems: [TokenValidationReport.Problem]
        let header: [String: JSONValue]
        let claims: [String: JSONValue]

        /// Writes every member, `app_id` as null when no key was found (the
        /// synthesized encoder would leave it out).
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(valid, forKey: .valid)
            try container.encode(app_id, forKey: .app_id)
            try container.encode(problems, forKey: .problems)
            try container.encode(header, forKey: .header)
            try container.encode(claims, forKey: .claims)
        }

        enum CodingKeys: String, CodingKey {
            case valid, app_id, problems, header, claims
        }
    }

    let keys: any KeyStore
    let databaseTimeout: Duration
    /// Validations per client address: each may cost a key lookup.
    let throttle: ClientThrottle

    func addRoutes(to router: Router<GatewayRequestContext>) {
        router.post("/v1/identity_tokens/validate") { request, context in try await validate(request, context) }
    }

    private func validate(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        try throttle.take(context.clientIP)
        let input = try await JSONInput.read(request)
        try input.rejectUnknown(allowed: ["identity_token"])
        var report = TokenValidationReport(compact: try input.requiredString("identity_token"))
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
}
