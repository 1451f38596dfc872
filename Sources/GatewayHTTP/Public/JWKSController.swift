import Foundation
import GatewayCore
import GatewayPostgres
import Hummingbird

/// `GET /v1/apps/{app_id}/jwks.json`: the app's public keys (next, active and
/// retired), so anyone can verify its tokens across a rotation.
struct JWKSController: Sendable {
    let apps: AppRepository
    let keys: AppKeyRepository

    func addRoutes(to router: Router<GatewayRequestContext>) {
        router.get("/v1/apps/{app_id}/jwks.json") { _, context in try await keySet(context) }
    }

    private func keySet(_ context: GatewayRequestContext) async throws -> Response {
        let appID: AppID = try context.pathIdentifier("app_id")
        guard try await apps.find(appID) != nil else {
            throw GatewayError(.unknownApp, status: 404, "No app with id \(appID) exists on this gateway.")
        }
        let published = try await keys.keys(of: appID).compactMap { PublicJWK(publicKeyPEM: $0.publicKeyPEM, keyID: $0.keyID) }
        var response = try AdminResponses.json(AdminResponses.KeySet(keys: published))
        response.headers[.cacheControl] = "public, max-age=60"
        return response
    }
}
