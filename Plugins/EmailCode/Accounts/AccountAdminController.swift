import Foundation
import GatewayCore
import GatewayCourier
import GatewayPluginKit
import Hummingbird

/// `POST /admin/v1/apps/{app_id}/users/{user_id}/verification`: an admin
/// sends a self-service account still waiting for its address to be
/// verified a new code (what the user can ask for themselves at
/// `POST /v1/accounts/verification`). 202 with the code's lifetime; 404
/// for no such user; 409 `not_awaiting_verification` for a user whose
/// address is verified, was typed by an admin (neither verified nor not),
/// is absent, or who is disabled, and 409 `self_service_off` where the
/// app's sign-up is closed (its codes could not be confirmed). Audited as
/// `admin.account.verification_sent` with the admin and the message id.
struct AccountAdminController: Sendable {
    let services: RouteServices
    let sender: AccountCodeSender
    let doorbell: OutboxDoorbell

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.post("apps/{app_id}/users/{user_id}/verification") { _, context in try await resend(context) }
    }

    private func resend(_ context: GatewayRequestContext) async throws -> Response {
        let (appID, admin) = try context.authorizedAppID()
        let userID = try context.pathUserID()
        let tenant = try await services.tenants.tenant(for: appID, within: services.plugin.databaseTimeout)
        guard let selfService = tenant.settings.selfService, selfService.signUp != .closed else {
            throw GatewayError(.selfServiceOff, .conflict, "This app's self_service.sign_up is closed: a code could not be confirmed.")
        }
        let app = try AccountApp(tenant, selfService: selfService, services: services.plugin)
        guard let account = try await app.directory.account(of: userID, in: appID) else {
            throw GatewayError(.notFound, .notFound, "This app has no user with that user_id.")
        }
        guard account.awaitsVerification, let address = account.email.flatMap(EmailAddress.init) else {
            throw GatewayError(
                .notAwaitingVerification, .conflict,
                "This user is not a self-service account waiting for its address to be verified.")
        }
        let outcome = try await sender.send(
            .verification, key: .verification(of: userID), binding: nil, to: address, resendAfterSeconds: 0, app: app,
            requestID: context.requestID, userID: userID)
        guard case .sent(let answer, let messageID) = outcome else { throw GatewayError.internalError }
        try await services.plugin.record(
            AuditEvent(
                appID: appID, event: "admin.account.verification_sent", outcome: .success, userID: userID,
                credentialType: EmailCodePlugin.type, requestID: context.requestID, actor: admin.id,
                detail: ["email": address.text, "message_id": messageID?.uuidString.lowercased() ?? ""]))
        doorbell.ring()
        return try AdminResponses.json(answer, status: .accepted)
    }
}

