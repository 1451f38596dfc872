import GatewayCore
import GatewayPluginKit
import Hummingbird

/// `POST /v1/accounts/deletion` `{app_id, refresh_token, password?}` → 200
/// `{"deleted": true}`: a user deletes their own account, inside the app, as
/// the App Store asks of every app that creates accounts (guideline
/// 5.1.1(v)). Where the app's `self_service.account_deletion` is on; with a
/// live session whose sign-in is recent (`recent_sign_in_seconds`; 403
/// `recent_sign_in_required` otherwise), or with the account's password
/// (a password user's; `user_failures` counts a wrong one). Any user a
/// session holds may leave: a password user, and one who signed in with a
/// provider's ID token, a phone code or a passkey alone.
///
/// The user goes through their lifecycle as an admin's deletion goes:
/// their directory row goes with the request's `account.deleted` row
/// (`detail.by` = `user`) and the change's journal entry, in one
/// transaction; then every holder hears it: their sessions, then factor,
/// tickets, passkeys, numbers, queued mail, codes and Apple grants (whose
/// revocation at Apple is queued). A user no directory holds (an ID
/// token's, a phone code's) is journaled alone first. Should the request
/// stop half way, a sweep finishes the deletion (``UserLifecycle``).
struct AccountDeletionController: Sendable {
    static let path = "/v1/accounts/deletion"
    static let maximumBodyBytes = 4 * 1024

    let gate: PublicRequestGate
    let sessionHolders: any SessionHolders
    let userLifecycle: UserLifecycle
    /// The password plugin, where installed: its users' rows, and their password as a proof.
    let passwords: (any PasswordDirectoryProvider)?
    let pluginServices: PluginServices

    func addRoutes(to router: Router<GatewayRequestContext>) {
        router.post(RouterPath(stringLiteral: Self.path)) { request, context in
            try await gate.answer(
                "account.deleted", credentialType: RefreshToken.credentialType, cost: .limitsFirst, request: request,
                context: context
            ) { passage in
                try await delete(request, context, &passage)
            }
        }
    }

    private func delete(_ request: Request, _ context: GatewayRequestContext, _ passage: inout PublicRequest) async throws
        -> Response
    {
        let input = try await JSONInput.read(request, maximumBytes: Self.maximumBodyBytes)
        try input.rejectUnknown(allowed: ["app_id", "refresh_token", "password"])
        let appID = try TokenRequest.validatedAppID(try input.string("app_id"))
        passage.row.appID = appID
        context.logFacts.appID = appID
        let password = try input.string("password")
        let tenant = try await passage.app(appID)
        guard let selfService = tenant.settings.selfService, selfService.accountDeletion else { throw GatewayError.selfServiceOff }
        let holder = try await sessionHolders.holder(
            of: try input.string("refresh_token"), adding: nil, in: tenant.settings, passage: &passage)
        let directory = try passwords?.directory(for: tenant.settings, services: pluginServices)
        if let password {
            try await passage.limits([RateLimitPolicy.userFailures.name: holder.userID])
            guard case .verified? = try await directory?.verify(holder.userID, password: password, in: appID) else {
                passage.row.reason = "bad_password"
                throw GatewayError.invalidCredentials
            }
        } else if !holder.signedInWithin(seconds: selfService.recentSignInSeconds) {
            passage.row.reason = "sign_in_not_recent"
            throw GatewayError.recentSignInRequired(within: selfService.recentSignInSeconds)
        }
        let change = UserChange(.deleted, of: holder.userID, in: appID, requestID: passage.row.requestID, actor: nil)
        var row = passage.row
        row.outcome = .success
        row.detail["by"] = "user"
        if try await directory?.deleteAccount(holder.userID, in: appID, recording: row, journaling: change) == true {
            try await passage.succeededInTheRoutesStatement()
            try await userLifecycle.apply(change)
        } else {
            // Not a directory's user (an ID token's, a phone code's): the change is journaled alone, its
            // holders told, and the row is the request's own.
            try await userLifecycle.journalAndApply(change)
            try await passage.succeed(recording: row)
        }
        return try AdminResponses.json(["deleted": true])
    }
}
