import Foundation
import GatewayConsole
import GatewayCore
import GatewayHTTPTestSupport
import GatewayPluginKit
import GatewayTestSupport
import HTTPTypes
import HummingbirdTesting
import Testing

/// When the database is away, the console answers pages, not JSON: the
/// status the API would give (503, `Retry-After` where it has one), in the
/// console's own markup, and no session is opened or lost on the way.
@Suite struct ConsoleOutageTests {
    @Test func aLostDatabaseIsAnErrorPageWithTheAPIsStatus() async throws {
        let plugins = TestGateway.staticUsersOnly
        let gateway = MemoryGateway(plugins: plugins) { stores, masterKey in
            [try Console(settings: ConsoleSettings(), sessions: stores.consoleSessions, masterKey: masterKey, plugins: plugins)]
        }
        let secret = AdminTokenSecret.generate()
        let record = AdminTokenRecord(name: "ops", scope: .operator)
        try await gateway.memory.stores.adminTokens.create(
            record, secret: secret, recording: AuditEvent(appID: nil, event: "test.setup", outcome: .success, requestID: "setup"))
        try await gateway.application.test(.router) { client in
            var browser = ConsoleBrowser(client)
            try await browser.signIn(secret.text)
            #expect(try await browser.get("/console/apps").status == .ok)

            gateway.memory.failing = true
            var stranger = ConsoleBrowser(client)
            try await stranger.get("/console/sign-in")
            for response in [
                try await browser.get("/console/apps"),
                try await browser.post("/console/apps", [("name", "Shop"), ("credential_types", "static")]),
                try await stranger.post("/console/sign-in", [("token", secret.text)]),
            ] {
                #expect(response.status == .serviceUnavailable)
                #expect(response.headers[.contentType] == "text/html; charset=utf-8")
                #expect(text(response).contains("temporarily unavailable"), "\(text(response))")
                #expect(!response.headers[values: .setCookie].contains { $0.hasPrefix("gateway_console=") }, "no session opened or ended")
            }

            gateway.memory.failing = false
            #expect(try await browser.get("/console/apps").status == .ok, "the session outlived the outage")
        }
    }
}
