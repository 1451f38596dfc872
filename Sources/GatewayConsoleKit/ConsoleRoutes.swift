import GatewayCore
public import GatewayPluginKit
import HTTPTypes
public import Hummingbird
import NIOCore

/// Registers console pages behind the session: a page without a live
/// session goes to sign-in; a form post without the session's CSRF token
/// is refused with 403 before anything else happens.
public struct ConsoleRoutes {
    /// The signed-in visit of a request, or `nil` when it has no live session.
    public typealias Visit = @Sendable (Request, GatewayRequestContext) async throws -> ConsoleVisit?

    let group: RouterGroup<GatewayRequestContext>
    let visit: Visit
    public let pages: PageRenderer

    public init(group: RouterGroup<GatewayRequestContext>, pages: PageRenderer, visit: @escaping Visit) {
        self.group = group
        self.pages = pages
        self.visit = visit
    }

    public func get(_ path: RouterPath, _ handler: @escaping @Sendable (ConsoleVisit) async throws -> Response) {
        let visitOf = self.visit
        let pages = self.pages
        group.get(path) { request, context in
            await pages.answering(context) {
                guard let visit = try await visitOf(request, context) else {
                    return PageRenderer.redirect(ConsolePaths.signIn(returningTo: request, notice: nil))
                }
                return try await handler(visit)
            }
        }
    }

    /// A form handler; the body is read only for a live session (the cookie
    /// decides), up to `maximumBytes`, so a stranger's post costs no memory.
    public func post(
        _ path: RouterPath, maximumBytes: Int = FormInput.largestForm,
        _ handler: @escaping @Sendable (ConsoleVisit, FormInput) async throws -> Response
    ) {
        let visitOf = self.visit
        let pages = self.pages
        group.post(path) { request, context in
            await pages.answering(context) {
                guard let visit = try await visitOf(request, context) else {
                    return PageRenderer.redirect(ConsolePaths.signIn(returningTo: nil, notice: "ended"))
                }
                let form = try await FormInput.read(request, upTo: maximumBytes)
                guard let sent = form["csrf"], ConstantTime.equals(sent, visit.csrfToken) else {
                    return pages.page(
                        "message", title: "Form expired", visit: visit,
                        data: ["message": "This form was not sent from this session's own page. Reload the page and try again."],
                        status: .forbidden)
                }
                return try await handler(visit, form)
            }
        }
    }
}
