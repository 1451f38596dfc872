import Foundation
import GatewayConsoleKit
import GatewayCore
import GatewayHTTP
import GatewayPluginKit
import HTTPTypes
import Hummingbird

/// `/console/sign-in` and `/console/sign-out`. The sign-in form is protected
/// by a double-submit value (a cookie of its own and the same value in the
/// form), since there is no session yet to tie a CSRF token to.
struct SignInPages: Sendable {
    let gate: SessionGate
    let pages: PageRenderer

    static let notices = [
        "ended": "Your session ended. Sign in again.",
        "signed_out": "You are signed out.",
    ]

    func addRoutes(to group: RouterGroup<GatewayRequestContext>, routes: ConsoleRoutes) {
        group.get("sign-in") { request, _ in
            let query = request.uri.queryParameters
            return form(
                request, next: query["next"].map(String.init),
                notice: query["notice"].flatMap { Self.notices[String($0)] }, error: nil, status: .ok)
        }
        group.post("sign-in") { request, context in
            await pages.answering(context) { try await signIn(request, context) }
        }
        routes.post("sign-out") { visit, _ in
            let clearing = try await gate.close(visit.request)
            return PageRenderer.redirect(
                "\(ConsolePaths.root)/sign-in?notice=signed_out", headers: [.setCookie: clearing])
        }
    }

    private func form(_ request: Request, next: String?, notice: String?, error: String?, status: HTTPResponse.Status)
        -> Response
    {
        let cookies = gate.cookies
        let value = cookies.value(named: cookies.signInName, in: request) ?? ConsoleCookies.randomValue()
        var data: [String: Any] = ["csrf": value, "next": SessionGate.safeReturnPath(next)]
        if let notice { data["notice"] = notice }
        if let error { data["error"] = error }
        return pages.page(
            "sign_in", title: "Sign in", visit: nil, data: data, status: status,
            headers: [.setCookie: cookies.setting(cookies.signInName, to: value, maxAge: .seconds(3600))])
    }

    private func signIn(_ request: Request, _ context: GatewayRequestContext) async throws -> Response {
        let form = try await FormInput.read(request, upTo: FormInput.largestSignIn)
        let cookies = gate.cookies
        let next = form["next"]
        guard let expected = cookies.value(named: cookies.signInName, in: request), let sent = form["csrf"],
            ConstantTime.equals(sent, expected)
        else {
            return self.form(
                request, next: next, notice: nil, error: "The sign-in form expired. Paste the token again.",
                status: .forbidden)
        }
        guard let text = form.text("token") else {
            return self.form(request, next: next, notice: nil, error: "Paste an admin token.", status: .badRequest)
        }
        let token = AdminTokenSecret(text: text)
        let me = await APIAnswer.read(await gate.api.call(.get, "/admin/v1/me", token: token, from: context))
        guard me.succeeded else {
            let message = me.status == .unauthorized
                ? "That admin token is unknown, revoked or expired." : me.errorMessage
            return self.form(request, next: next, notice: nil, error: message, status: me.status)
        }
        let expiresAt = me.string("expires_at").flatMap { try? Date($0, strategy: .iso8601) }
        let session = try await gate.open(token: token, tokenExpiresAt: expiresAt)
        var headers: HTTPFields = [.setCookie: session]
        headers.append(HTTPField(name: .setCookie, value: cookies.clearing(cookies.signInName)))
        return PageRenderer.redirect(SessionGate.safeReturnPath(next), headers: headers)
    }
}
