import Foundation
import GatewayCore
import GatewayPostgres
import Hummingbird

/// `POST /v1/identity_tokens/validate` `{identity_token}`: the checks Layer's
/// dashboard validation tool made, each problem a stable code and a
/// sentence. A token whose signature does not verify is never called valid.
struct TokenValidationController: Sendable {
    struct Answer: Encodable {
        let valid: Bool
        let problems: [TokenValidationReport.Problem]
        let header: [String: JSONValue]
        let claims: [String: JSONValue]
    }

    let keys: AppKeyRepository
    let databaseTimeout: Duration

    func addRoutes(to router: Router<GatewayRequestContext>) {
        router.post("/v1/identity_tokens/validate") { request, _ in try await validate(request) }
    }

    private func validate(_ request: Request) async throws -> Response {
        let input = try await JSONInput.read(request)
        try input.rejectUnknown(allowed: ["identity_token"])
        var report = TokenValidationReport(compact: try input.requiredString("identity_token"))
        if let lookup = report.keyLookup {
            let keys = self.keys
            let publicKeyPEM = try await withDatabaseTimeout(databaseTimeout) {
                try await keys.publicKeyPEM(issuer: lookup.issuer, keyID: lookup.keyID)
            }
            report.checkSignature(publicKeyPEM: publicKeyPEM)
        }
        return try AdminResponses.json(
            Answer(valid: report.isValid, problems: report.problems, header: report.header, claims: report.claims))
    }
}
