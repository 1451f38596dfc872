import Foundation
import GatewayCore
import GatewayPluginKit
import Hummingbird

/// `/admin/v1/apps/{app_id}/users`: the app's password directory. Answers
/// never contain a hash; writes commit with their audit row. Deleting or
/// disabling a user, or a new password, is a change of the user that
/// everything holding something of theirs hears (``UserLifecycle``), by
/// PUT, PATCH, DELETE and import alike: their sessions end (on a new
/// password only where `sessions.revoke_on_password_change` is on), their
/// sign-ins in progress end, a deletion takes their factor, passkeys and
/// numbers. It runs after the user's change has committed; a failure there
/// answers 503, and the same request sent again finishes it.
struct UserAdminController: Sendable {
    let apps: any AppStore
    let users: any PasswordUserStore
    let lifecycle: UserLifecycle
    let hasher: PasswordHasher
    let work: AdminWorkLimit

    func addRoutes(to group: RouterGroup<GatewayRequestContext>) {
        group.get("apps/{app_id}/users") { request, context in try await list(request, context) }
        group.post("apps/{app_id}/users:import") { request, context in try await importUsers(request, context) }
        group.put("apps/{app_id}/users/{user_id}") { request, context in try await put(request, context) }
        group.patch("apps/{app_id}/users/{user_id}") { request, context in try await patch(request, context) }
        group.get("apps/{app_id}/users/{user_id}") { _, context in try await read(context) }
        group.delete("apps/{app_id}/users/{user_id}") { _, context in try await delete(context) }
    }

    private func list(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        let (appID, _) = try context.authorizedAppID()
        _ = try await options(of: appID)
        let page = try Pagination(request)
        let prefix = request.uri.queryParameters["prefix"].map(String.init) ?? ""
        guard prefix.utf8.count <= TokenRequest.maximumUserIDBytes else {
            throw GatewayError.invalidRequest("prefix must be at most \(TokenRequest.maximumUserIDBytes) bytes.")
        }
        let emailVerified: Bool?
        switch request.uri.queryParameters["email_verified"].map(String.init) {
        case nil: emailVerified = nil
        case "true": emailVerified = true
        case "false": emailVerified = false
        default: throw GatewayError.invalidRequest("email_verified must be true or false.")
        }
        let items = try await users.list(
            in: appID, prefix: prefix, emailVerified: emailVerified, after: page.afterKey, limit: page.limit)
        return try AdminResponses.json(
            AdminResponses.Page(items: items.map(UserResponse.of), next_cursor: page.nextCursor(items) { $0.userID }))
    }

    /// Creates or replaces the user: a whole representation, so a password
    /// (or an imported hash) is required. 201 when created, 200 when replaced.
    private func put(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        let (appID, admin) = try context.authorizedAppID()
        let userID = try context.pathUserID()
        let options = try await options(of: appID)
        let input = try UserInput(try await JSONInput.read(request), policy: options.policy)
        guard let password = input.password else {
            throw GatewayError.invalidRequest("password or password_hash is required.")
        }
        if case .plain = password { try await work.charge(admin, for: appID) }
        let record = PasswordUserRecord(
            userID: userID, hash: try await hash(password, options: options, for: appID), profile: input.profile,
            disabled: input.disabled ?? false)
        let requestID = context.requestID
        let origin = UserChangeOrigin(requestID: requestID, actor: admin.id)
        let outcome = try await users.upsert([record], in: appID, by: origin) { outcome in
            outcome[0] == .addressTaken
                ? nil
                : AuditEvent(
                    appID: appID, event: outcome[0].isCreated ? "admin.user.created" : "admin.user.replaced", outcome: .success,
                    userID: userID, requestID: requestID, actor: admin.id)
        }[0]
        if outcome == .addressTaken { throw PasswordUpsert.addressTakenError }
        for change in outcome.userChanges { try await lifecycle.apply(change) }
        return try AdminResponses.json(
            UserResponse.of(try await existing(userID, in: appID)), status: outcome.isCreated ? .created : .ok)
    }

    /// Changes the fields sent: profile fields (`null` clears), `disabled`, a new password.
    private func patch(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        let (appID, admin) = try context.authorizedAppID()
        let userID = try context.pathUserID()
        let options = try await options(of: appID)
        let body = try await JSONInput.read(request)
        let input = try UserInput(body, policy: options.policy)
        if case .plain? = input.password { try await work.charge(admin, for: appID) }
        let newHash = try await input.password.asyncMap { try await hash($0, options: options, for: appID) }
        let event = AuditEvent(
            appID: appID, event: "admin.user.updated", outcome: .success, userID: userID,
            requestID: context.requestID, actor: admin.id,
            detail: ["fields": body.members.keys.map { $0 == "password_hash" ? "password" : $0 }.sorted().joined(separator: ",")])
        // Both when both: disabling keeps a one-factor session's passkey (for when the user comes back), a new
        // password does not.
        let origin = UserChangeOrigin(requestID: context.requestID, actor: admin.id)
        let changes =
            (input.disabled == true ? [origin.change(.disabled, of: userID, in: appID)] : [])
            + (input.password != nil ? [origin.change(.passwordChanged, of: userID, in: appID)] : [])
        let found = try await users.update(userID, in: appID, recording: event, journaling: changes) { user in
            PasswordUserRecord(
                userID: userID, hash: newHash ?? user.hash, profile: input.patch(user.profile),
                disabled: input.disabled ?? user.disabled)
        }
        guard found else { throw Self.userNotFound(userID) }
        for change in changes { try await lifecycle.apply(change) }
        return try AdminResponses.json(UserResponse.of(try await existing(userID, in: appID)))
    }

