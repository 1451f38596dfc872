import Foundation
import GatewayCore
import GatewayPluginKit
import Hummingbird

/// Users' sessions through the admin API: a user's listed (never a token
/// or its digest), and ended one at a time, all of a user's, or all of an
/// app's. Each end commits with its `session.revoked` row. Ending all of
/// a user's is a change of the user (``UserLifecycle``): their sign-ins in
/// progress end too, and so does what a one-factor session of theirs added
/// (a passkey), which lives no longer than the sessions.
struct SessionAdminController: Sendable {
    let apps: any AppStore
    let sessions: any SessionStore
    let userLifecycle: UserLifecycle

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.get("apps/{app_id}/users/{user_id}/sessions") { request, context in try await list(request, context) }
        group.delete("apps/{app_id}/users/{user_id}/sessions") { _, context in try await revokeUser(context) }
        group.delete("apps/{app_id}/sessions/{session_id}") { _, context in try await revokeOne(context) }
        group.delete("apps/{app_id}/sessions") { _, context in try await revokeApp(context) }
    }

    /// `?include_ended=true` lists the sessions that ended too (kept 30 days).
    private func list(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        let (appID, _) = try context.authorizedAppID()
        let userID = try context.pathUserID()
        try await requireApp(appID)
        let includingEnded: Bool
        switch request.uri.queryParameters["include_ended"].map(String.init) {
        case nil, "false": includingEnded = false
        case "true": includingEnded = true
        default: throw GatewayError.invalidRequest("include_ended must be true or false.")
        }
        let found = try await sessions.list(of: userID, in: appID, includingEnded: includingEnded, at: Date())
        return try AdminResponses.json(AdminResponses.Page(items: found.map(SessionAnswer.init), next_cursor: nil))
    }

    private func revokeOne(_ context: GatewayRequestContext) async throws -> Response {
        let (appID, admin) = try context.authorizedAppID()
        guard let sessionID = UUID(uuidString: context.parameters.get("session_id") ?? "") else {
            throw GatewayError.invalidRequest("The session_id in the path must be a UUID.")
        }
        try await requireApp(appID)
        var row = Self.row(appID, admin, context)
        row.detail["session_id"] = sessionID.lowercasedText
        let ended = try await sessions.revoke(.session(sessionID, in: appID), reason: SessionEnding.adminReason, recording: row)
        guard ended == 1 else {
            throw GatewayError(.notFound, .notFound, "This app has no live session with that session_id.")
        }
        return AdminResponses.noContent()
    }

    private func revokeUser(_ context: GatewayRequestContext) async throws -> Response {
        let (appID, admin) = try context.authorizedAppID()
        let userID = try context.pathUserID()
        try await requireApp(appID)
        let change = UserChange(.sessionsEnded, of: userID, in: appID, requestID: context.requestID, actor: admin.id)
        return try AdminResponses.json(Revoked(revoked: try await userLifecycle.journalAndApply(change).sessions))
    }

    private func revokeApp(_ context: GatewayRequestContext) async throws -> Response {
        let (appID, admin) = try context.authorizedAppID()
        try await requireApp(appID)
        let ended = try await sessions.revoke(.app(appID), reason: SessionEnding.adminReason, recording: Self.row(appID, admin, context))
        return try AdminResponses.json(Revoked(revoked: ended))
    }

    struct Revoked: Encodable {
        let revoked: Int
    }

    private func requireApp(_ appID: AppID) async throws {
        guard try await apps.find(appID) != nil else { throw AdminErrors.appNotFound(appID) }
    }

    private static func row(_ appID: AppID, _ admin: AdminTokenRecord, _ context: GatewayRequestContext) -> AuditEvent {
        AuditEvent(
            appID: appID, event: "session.revoked", outcome: .success, credentialType: RefreshToken.credentialType,
            requestID: context.requestID, actor: admin.id)
    }
}

/// A session as the admin API shows it: who, how it began, when it was
/// used, how long it lives; never a refresh token nor its digest.
struct SessionAnswer: Encodable, Sendable {
    let session_id: String
    let user_id: String
    let credential_type: String
    let amr: [String]
    let auth_time: String
    let device_label: String?
    let created_at: String
    let last_used_at: String
    let idle_expires_at: String
    let expires_at: String
    let revoked_at: String?
    let revoked_reason: String?

    init(_ session: StoredSession) {
        session_id = session.sessionID.lowercasedText
        user_id = session.userID
        credential_type = session.credentialType
        amr = session.methods
        auth_time = timestamp(session.authTime)
        device_label = session.deviceLabel
        created_at = timestamp(session.createdAt)
        last_used_at = timestamp(session.lastUsedAt)
        idle_expires_at = timestamp(session.idleExpiresAt)
        expires_at = timestamp(session.expiresAt)
        revoked_at = session.revokedAt.map(timestamp)
        revoked_reason = session.revokedReason
    }
}
