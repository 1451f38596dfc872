import Foundation
import GatewayConsoleKit
import GatewayCore
import GatewayHTTP
import GatewayPluginKit
import HTTPTypes
import Hummingbird
import Logging

/// Finds the session behind a request's cookie and the admin token it acts
/// with, and opens and closes sessions.
struct SessionGate: Sendable {
    let settings: ConsoleSettings
    let sessions: any ConsoleSessionStore
    let masterKey: MasterKey
    let api: AdminAPI
    var cookies: ConsoleCookies { ConsoleCookies(secure: settings.secureCookie) }

    /// What the sealed token is bound to, so a sealed value from elsewhere never opens here.
    static let sealingContext = "console session token"

    /// The signed-in visit, or `nil` when the request has no live session
    /// (none, expired, signed out, or its admin token revoked or expired:
    /// such a session is closed here).
    func visit(_ request: Request, _ context: GatewayRequestContext) async throws -> ConsoleVisit? {
        guard let sessionID = cookies.value(named: cookies.sessionName, in: request) else { return nil }
        let digest = ConsoleCookies.digest(of: sessionID)
        let sealed: Data?
        do {
            sealed = try await sessions.resume(digest: digest, idle: settings.idleTimeout)
        } catch {
            context.logger.error("console session lookup failed", metadata: ["error": "\(error)"])
            throw GatewayError.unavailable
        }
        guard let sealed, let opened = try? masterKey.open(sealed, context: Self.sealingContext) else { return nil }
        let token = AdminTokenSecret(text: String(decoding: opened, as: UTF8.self))
        let me = await APIAnswer.read(await api.call(.get, "/admin/v1/me", token: token, from: context))
        if me.status == .unauthorized {
            try? await sessions.close(digest: digest)
            return nil
        }
        guard me.succeeded, let id = me.string("id"), let name = me.string("name"), let scope = me.string("scope") else {
            throw GatewayError.unavailable
        }
        return ConsoleVisit(
            request: request, context: context, api: api, token: token,
            csrfToken: ConsoleCookies.csrfToken(for: sessionID), me: .init(id: id, name: name, scope: scope))
    }

    /// Opens a session acting with `token` (already checked), ending at the
    /// earlier of the console's lifetime and the token's own expiry; the
    /// answer's cookie to set.
    func open(token: AdminTokenSecret, tokenExpiresAt: Date?) async throws -> String {
        let sessionID = ConsoleCookies.randomValue()
        let now = Date()
        var endsAt = now + TimeInterval(settings.lifetime.components.seconds)
        if let tokenExpiresAt { endsAt = min(endsAt, tokenExpiresAt) }
        let record = ConsoleSessionRecord(
            digest: ConsoleCookies.digest(of: sessionID),
            sealedToken: try masterKey.seal(Data(token.text.utf8), context: Self.sealingContext),
            expiresAt: min(now + TimeInterval(settings.idleTimeout.components.seconds), endsAt), endsAt: endsAt)
        try await sessions.open(record)
        return cookies.setting(cookies.sessionName, to: sessionID, maxAge: settings.lifetime)
    }

    /// Ends the request's session, if it has one; the answer's cookie to set.
    func close(_ request: Request) async throws -> String {
        if let sessionID = cookies.value(named: cookies.sessionName, in: request) {
            try await sessions.close(digest: ConsoleCookies.digest(of: sessionID))
        }
        return cookies.clearing(cookies.sessionName)
    }

    /// `next` when it is a console page, the console's start otherwise.
    static func safeReturnPath(_ next: String?) -> String {
        guard let next, next.hasPrefix("\(ConsolePaths.root)/"), !next.contains("//"), !next.contains("\\"),
            !next.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else { return ConsolePaths.root }
        return next
    }
}
