import Foundation
import GatewayCore
import GatewayPluginKit
import Hummingbird

/// A user's second factor through the admin API: enrolled for them (its
/// secret and recovery codes answered once, to hand over; the user confirms
/// it with a first code), shown (never its secret nor a recovery code), and
/// reset, which is how a user who lost their
/// phone gets back in: the operator or the app's admin removes the factor
/// (with an `mfa.reset` row naming who), and the user's next sign-in asks
/// for no code, or for a new enrolment where the app requires one.
struct SecondFactorAdminController: Sendable {
    let apps: any AppStore
    let secondFactors: SecondFactors

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.post("apps/{app_id}/users/{user_id}/mfa") { _, context in try await enrol(context) }
        group.get("apps/{app_id}/users/{user_id}/mfa") { _, context in try await show(context) }
        group.delete("apps/{app_id}/users/{user_id}/mfa") { _, context in try await reset(context) }
    }

    private func show(_ context: GatewayRequestContext) async throws -> Response {
        let (appID, _) = try context.authorizedAppID()
        let userID = try context.pathUserID()
        try await requireApp(appID)
        guard let factor = try await secondFactors.store.factor(of: userID, in: appID) else {
            throw GatewayError(.notFound, .notFound, "This user has no second factor.")
        }
        return try AdminResponses.json(SecondFactorAnswer(factor))
    }

    private func reset(_ context: GatewayRequestContext) async throws -> Response {
        let (appID, admin) = try context.authorizedAppID()
        let userID = try context.pathUserID()
        try await requireApp(appID)
        let row = AuditEvent(
            appID: appID, event: "mfa.reset", outcome: .success, userID: userID, credentialType: SecondFactors.totpType,
            requestID: context.requestID, actor: admin.id)
        guard try await secondFactors.store.reset(userID, in: appID, recording: row) else {
            throw GatewayError(.notFound, .notFound, "This user has no second factor.")
        }
        return AdminResponses.noContent()
    }

    /// A new factor, not confirmed (replacing one not confirmed): 201 with
    /// its secret, URI and recovery codes; 409 when the user has a confirmed one.
    private func enrol(_ context: GatewayRequestContext) async throws -> Response {
        let (appID, admin) = try context.authorizedAppID()
        let userID = try context.pathUserID()
        guard let app = try await apps.find(appID)?.settings else { throw AdminErrors.appNotFound(appID) }
        guard app.mfa != nil else {
            throw GatewayError.invalidRequest("This app asks for no second factor: turn on its mfa setting first.")
        }
        let row = AuditEvent(
            appID: appID, event: "mfa.enrolled", outcome: .success, userID: userID, credentialType: SecondFactors.totpType,
            requestID: context.requestID, actor: admin.id)
        guard let new = try await secondFactors.enrol(userID, in: app, recording: row) else {
            throw GatewayError(
                .conflict, .conflict, "This user has a confirmed second factor; reset it before enrolling another.")
        }
        var response = try AdminResponses.json(new, status: .created)
        response.headers[.cacheControl] = "no-store"
        return response
    }

    private func requireApp(_ appID: AppID) async throws {
        guard try await apps.find(appID) != nil else { throw AdminErrors.appNotFound(appID) }
    }
}

/// A second factor as the admin API shows it.
struct SecondFactorAnswer: Encodable, Sendable {
    let user_id: String
    let type: String
    let confirmed: Bool
    let created_at: String
    @WrittenAsNull var confirmed_at: String?
    @WrittenAsNull var last_used_at: String?
    let recovery_codes_left: Int

    init(_ factor: StoredSecondFactor) {
        user_id = factor.userID
        type = SecondFactors.totpType
        confirmed = factor.isConfirmed
        created_at = timestamp(factor.createdAt)
        confirmed_at = factor.confirmedAt.map(timestamp)
        last_used_at = factor.lastUsedAt.map(timestamp)
        recovery_codes_left = factor.recoveryCodesLeft
    }
}
