import Foundation
import GatewayCore
import GatewayPluginKit
import Hummingbird

/// `/admin/v1/apps/{app_id}/phone_numbers`: binds numbers to user ids, with
/// optional profile fields for the token's claims. A user who loses their
/// last number (it is unbound, or bound to another user) loses the sessions
/// a phone code began too (`session.revoked`, reason `phone_number_unbound`,
/// as a sign-in written after the change says of its own): the session does
/// not record which number, so while one is left they stay.
struct PhoneNumberAdminController: Sendable {
    let apps: any AppStore
    let store: any PhoneCodeStore
    let sessions: any SessionStore

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.get("apps/{app_id}/phone_numbers") { request, context in try await list(request, context) }
        group.put("apps/{app_id}/phone_numbers/{phone_number}") { request, context in try await bind(request, context) }
        group.get("apps/{app_id}/phone_numbers/{phone_number}") { _, context in try await read(context) }
        group.delete("apps/{app_id}/phone_numbers/{phone_number}") { _, context in try await unbind(context) }
    }

    private func list(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        let appID = try await existingApp(context).0
        let page = try Pagination(request)
        let items = try await store.bindings(in: appID, after: page.afterKey, limit: page.limit)
        return try AdminResponses.json(
            AdminResponses.Page(items: items.map(BindingResponse.of), next_cursor: page.nextCursor(items) { $0.phoneNumber }))
    }

    /// `{user_id, first_name?, last_name?, display_name?, avatar_url?}` (the profile fields): 201 when new, 200 when replaced.
    private func bind(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        let (appID, admin) = try await existingApp(context)
        let number = try Self.number(context)
        let input = try await JSONInput.read(request)
        try input.rejectUnknown(allowed: Set(["user_id"] + UserProfile.fieldNames))
        let userID = try TokenRequest.validatedUserID(try input.requiredString("user_id"))
        let identity = VerifiedIdentity(userID: userID, profile: try UserProfile.read(input))
        let requestID = context.requestID
        let previous = try await store.binding(of: number, in: appID)?.identity.userID
        let created = try await store.bind(number, to: identity, in: appID) { created in
            AuditEvent(
                appID: appID, event: created ? "admin.phone_number.bound" : "admin.phone_number.rebound",
                outcome: .success, userID: userID, requestID: requestID, actor: admin.id,
                detail: ["phone_number": number.text])
        }
        if let previous, previous != userID { try await endPhoneSessionsOnceNoNumberIsLeft(previous, in: appID, admin, context) }
        guard let binding = try await store.binding(of: number, in: appID) else { throw Self.notBound }
        return try AdminResponses.json(BindingResponse.of(binding), status: created ? .created : .ok)
    }

    private func read(_ context: GatewayRequestContext) async throws -> Response {
        let appID = try await existingApp(context).0
        guard let binding = try await store.binding(of: try Self.number(context), in: appID) else { throw Self.notBound }
        return try AdminResponses.json(BindingResponse.of(binding))
    }

    private func unbind(_ context: GatewayRequestContext) async throws -> Response {
        let (appID, admin) = try context.authorizedAppID()
        let number = try Self.number(context)
        let bound = try await store.binding(of: number, in: appID)?.identity.userID
        let event = AuditEvent(
            appID: appID, event: "admin.phone_number.unbound", outcome: .success, userID: bound, requestID: context.requestID,
            actor: admin.id, detail: ["phone_number": number.text])
        let removed = try await store.unbind(number, in: appID, boundTo: nil, recording: event)
        guard removed else { throw Self.notBound }
        if let bound { try await endPhoneSessionsOnceNoNumberIsLeft(bound, in: appID, admin, context) }
        return AdminResponses.noContent()
    }

    /// Ends the sessions a phone code began for `userID` when no number is
    /// bound to them any more; after the binding's change has committed (a
    /// failure answers 503, and the same request sent again ends them).
    private func endPhoneSessionsOnceNoNumberIsLeft(
        _ userID: String, in appID: AppID, _ admin: AdminTokenRecord, _ context: GatewayRequestContext
    ) async throws {
        guard try await store.bindings(of: userID, in: appID).isEmpty else { return }
        let row = AuditEvent(
            appID: appID, event: "session.revoked", outcome: .success, userID: userID,
            credentialType: RefreshToken.credentialType, requestID: context.requestID, actor: admin.id)
        _ = try await sessions.revoke(
            .signIns(of: userID, by: PhoneCodePlugin.type, in: appID), reason: PhoneCodeVerifier.unbound, recording: row)
    }

    private func existingApp(_ context: GatewayRequestContext) async throws -> (AppID, AdminTokenRecord) {
        let (appID, admin) = try context.authorizedAppID()
        guard try await apps.find(appID) != nil else { throw AdminErrors.appNotFound(appID) }
        return (appID, admin)
    }

    /// The `phone_number` path parameter (`+` may arrive as `%2B`).
    private static func number(_ context: GatewayRequestContext) throws(GatewayError) -> PhoneNumber {
        let raw = context.parameters.get("phone_number") ?? ""
        return try PhoneNumber.parse(raw.removingPercentEncoding ?? raw, field: "The phone_number in the path")
    }

    private static let notBound = GatewayError(.notFound, .notFound, "That number is not bound to a user of this app.")
}

/// A binding as the admin API shows it.
struct BindingResponse: Encodable, Sendable {
    let phone_number: String
    let user_id: String
    let created_at: String
    let updated_at: String

    /// The binding's members with its user's profile fields beside them.
    static func of(_ binding: PhoneNumberBinding) -> WithProfile<BindingResponse> {
        WithProfile(
            BindingResponse(
                phone_number: binding.phoneNumber, user_id: binding.identity.userID,
                created_at: timestamp(binding.createdAt), updated_at: timestamp(binding.updatedAt)),
            profile: binding.identity.profile)
    }
}
