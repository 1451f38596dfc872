import Foundation
import GatewayCore
import GatewayPluginKit
import Hummingbird

/// `/admin/v1/apps`: create, list, read, change and delete tenants. Turning
/// an app's sessions off ends every session it has (a `session.revoked`
/// row, reason `sessions_off`), so turning them on again brings no old
/// refresh token back.
struct AppAdminController: Sendable {
    let apps: any AppStore
    let settingsInput: AppSettingsInput
    let sessions: any SessionStore

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.post("apps") { request, context in try await create(request, context) }
        group.get("apps") { request, context in try await list(request, context) }
        group.get("apps/{app_id}") { _, context in try await read(context) }
        group.patch("apps/{app_id}") { request, context in try await update(request, context) }
        group.delete("apps/{app_id}") { _, context in try await delete(context) }
    }

    private func create(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        let admin = try context.requireOperator()
        let settings = try settingsInput.create(from: try await JSONInput.read(request))
        let event = AuditEvent(
            appID: settings.appID, event: "admin.app.created", outcome: .success, requestID: context.requestID,
            actor: admin.id)
        guard try await apps.create(settings, recording: event), let stored = try await apps.find(settings.appID) else {
            throw GatewayError(.conflict, .conflict, "An app with id \(settings.appID) exists already.")
        }
        return try AdminResponses.json(AdminResources.App(stored, plugins: settingsInput.plugins), status: .created)
    }

    private func list(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        _ = try context.requireOperator()
        let page = try Pagination(request)
        // `search`: an app id finds that app; other text, apps whose name contains it.
        var only: AppID?
        var nameContaining: String?
        if let search = request.uri.queryParameters["search"].map(String.init) {
            guard (1...200).contains(search.utf8.count), !search.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
                throw GatewayError.invalidRequest("search must be 1 to 200 bytes without control characters.")
            }
            if let appID = AppID(search) { only = appID } else { nameContaining = search }
        }
        let items = try await apps.list(
            only: only, nameContaining: nameContaining, after: try page.afterUUID().map(AppID.init(uuid:)), limit: page.limit)
        return try AdminResponses.json(
            AdminResponses.Page(items: items.map { AdminResources.App($0, plugins: settingsInput.plugins) }, next_cursor: page.nextCursor(items) { $0.settings.appID.uuid }))
    }

    private func read(_ context: GatewayRequestContext) async throws -> Response {
        let (appID, _) = try context.authorizedAppID()
        guard let stored = try await apps.find(appID) else { throw AdminErrors.appNotFound(appID) }
        return try AdminResponses.json(AdminResources.App(stored, plugins: settingsInput.plugins))
    }

    private func update(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        let (appID, admin) = try context.authorizedAppID()
        let input = try await JSONInput.read(request)
        let event = AuditEvent(
            appID: appID, event: "admin.app.updated", outcome: .success, requestID: context.requestID, actor: admin.id,
            detail: ["fields": input.members.keys.sorted().joined(separator: ",")])
        // The check and the write read the same locked row: an app admin's change
        // made at the same moment as an operator's never writes back what the operator changed.
        let stored = try await apps.update(appID, recording: event) { [settingsInput] current in
            let settings = try settingsInput.update(current.settings, from: input, byOperator: admin.scope.isOperator)
            if !admin.scope.isOperator { try settingsInput.requireOperatorFor(settings, from: current.settings) }
            return settings
        }
        guard let stored else { throw AdminErrors.appNotFound(appID) }
        if input.members["sessions"] != nil, stored.settings.sessions == nil {
            // After the change has committed: a failure here answers 503, and the same PATCH sent again ends them.
            let row = AuditEvent(
                appID: appID, event: "session.revoked", outcome: .success, credentialType: RefreshToken.credentialType,
                requestID: context.requestID, actor: admin.id)
            _ = try await sessions.revoke(.app(appID), reason: Self.sessionsOff, recording: row)
        }
        return try AdminResponses.json(AdminResources.App(stored, plugins: settingsInput.plugins))
    }

    /// The reason of the sessions an app's sessions turned off ended.
    static let sessionsOff = "sessions_off"

    private func delete(_ context: GatewayRequestContext) async throws -> Response {
        let (appID, _) = try context.authorizedAppID()
        let admin = try context.requireOperator()
        let event = AuditEvent(
            appID: appID, event: "admin.app.deleted", outcome: .success, requestID: context.requestID, actor: admin.id)
        guard try await apps.delete(appID, recording: event) else { throw AdminErrors.appNotFound(appID) }
        return AdminResponses.noContent()
    }
}
