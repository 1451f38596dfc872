import Foundation
public import GatewayCore
public import Hummingbird
import HTTPTypes
import Logging

/// Lets a request through only with a live admin token:
/// `Authorization: Bearer <token>`. The token's record lands in the context
/// for the routes' scope checks. Every answer is `Cache-Control: no-store`:
/// admin answers belong to one caller, and some hold a secret shown once.
public struct AdminAuthMiddleware: RouterMiddleware {
    public typealias Context = GatewayRequestContext

    private let tokens: any AdminTokenStore
    private let databaseTimeout: Duration

    /// - Parameter databaseTimeout: how long the token lookup may wait for
    ///   the database before the call is answered 503.
    public init(tokens: any AdminTokenStore, databaseTimeout: Duration) {
        self.tokens = tokens
        self.databaseTimeout = databaseTimeout
    }

    public func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        guard let header = request.headers[.authorization], header.count > 7,
            header.prefix(7).lowercased() == "bearer "
        else {
            throw Self.unauthorized("Send an admin token: Authorization: Bearer <token>.", tokenSent: false)
        }
        let secret = AdminTokenSecret(text: String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces))
        guard secret.isWellFormed else { throw Self.unauthorized("The admin token is malformed.", tokenSent: true) }
        let record: AdminTokenRecord?
        do {
            let tokens = self.tokens
            record = try await withDatabaseTimeout(databaseTimeout) { try await tokens.authenticate(secret) }
        } catch {
            context.logger.error("admin token lookup failed", metadata: ["error": "\(error)"])
            throw GatewayError.unavailable
        }
        guard let record else {
            throw Self.unauthorized("The admin token is unknown, revoked or expired.", tokenSent: true)
        }
        var context = context
        context.admin = record
        context.logger[metadataKey: "admin_token_id"] = "\(record.id)"
        var response = try await next(request, context)
        response.headers[.cacheControl] = "no-store"
        return response
    }

    /// 401 with the challenge RFC 6750 asks for: `invalid_token` when a
    /// token was sent and refused, no error code when none was sent.
    static func unauthorized(_ message: String, tokenSent: Bool) -> GatewayError {
        var error = GatewayError(.unauthorized, status: 401, message)
        error.headers = [("WWW-Authenticate", tokenSent ? #"Bearer realm="admin", error="invalid_token""# : #"Bearer realm="admin""#)]
        return error
    }
}

extension GatewayRequestContext {
    /// The caller's token, which the middleware guarantees on admin routes.
    public func adminToken() throws(GatewayError) -> AdminTokenRecord {
        guard let admin else { throw AdminAuthMiddleware.unauthorized("An admin token is required.", tokenSent: false) }
        return admin
    }

    /// 403 unless the caller is an operator.
    public func requireOperator() throws(GatewayError) -> AdminTokenRecord {
        let admin = try adminToken()
        guard admin.scope.isOperator else {
            throw GatewayError(.insufficientScope, status: 403, "This needs an operator token.")
        }
        return admin
    }

    /// The app named by the `app_id` path parameter, when the caller may see
    /// it. Another app's resources answer 404, exactly like a missing app.
    public func authorizedAppID() throws(GatewayError) -> (AppID, AdminTokenRecord) {
        let admin = try adminToken()
        let appID: AppID = try pathIdentifier("app_id")
        guard admin.scope.covers(appID) else { throw AdminErrors.appNotFound(appID) }
        logFacts.appID = appID
        return (appID, admin)
    }
}

extension GatewayRequestContext {
    /// A Layer identifier from a path parameter, in any accepted form
    /// (`layer:///...` arrives percent-encoded); 400 naming it otherwise.
    public func pathIdentifier<Identifier: LayerIdentifier>(_ name: String) throws(GatewayError) -> Identifier {
        let raw = parameters.get(name) ?? ""
        guard let identifier = Identifier(raw.removingPercentEncoding ?? raw) else {
            throw GatewayError.invalidRequest(
                "The \(name) in the path must be layer:///\(Identifier.uriPrefixes[0])<uuid> or a UUID.")
        }
        return identifier
    }
}

public enum AdminErrors {
    public static func appNotFound(_ appID: AppID) -> GatewayError {
        GatewayError(.notFound, status: 404, "No app with id \(appID) exists.")
    }
}
