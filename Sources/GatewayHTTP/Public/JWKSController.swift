import Foundation
import GatewayCore
import GatewayPluginKit
import GatewayRuntime
import Hummingbird

/// `GET /v1/apps/{app_id}/jwks.json`: the app's public keys (next, active and
/// retired), so anyone can verify its tokens across a rotation. Served from
/// the tenant cache, which a key change clears on every replica.
struct JWKSController: Sendable {
    let tenants: TenantCache
    let databaseTimeout: Duration

    func addRoutes(to router: Router<GatewayRequestContext>) {
        router.get("/v1/apps/{app_id}/jwks.json") { _, context in try await keySet(context) }
    }

    private func keySet(_ context: GatewayRequestContext) async throws -> Response {
        let appID: AppID = try context.pathIdentifier("app_id")
        let tenant = try await tenants.tenant(for: appID, within: databaseTimeout)
        var response = try AdminResponses.json(AdminResources.KeySet(keys: tenant.keySet))
        response.headers[.cacheControl] = "public, max-age=60"
        return response
    }
}
