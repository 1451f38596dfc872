import Foundation
@testable import GatewayConsole
import GatewayConsoleKit
import GatewayCore
import Testing

/// What the console reads and writes itself, without a gateway: form
/// bodies, where a sign-in may send the browser back to, and the chart's
/// markup, which the page embeds unescaped.
@Suite struct ConsoleInputTests {
    @Test func formBodiesAreDecodedAsBrowsersEncodeThem() {
        let form = FormInput(encoded: "name=Corner+Shop&credential_types=password&credential_types=phone_code&empty=&note=a%2Bb%26c%3D&bad=%zz")
        #expect(form["name"] == "Corner Shop")
        #expect(form.all("credential_types") == ["password", "phone_code"])
        #expect(form["empty"] == "" && form.text("empty") == nil && form.isChecked("empty"))
        #expect(form["note"] == "a+b&c=")
        #expect(form["bad"] == "", "a broken escape is no value, not the raw text")
        #expect(form["missing"] == nil && !form.isChecked("missing"))
    }

    @Test func signInReturnsOnlyToConsolePages() {
        #expect(SessionGate.safeReturnPath("/console/apps/x/keys?notice=y") == "/console/apps/x/keys?notice=y")
        for hostile in ["//evil.example/console/", "https://evil.example/", "/console//evil.example", "/console/\\evil", "/admin/v1/apps",
                        "/console/a\r\nSet-Cookie: x=y", nil] as [String?] {
            #expect(SessionGate.safeReturnPath(hostile) == "/console", "\(hostile ?? "nil")")
        }
    }

    @Test func theChartEscapesEveryTextItDraws() throws {
        let json = try JSONDecoder().decode(JSONValue.self, from: Data(#"""
            {"minutes": [
              {"minute": "2026-01-01T10:00:00Z", "issued": 3, "denied": 2, "denied_by_reason": {"<script>alert(1)</script>": 2}},
              {"minute": "2026-01-01T10:01:00Z\" onload=\"x", "issued": 0, "denied": 0, "denied_by_reason": {}}
            ]}
            """#.utf8))
        let svg = AuditChart(json).svg()
        #expect(!svg.contains("<script>") && svg.contains("&lt;script&gt;"))
        #expect(!svg.contains(#"" onload=""#))
        #expect(svg.contains("3 issued, 2 denied"))
        #expect(AuditChart(.object([:])).svg().contains("0 issued, 0 denied"), "no data draws an empty chart, not an error")
    }

    @Test func theCSRFTokenBelongsToOneSession() {
        let first = ConsoleCookies.randomValue()
        let second = ConsoleCookies.randomValue()
        #expect(first != second && first.count == 43)
        #expect(ConsoleCookies.csrfToken(for: first) == ConsoleCookies.csrfToken(for: first))
        #expect(ConsoleCookies.csrfToken(for: first) != ConsoleCookies.csrfToken(for: second))
        #expect(ConsoleCookies.csrfToken(for: first) != first)
    }
}
