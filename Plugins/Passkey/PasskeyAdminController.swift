import Foundation
import GatewayCore
import GatewayPluginKit
import Hummingbird

/// The admin API's passkey routes, for the operator and the app's admin
/// (the tenant's backend):
///
/// - `GET apps/{app_id}/users/{user_id}/passkeys`: the user's passkeys.
/// - `POST apps/{app_id}/users/{user_id}/passkeys:registration_options`
///   and `POST apps/{app_id}/users/{user_id}/passkeys`: a registration on
///   the user's behalf, as the public routes do with a session.
/// - `PATCH apps/{app_id}/users/{user_id}/passkeys/{credential_id}` `{name}`
///   and `DELETE` the same: renamed (`passkey.renamed`) and revoked
///   (`passkey.revoked`), each with its row.
/// - `GET apps/{app_id}/passkeys/association`: the JSON for the RP
///   domain's `/.well-known/apple-app-site-association` and
///   `/.well-known/assetlinks.json`.
struct PasskeyAdminController: Sendable {
    let services: RouteServices
    let registrar: PasskeyRegistrar

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.get("apps/{app_id}/users/{user_id}/passkeys") { _, context in try await list(context) }
        group.post("apps/{app_id}/users/{user_id}/passkeys:registration_options") { _, context in
            try await registrationOptions(context)
        }
        group.post("apps/{app_id}/users/{user_id}/passkeys") { request, context in try await register(request, context) }
        group.patch("apps/{app_id}/users/{user_id}/passkeys/{credential_id}") { request, context in
            try await rename(request, context)
        }
        group.delete("apps/{app_id}/users/{user_id}/passkeys/{credential_id}") { _, context in try await revoke(context) }
        group.get("apps/{app_id}/passkeys/association") { _, context in try await association(context) }
    }

    struct Passkeys: Encodable {
        let passkeys: [PasskeyAnswer]
    }

    private func list(_ context: GatewayRequestContext) async throws -> Response {
        let (appID, _) = try context.authorizedAppID()
        let userID = try context.pathUserID()
        _ = try await options(of: appID)
        let passkeys = try await registrar.store.passkeys(of: userID, in: appID)
        return try AdminResponses.json(Passkeys(passkeys: passkeys.map(PasskeyAnswer.init)))
    }

    private func registrationOptions(_ context: GatewayRequestContext) async throws -> Response {
        let (appID, _) = try context.authorizedAppID()
        let userID = try context.pathUserID()
        let options = try await options(of: appID)
        var response = try AdminResponses.json(try await registrar.creationOptions(for: userID, in: appID, options: options))
        response.headers[.cacheControl] = "no-store"
        return response
    }

    private func register(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        let (appID, admin) = try context.authorizedAppID()
        let userID = try context.pathUserID()
        let options = try await options(of: appID)
        let input = try await JSONInput.read(request, maximumBytes: PasskeyController.maximumBodyBytes)
        try input.rejectUnknown(allowed: PasskeyRegistrar.fields)
        let row = AuditEvent(
            appID: appID, event: "passkey.registered", outcome: .success, userID: userID,
            credentialType: PasskeyPlugin.type, requestID: context.requestID, actor: admin.id)
        var refusal: String?
        do {
            let passkey = try await registrar.register(
                input, for: userID, in: appID, options: options, boundTo: nil, row: row, refusal: &refusal)
            return try AdminResponses.json(PasskeyAnswer(passkey), status: .created)
        } catch let error as GatewayError where refusal != nil {
            var refused = row
            refused.outcome = .failure
            refused.reason = refusal
            try? await services.plugin.record(refused)
            throw error
        }
    }

    private func rename(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        let (appID, admin) = try context.authorizedAppID()
        let userID = try context.pathUserID()
        let credentialID = try Self.credentialID(context)
        _ = try await options(of: appID)
        let input = try await JSONInput.read(request, maximumBytes: 4 * 1024)
        try input.rejectUnknown(allowed: ["name"])
        guard let name = try PasskeyRegistrar.name(input) else { throw GatewayError.invalidRequest("name is required.") }
        let row = Self.row("passkey.renamed", appID, userID, credentialID, admin, context)
        guard try await registrar.store.rename(credentialID, of: userID, in: appID, to: name, recording: row),
            let passkey = try await registrar.store.passkey(credentialID, in: appID)
        else { throw Self.notFound }
        return try AdminResponses.json(PasskeyAnswer(passkey))
    }

    private func revoke(_ context: GatewayRequestContext) async throws -> Response {
        let (appID, admin) = try context.authorizedAppID()
        let userID = try context.pathUserID()
        let credentialID = try Self.credentialID(context)
        _ = try await options(of: appID)
        let row = Self.row("passkey.revoked", appID, userID, credentialID, admin, context)
        guard try await registrar.store.revoke(credentialID, of: userID, in: appID, recording: row) else { throw Self.notFound }
        return AdminResponses.noContent()
    }

    /// The association files for the app's native apps, each to be served
    /// (as `application/json`, over https, without redirects) at the RP
    /// domain's `/.well-known/` path its key names.
    private func association(_ context: GatewayRequestContext) async throws -> Response {
        let (appID, _) = try context.authorizedAppID()
        let options = try await options(of: appID)
        return try AdminResponses.json(PasskeyAssociation(options))
    }

    /// The app's passkey options as its verifier has them: 404 for no such
    /// app, 400 when it does not accept passkeys.
    private func options(of appID: AppID) async throws -> PasskeyOptions {
        guard try await services.plugin.apps.find(appID) != nil else { throw AdminErrors.appNotFound(appID) }
        let tenant = try await services.tenants.tenant(for: appID, within: services.plugin.databaseTimeout)
        guard let verifier = try tenant.verifier(for: PasskeyPlugin.type) as? PasskeyVerifier else {
            throw GatewayError.internalError
        }
        return verifier.options
    }

    /// The `credential_id` path parameter: the passkey's id, base64url.
    private static func credentialID(_ context: GatewayRequestContext) throws(GatewayError) -> [UInt8] {
        guard let text = context.parameters.get("credential_id"), let bytes = PasskeyField.bytes(text), !bytes.isEmpty,
            bytes.count <= AuthenticatorData.maximumCredentialIDBytes
        else { throw GatewayError.invalidRequest("The credential_id in the path must be a passkey's id, base64url.") }
        return bytes
    }

    private static func row(
        _ event: String, _ appID: AppID, _ userID: String, _ credentialID: [UInt8], _ admin: AdminTokenRecord,
        _ context: GatewayRequestContext
    ) -> AuditEvent {
        AuditEvent(
            appID: appID, event: event, outcome: .success, userID: userID, credentialType: PasskeyPlugin.type,
            requestID: context.requestID, actor: admin.id, detail: ["credential_id": Base64URL.encode(credentialID)])
    }

    private static let notFound = GatewayError(.notFound, .notFound, "This user has no passkey with that credential_id.")
}

/// What the RP domain serves so the app's native apps may use its passkeys:
/// `apple_app_site_association` at `/.well-known/apple-app-site-association`
/// (the `webcredentials` of the iOS apps), `assetlinks` at
/// `/.well-known/assetlinks.json` (`get_login_creds` for each Android app).
struct PasskeyAssociation: Encodable {
    struct WebCredentials: Encodable {
        let apps: [String]
    }

    struct AppleFile: Encodable {
        let webcredentials: WebCredentials
    }

    struct Target: Encodable {
        let namespace = "android_app"
        let package_name: String
        let sha256_cert_fingerprints: [String]
    }

    struct Statement: Encodable {
        let relation = ["delegate_permission/common.get_login_creds"]
        let target: Target
    }

    let rp_id: String
    let apple_app_site_association: AppleFile
    let assetlinks: [Statement]

    init(_ options: PasskeyOptions) {
        rp_id = options.relyingParty.id
        apple_app_site_association = AppleFile(webcredentials: WebCredentials(apps: options.iosAppIDs))
        assetlinks = options.androidApps.map {
            Statement(target: Target(package_name: $0.packageName, sha256_cert_fingerprints: $0.fingerprintTexts))
        }
    }
}
