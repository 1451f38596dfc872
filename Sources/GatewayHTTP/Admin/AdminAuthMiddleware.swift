import Foundation
public import GatewayCore
public import GatewayPluginKit
public import GatewayRuntime
public import Hummingbird
import HTTPTypes
import Logging

/// Lets a request through only with a live admin token:
/// `Authorization: Bearer <token>`. The token's record lands in the context
/// for the routes' scope checks. Every answer is `Cache-Control: no-store`:
/// admin answers belong to one caller, and some hold a secret shown once.
/// A client address whose tokens were refused too often (``failures``) is
/// answered 429 before its next token costs a database lookup.
public struct AdminAuthMiddleware: RouterMiddleware {
    public typealias Context = GatewayRequestContext

    private let tokens: any AdminTokenStore
    private let databaseTimeout: Duration
    private let failures: ClientThrottle

    /// - Parameters:
    ///   - databaseTimeout: how long the token lookup may wait for the
    ///     database before the call is answered 503.
    ///   - failures: refused tokens per client address, shared by every
    ///     router the admin API is added to.
    public init(tokens: any AdminTokenStore, databaseTimeout: Duration, failures: ClientThrottle) {
        self.tokens = tokens
        self.databaseTimeout = databaseTimeout
        self.failures = failures
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let header = request.headers[.authorization], header.count > 7,
            header.prefix(7).lowercased() == "bearer "
        else {
            throw AdminErrors.unauthorized("Send an admin token: Authorization: Bearer <token>.", tokenSent: false)
        }
        let secret = AdminTokenSecret(text: String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces))
        guard secret.isWellFormed else { throw AdminErrors.unauthorized("The admin token is malformed.", tokenSent: true) }
        // A unit reserved before the lookup and given back for a good token:
        // however many requests arrive at once, no more bad tokens than the limit reach the database.
        let unit = try failures.take(context.clientIP)
        let record: AdminTokenRecord?
        do {
            let tokens = self.tokens
            record = try await withDatabaseTimeout(databaseTimeout) { try await tokens.authenticate(secret) }
        } catch {
            failures.giveBack(unit)
            context.logger.error("admin token lookup failed", metadata: ["error": "\(error)"])
            throw GatewayError.unavailable
        }
        guard let record else {
            throw AdminErrors.unauthorized("The admin token is unknown, revoked or expired.", tokenSent: true)
        }
        failures.giveBack(unit)
        var context = context
        context.admin = record
        context.logger[metadataKey: "admin_token_id"] = "\(record.id)"
        var response = try await next(request, context)
        response.headers[.cacheControl] = "no-store"
        return response
    }
}
