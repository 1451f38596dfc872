import Foundation
import GatewayCore
public import GatewayPluginKit
public import HTTPTypes
public import Hummingbird
import Mustache
import NIOCore

/// Renders the console's pages from Mustache templates (the console's and
/// its plugins'), each inside `layout.mustache`, with the headers every page
/// carries; and knows the tabs every app's header shows.
public struct PageRenderer: Sendable {
    private let library: MustacheLibrary
    /// The plugins' tabs on an app's pages, in registration order.
    public let pluginTabs: [ConsoleTab]

    /// `files` are (file name, text) pairs as a target embeds them; only
    /// `.mustache` files are taken, each named by its file name without the extension.
    public init(files: [(name: String, text: String)], pluginTabs: [ConsoleTab] = []) throws {
        var library = MustacheLibrary()
        for (name, text) in files where name.hasSuffix(".mustache") {
            try library.register(text, named: String(name.dropLast(".mustache".count)))
        }
        self.library = library
        self.pluginTabs = pluginTabs
    }

    /// Every console answer: no caching (pages hold a tenant's data), no
    /// framing, no script or style from anywhere but the console itself.
    public static let securityHeaders: HTTPFields = [
        .cacheControl: "no-store",
        .contentSecurityPolicy:
            "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self' data:; form-action 'self'; "
            + "frame-ancestors 'none'; base-uri 'none'",
        HTTPField.Name("X-Frame-Options")!: "DENY",
        HTTPField.Name("X-Content-Type-Options")!: "nosniff",
        HTTPField.Name("Referrer-Policy")!: "same-origin",
    ]

    /// `template` rendered with `data` plus what the layout shows of the visit.
    public func page(
        _ template: String, title: String, visit: ConsoleVisit?, data: [String: Any] = [:],
        status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]
    ) -> Response {
        var values = data
        values["title"] = title
        if let visit {
            values["signed_in"] = true
            values["csrf"] = visit.csrfToken
            values["me_name"] = visit.me.name
            values["me_scope"] = visit.me.scope
            if visit.isOperator {
                values["operator"] = true
            } else if let appID = visit.scopedAppID {
                values["scoped_app_link"] = ConsolePaths.app(appID)
            }
        }
        let html = library.render(values, withTemplate: template) ?? "<!doctype html><title>Error</title>"
        var fields = Self.securityHeaders
        fields[.contentType] = "text/html; charset=utf-8"
        for field in headers { fields.append(field) }
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// What `body` answers; a page it gave up on (``PageAnswer``) as that
    /// page; any failure (the database away, a body too large) as an error
    /// page with the status the API would answer, never a JSON body.
    public func answering(_ context: GatewayRequestContext, _ body: () async throws -> Response) async -> Response {
        do {
            return try await body()
        } catch let page as PageAnswer {
            return page.response
        } catch {
            let failure = ErrorResponder.translate(error, logger: context.logger)
            return page(
                "message", title: "Request failed", visit: nil, data: ["message": failure.message],
                status: ErrorResponder.status(for: failure.kind),
                headers: failure.retryAfterSeconds.map { [.retryAfter: "\($0)"] } ?? [:])
        }
    }

    /// 303 to `location` (after a form post, so a reload does not post again).
    public static func redirect(_ location: String, headers: HTTPFields = [:]) -> Response {
        var fields = securityHeaders
        fields[.location] = location
        for field in headers { fields.append(field) }
        return Response(status: .seeOther, headers: fields)
    }
}
