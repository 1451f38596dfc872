import Foundation
import GatewayCore
import GatewayPluginKit
import Hummingbird

/// `/admin/v1/apps/{app_id}/keys`: import or generate signing keys, rotate
/// them, delete them. Private keys go in and are sealed; they never come out.
struct KeyAdminController: Sendable {
    let apps: any AppStore
    let keys: any KeyStore
    let masterKey: MasterKey
    let generator: KeyGenerator
    /// Generating a key is costly work: charged to the caller and the app.
    let work: AdminWorkLimit

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.post("apps/{app_id}/keys") { request, context in try await create(request, context) }
        group.get("apps/{app_id}/keys") { _, context in try await list(context) }
        group.get("apps/{app_id}/keys/{key_id}") { _, context in try await read(context) }
        group.post("apps/{app_id}/keys/{key_id}/activate") { _, context in try await activate(context) }
        group.delete("apps/{app_id}/keys/{key_id}") { _, context in try await delete(context) }
    }

    /// `{key_id, private_key_pem}` imports the key Layer's dashboard gave;
    /// `{generate: {bits}}` makes one (off the cooperative threads, one at a time). An app's
    /// first key becomes active at once; later ones wait as `next`.
    private func create(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        let (appID, admin) = try context.authorizedAppID()
        let input = try await JSONInput.read(request)
        try input.rejectUnknown(allowed: ["key_id", "private_key_pem", "generate"])
        guard try await apps.find(appID) != nil else { throw AdminErrors.appNotFound(appID) }

        let keyID: KeyID
        if input.has("key_id") {
            // Sent, it must be one: null is no key id (an import would otherwise get a made-up one).
            guard let text = try? input.string("key_id"), let parsed = KeyID(text) else {
                throw GatewayError.invalidRequest("key_id must be layer:///keys/<uuid> or a UUID.")
            }
            keyID = parsed
        } else {
            keyID = KeyID(uuid: UUID())
        }
        let pair: RSAKeyPair
        switch (try input.string("private_key_pem"), try input.object("generate")) {
        case (let pem?, nil):
            guard input.has("key_id") else {
                throw GatewayError.invalidRequest("key_id is required with private_key_pem: use the Key ID Layer gave for it.")
            }
            pair = try RSAKeyPair.imported(pem: pem)
        case (nil, let generate?):
            try generate.rejectUnknown(allowed: ["bits"])
            let bits = try generate.integer("bits") ?? 2048
            guard RSAKeyPair.generatableBits.contains(bits) else {
                throw GatewayError.invalidRequest("generate.bits must be 2048, 3072 or 4096.")
            }
            try await work.charge(admin, for: appID)
            pair = try await generator.generate(bits: bits)
        default:
            throw GatewayError.invalidRequest("Send either private_key_pem (with key_id) or generate, not both.")
        }

        let addition = try await keys.add(to: appID) { status in
            try StoredKey(appID: appID, keyID: keyID, status: status, pair: pair, masterKey: masterKey)
        } recording: { stored in
            AuditEvent(
                appID: appID, event: "admin.key.created", outcome: .success, keyID: keyID, requestID: context.requestID,
                actor: admin.id, detail: ["status": stored.status.rawValue, "bits": "\(pair.bits)"])
        }
        switch addition {
        case .added: return try AdminResponses.json(AdminResources.Key(try await existing(keyID, of: appID)), status: .created)
        case .appNotFound: throw AdminErrors.appNotFound(appID)
        case .full:
            throw GatewayError(
                .conflict, .conflict,
                "The app holds \(StoredKey.maximumPerApp) keys, the most it may; delete a retired one first.")
        }
    }

    private func list(_ context: GatewayRequestContext) async throws -> Response {
        let (appID, _) = try context.authorizedAppID()
        guard try await apps.find(appID) != nil else { throw AdminErrors.appNotFound(appID) }
        let all = try await keys.keys(of: appID)
        return try AdminResponses.json(AdminResponses.Page(items: all.map(AdminResources.Key.init), next_cursor: nil))
    }

    private func read(_ context: GatewayRequestContext) async throws -> Response {
        let (appID, _) = try context.authorizedAppID()
        return try AdminResponses.json(AdminResources.Key(try await existing(try keyID(context), of: appID)))
    }

    /// Makes the key the signing key; the previous one retires in the same transaction.
    private func activate(_ context: GatewayRequestContext) async throws -> Response {
        let (appID, admin) = try context.authorizedAppID()
        let keyID = try keyID(context)
        let event = AuditEvent(
            appID: appID, event: "admin.key.activated", outcome: .success, keyID: keyID, requestID: context.requestID,
            actor: admin.id)
        guard try await keys.activate(keyID, of: appID, recording: event) else { throw Self.keyNotFound(keyID) }
        return try AdminResponses.json(AdminResources.Key(try await existing(keyID, of: appID)))
    }

    private func delete(_ context: GatewayRequestContext) async throws -> Response {
        let (appID, admin) = try context.authorizedAppID()
        let keyID = try keyID(context)
        let event = AuditEvent(
            appID: appID, event: "admin.key.deleted", outcome: .success, keyID: keyID, requestID: context.requestID,
            actor: admin.id)
        switch try await keys.delete(keyID, of: appID, recording: event) {
        case .deleted: return AdminResponses.noContent()
        case .notFound: throw Self.keyNotFound(keyID)
        case .refusedActive:
            throw GatewayError(.keyActive, .conflict, "The active key cannot be deleted; activate another key first.")
        }
    }

    private func keyID(_ context: GatewayRequestContext) throws(GatewayError) -> KeyID {
        try context.pathIdentifier("key_id")
    }

    private func existing(_ keyID: KeyID, of appID: AppID) async throws -> StoredKey {
        guard let key = try await keys.key(keyID, of: appID) else { throw Self.keyNotFound(keyID) }
        return key
    }

    private static func keyNotFound(_ keyID: KeyID) -> GatewayError {
        GatewayError(.notFound, .notFound, "No key \(keyID) belongs to this app.")
    }
}