    private func read(_ context: GatewayRequestContext) async throws -> Response {
        let (appID, _) = try context.authorizedAppID()
        let userID = try context.pathUserID()
        _ = try await options(of: appID)
        return try AdminResponses.json(UserResponse.of(try await existing(userID, in: appID)))
    }

    private func delete(_ context: GatewayRequestContext) async throws -> Response {
        let (appID, admin) = try context.authorizedAppID()
        let userID = try context.pathUserID()
        let event = AuditEvent(
            appID: appID, event: "admin.user.deleted", outcome: .success, userID: userID,
            requestID: context.requestID, actor: admin.id)
        // The row and the change's journal entry commit with the deletion; then every holder hears it,
        // sessions first: a credential a session of theirs stored before goes with the rest, one it stores
        // later finds the session ended and takes itself back. Should this stop half way, a sweep finishes it.
        let change = UserChange(.deleted, of: userID, in: appID, requestID: context.requestID, actor: admin.id)
        let deleted = try await users.delete(userID, in: appID, recording: event, journaling: [change])
        guard deleted else { throw Self.userNotFound(userID) }
        try await lifecycle.apply(change)
        return AdminResponses.noContent()
    }

    /// `POST .../users:import`: NDJSON, one user a line, streamed in batches.
    private func importUsers(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        let (appID, admin) = try context.authorizedAppID()
        let contentType = request.headers[.contentType]?.lowercased() ?? ""
        guard contentType.hasPrefix("application/x-ndjson") || contentType.hasPrefix("application/jsonl") else {
            throw GatewayError(
                .unsupportedMediaType, .unsupportedMediaType, "Send the users as application/x-ndjson, one JSON object a line.")
        }
        try await work.charge(admin, for: appID)
        let importer = UserImporter(
            appID: appID, options: try await options(of: appID), users: users, hasher: hasher, lifecycle: lifecycle,
            requestID: context.requestID, actor: admin.id)
        guard let summary = try await users.whileImporting(into: appID, { try await importer.run(request.body) }) else {
            throw GatewayError(
                .conflict, .conflict, "An import into this app is running; send the next one when it has finished.")
        }
        return try AdminResponses.json(summary)
    }

    /// A new argon2id hash for a plain password; an imported hash as it is.
    private func hash(_ password: UserInput.Password, options: PasswordOptions, for appID: AppID) async throws -> PasswordHash {
        switch password {
        case .plain(let text): try await hasher.hash(text, parameters: options.argon2, for: .admin(appID))
        case .hash(let hash): hash
        }
    }

    /// The app's password options; 404 when the app does not exist.
    private func options(of appID: AppID) async throws -> PasswordOptions {
        guard let app = try await apps.find(appID) else { throw AdminErrors.appNotFound(appID) }
        return try PasswordOptions(app.settings.plugins["password"] ?? .null, hashLimits: hasher.limits)
    }

    private func existing(_ userID: String, in appID: AppID) async throws -> PasswordUser {
        guard let user = try await users.find(userID, in: appID) else { throw Self.userNotFound(userID) }
        return user
    }


    private static func userNotFound(_ userID: String) -> GatewayError {
        GatewayError(.notFound, .notFound, "This app has no user with that user_id.")
    }
}

extension PasswordOptions {
    var policy: PasswordPolicy { PasswordPolicy(minimumLength: minimumLength, hashLimits: hashLimits) }
}

extension Optional {
    fileprivate func asyncMap<Mapped>(_ transform: (Wrapped) async throws -> Mapped) async rethrows -> Mapped? {
        guard let self else { return nil }
        return try await transform(self)
    }
}

/// A user as the admin API shows it: the hash stays inside; its scheme shows
/// how far an imported user base has been upgraded.
struct UserResponse: Encodable, Sendable {
    let user_id: String
    let disabled: Bool
    let password_scheme: String
    let created_at: String
    let updated_at: String
    let last_login_at: String?
    /// True once a code sent to the user's `email` came back (self-service),
    /// false while a self-service account waits for it; absent where nobody knows.
    let email_verified: Bool?

    /// The user's members with their profile fields beside them.
    static func of(_ user: PasswordUser) -> WithProfile<UserResponse> {
        WithProfile(
            UserResponse(
                user_id: user.userID, disabled: user.disabled, password_scheme: user.hash.scheme.rawValue,
                created_at: timestamp(user.createdAt), updated_at: timestamp(user.updatedAt),
                last_login_at: user.lastLoginAt.map(timestamp), email_verified: user.profile.emailVerified),
            profile: user.profile)
    }
}
