import Foundation
public import GatewayCore
import Hummingbird

// The scope checks every admin route makes, the gateway's and the plugins'
// alike: the token ``AdminAuthMiddleware`` put in the context, and what it covers.

extension GatewayRequestContext {
    /// The caller's token, which the middleware guarantees on admin routes.
    public func adminToken() throws -> AdminTokenRecord {
        guard let admin else { throw AdminErrors.unauthorized("An admin token is required.", tokenSent: false) }
        return admin
    }

    /// 403 unless the caller is an operator.
    public func requireOperator() throws -> AdminTokenRecord {
        let admin = try adminToken()
        guard admin.scope.isOperator else {
            throw GatewayError(.insufficientScope, .forbidden, "This needs an operator token.")
        }
        return admin
    }

    /// The app named by the `app_id` path parameter, when the caller may see
    /// it. Another app's resources answer 404, exactly like a missing app.
    public func authorizedAppID() throws -> (AppID, AdminTokenRecord) {
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

    /// The `user_id` path parameter, percent-decoded, 1 to 256 bytes; 400 otherwise.
    public func pathUserID() throws(GatewayError) -> String {
        let raw = parameters.get("user_id") ?? ""
        guard let userID = raw.removingPercentEncoding else {
            throw GatewayError.invalidRequest("The user_id in the path must be percent-encoded UTF-8.")
        }
        return try TokenRequest.validatedUserID(userID, field: "The user_id in the path")
    }
}

public enum AdminErrors {
    /// 401 with the challenge RFC 6750 asks for: `invalid_token` when a
    /// token was sent and refused, no error code when none was sent.
    public static func unauthorized(_ message: String, tokenSent: Bool) -> HeaderedError {
        HeaderedError(
            GatewayError(.unauthorized, .unauthenticated, message),
            headers: [.wwwAuthenticate: tokenSent ? #"Bearer realm="admin", error="invalid_token""# : #"Bearer realm="admin""#])
    }

    public static func appNotFound(_ appID: AppID) -> GatewayError {
        GatewayError(.notFound, .notFound, "No app with id \(appID) exists.")
    }
}
