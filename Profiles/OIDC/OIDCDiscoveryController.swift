import Foundation
import GatewayCore
import GatewayPluginKit
import Hummingbird
import HTTPTypes
import NIOCore

/// `GET /v1/apps/{app_id}/.well-known/openid-configuration`: the discovery
/// document (OpenID Connect Discovery 1.0 §3) of an app that issues `oidc`
/// tokens; 404 for any other app. Its `jwks_uri` is the app's key set,
/// which holds that app's keys only. The gateway issues ID tokens for its
/// own token endpoint, not through a browser flow, so the document names no
/// authorization endpoint.
struct OIDCDiscoveryController: Sendable {
    let issuerBaseURL: URL?
    let services: RouteServices

    func addRoutes(to router: Router<GatewayRequestContext>) {
        router.get("/v1/apps/{app_id}/.well-known/openid-configuration") { _, context in try await document(context) }
    }

    private func document(_ context: GatewayRequestContext) async throws -> Response {
        let appID: AppID = try context.pathIdentifier("app_id")
        let tenant = try await services.tenants.tenant(for: appID, within: services.plugin.databaseTimeout)
        guard let issuerBaseURL, tenant.settings.tokenProfiles.contains(where: { $0.type == "oidc" }) else {
            throw GatewayError(.notFound, .notFound, "This app issues no OpenID Connect tokens.")
        }
        let issuer = OIDCProfile.issuer(of: appID, base: issuerBaseURL)
        var body = JSONObjectWriter(reservingCapacity: 512)
        body.add("issuer", issuer)
        body.add("jwks_uri", issuer + "/jwks.json")
        body.add("response_types_supported", ["id_token"])
        body.add("subject_types_supported", ["public"])
        body.add("id_token_signing_alg_values_supported", ["RS256"])
        body.add("claims_supported", OIDCProfile.claimsSupported)
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        headers[.cacheControl] = "public, max-age=60"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: body.finish())))
    }
}
