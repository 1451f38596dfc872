import Foundation
import GatewayCore
import GatewayPluginKit
import Hummingbird

/// `/admin/v1/admin_tokens`: operators create, list and revoke admin tokens.
/// A token's secret is shown once, in the answer that creates it. Any token
/// reads its own record at `/admin/v1/me` (who am I, what may I see).
struct AdminTokenController: Sendable {
    let tokens: any AdminTokenStore
    let apps: any AppStore

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.post("admin_tokens") { request, context in try await create(request, context) }
        group.get("admin_tokens") { request, context in try await list(request, context) }
        group.get("me") { _, context in
            try AdminResponses.json(AdminResources.AdminToken(try context.adminToken()))
        }
        group.delete("admin_tokens/{token_id}") { _, context in try await revoke(context) }
    }

    private func create(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        let admin = try context.requireOperator()
        let input = try await JSONInput.read(request)
        try input.rejectUnknown(allowed: ["name", "scope", "expires_at"])
        let name = try input.requiredString("name").trimmingCharacters(in: .whitespacesAndNewlines)
        guard (1...200).contains(name.utf8.count) else { throw GatewayError.invalidRequest("name must be 1 to 200 bytes.") }
        guard let scope = AdminScope(try input.requiredString("scope")) else {
            throw GatewayError.invalidRequest("scope must be operator or app:<app id>.")
        }
        if case .app(let appID) = scope, try await apps.find(appID) == nil {
            throw GatewayError.invalidRequest("scope names app \(appID), which does not exist.")
        }
        let expiresAt = try input.date("expires_at")
        if let expiresAt, expiresAt <= Date() { throw GatewayError.invalidRequest("expires_at must be in the future.") }

        let record = AdminTokenRecord(name: name, scope: scope, expiresAt: expiresAt)
        let secret = AdminTokenSecret.generate()
        try await tokens.create(record, secret: secret, recording: Self.event("admin.token.created", record, context, actor: admin))
        return try AdminResponses.json(AdminResources.AdminToken(record, secret: secret), status: .created)
    }

    private func list(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        _ = try context.requireOperator()
        let page = try Pagination(request)
        let items = try await tokens.list(after: try page.afterUUID(), limit: page.limit)
        return try AdminResponses.json(
            AdminResponses.Page(items: items.map { AdminResources.AdminToken($0) }, next_cursor: page.nextCursor(items) { $0.id }))
    }

    private func revoke(_ context: GatewayRequestContext) async throws -> Response {
        let admin = try context.requireOperator()
        guard let id = UUID(canonicalText: context.parameters.get("token_id") ?? "") else {
            throw GatewayError(.notFound, .notFound, "No such admin token.")
        }
        let record = AdminTokenRecord(id: id, name: "", scope: .operator)
        guard try await tokens.revoke(id, recording: Self.event("admin.token.revoked", record, context, actor: admin)) else { throw GatewayError(.notFound, .notFound, "No live admin token has id \(id).") }
        return AdminResponses.noContent()
    }

    private static func event(
        _ name: String, _ record: AdminTokenRecord, _ context: GatewayRequestContext, actor: AdminTokenRecord
    ) -> AuditEvent {
        var detail = ["token_id": record.id.lowercasedText]
        if !record.name.isEmpty { detail["scope"] = record.scope.description }
        var appID: AppID?
        if case .app(let scoped) = record.scope { appID = scoped }
        return AuditEvent(
            appID: appID, event: name, outcome: .success, requestID: context.requestID, actor: actor.id, detail: detail)
    }
}
