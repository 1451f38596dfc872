import Foundation
import GatewayCore
import GatewayHTTP
import GatewayPluginKit
import HTTPTypes
import Hummingbird
import NIOCore

/// Registers console pages behind the session: a page without a live
/// session goes to sign-in; a form post without the session's CSRF token
/// is refused with 403 before anything else happens.
struct ConsoleRoutes {
    let group: RouterGroup<GatewayRequestContext>
    let gate: SessionGate
    let pages: PageRenderer

    func get(_ path: RouterPath, _ handler: @escaping @Sendable (ConsoleVisit) async throws -> Response) {
        let gate = self.gate
        let pages = self.pages
        group.get(path) { request, context in
            await pages.answering(context) {
                guard let visit = try await gate.visit(request, context) else {
                    return PageRenderer.redirect(SessionGate.signInPath(returningTo: request, notice: nil))
                }
                return try await handler(visit)
            }
        }
    }

    /// A form handler; the body is read only for a live session (the cookie
    /// decides), up to `maximumBytes`, so a stranger's post costs no memory.
    func post(
        _ path: RouterPath, maximumBytes: Int = FormInput.largestForm,
        _ handler: @escaping @Sendable (ConsoleVisit, FormInput) async throws -> Response
    ) {
        let gate = self.gate
        let pages = self.pages
        group.post(path) { request, context in
            await pages.answering(context) {
                guard let visit = try await gate.visit(request, context) else {
                    return PageRenderer.redirect(SessionGate.signInPath(returningTo: nil, notice: "ended"))
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
