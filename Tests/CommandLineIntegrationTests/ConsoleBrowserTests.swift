import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

/// The console in a real browser: `Tests/Browser/console_browser_test.py`
/// drives headless Chromium (Debian's `chromium` and `chromium-driver`,
/// through selenium) against a gateway process over a fresh database: sign
/// in, create an app, generate and activate a key, add a user, get a token
/// from the public endpoint, validate it, see the issued row and the chart in
/// the audit page, then revoke the signed-in token and see the session end.
/// It also checks every page's fields have labels and fit a phone's width,
/// and leaves docs/admin.md's screenshots in `GATEWAY_TEST_SCREENSHOTS`.
@Suite struct ConsoleBrowserTests {
    @Test func theConsoleWorksInARealBrowser() async throws {
        let environment = ProcessInfo.processInfo.environment
        let python = try SuiteEnvironment.value("GATEWAY_TEST_BROWSER_PYTHON")
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let screenshots = environment["GATEWAY_TEST_SCREENSHOTS"] ?? root.appending(path: ".build/console-screenshots").path
        try await TestDatabase.with(migrations: []) { _, url in
            let bootstrap = AdminTokenSecret.generate().text
            let server = try await GatewayProcess.start(["serve"], environment: serveEnvironment(url, bootstrap: bootstrap))
            var childEnvironment = ["PATH": environment["PATH"] ?? "/usr/bin:/bin", "HOME": environment["HOME"] ?? "/tmp"]
            for name in ["GATEWAY_TEST_CHROMIUM", "GATEWAY_TEST_CHROMEDRIVER"] { childEnvironment[name] = environment[name] }
            let run = try await GatewayProcess.runProgram(
                python,
                [root.appending(path: "Tests/Browser/console_browser_test.py").path, "http://127.0.0.1:\(server.port)", bootstrap, screenshots],
                environment: childEnvironment)
            #expect(run.status == 0, "browser suite (exit \(run.status)):\n\(run.output)")
            #expect(run.output.contains("every step held"), "\(run.output)")
            #expect(!server.printed.contains(bootstrap), "the admin token never reaches the log")
            #expect(await server.stop() == 0)
        }
    }

    /// `console.enabled=false` serves no console route at all; the API stays.
    @Test func theConsoleCanBeTurnedOff() async throws {
        try await TestDatabase.with(migrations: []) { _, url in
            for enabled in [true, false] {
                var environment = serveEnvironment(url, bootstrap: AdminTokenSecret.generate().text)
                environment["GATEWAY_CONSOLE_ENABLED"] = "\(enabled)"
                let server = try await GatewayProcess.start(["serve"], environment: environment)
                let base = "http://127.0.0.1:\(server.port)"
                let signIn = try await HTTPCall.send("GET", "\(base)/console")
                #expect(signIn.status == (enabled ? 200 : 404), "console.enabled=\(enabled): \(signIn.status) \(signIn.text.prefix(300))")
                #expect(signIn.text.contains("Admin token") == enabled)
                #expect(try await HTTPCall.send("GET", "\(base)/console/assets/console.css").status == (enabled ? 200 : 404))
                #expect(try await HTTPCall.send("GET", "\(base)/admin/v1/me").status == 401, "the API is there either way")
                #expect(await server.stop() == 0)
            }
        }
    }
}
