import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

/// The gateway's TOTP (issue 60) judged by others: pyotp (its URI parser and
/// its codes) and Debian's oathtool; the gateway's matching tried on pyotp's
/// codes, never on its own.
@Suite struct TOTPVendorTests {
    /// pyotp reads the URI back to the same secret, issuer and account (the
    /// characters it would decode twice made spaces), and
    /// computes the same codes; the gateway takes pyotp's codes one step
    /// either way, each step once, and nothing further off.
    @Test func pyotpAgreesAndItsCodesAreTakenOnceWithinOneStep() async throws {
        let python = try SuiteEnvironment.value("GATEWAY_TEST_VENDOR_PYTHON")
        let now = Date()
        for _ in 0..<3 {
            let secret = TOTPSecret.generate()
            let account = "corp:ada lovelace@example.com"
            let uri = secret.uri(issuer: "Acme: Chat & Co", account: account + "#1")
            let moments = [0, 59, 1_111_111_109, 1_234_567_890] + (0..<40).map { _ in Int.random(in: 1_600_000_000...2_100_000_000) }
            let codes = moments.map { [$0, TOTP.code(secret, step: TOTP.step(at: Date(timeIntervalSince1970: Double($0))))] as [Any] }
            let verdict = try await Self.judge(
                python,
                [
                    "secret": secret.base32, "issuer": "Acme Chat Co", "account": account + " 1", "uri": uri, "codes": codes,
                    "now": Int(now.timeIntervalSince1970),
                ])
            let pyotpCodes = try #require(try JSONSerialization.jsonObject(with: Data(verdict.utf8)) as? [String: String], "\(verdict)")
            let step = TOTP.step(at: now)
            for offset in [-2, 2] {
                #expect(TOTP.acceptedStep(of: pyotpCodes["\(offset)"]!, for: secret, at: now, after: nil) == nil, "\(offset) steps away")
            }
            for offset in [-1, 0, 1] {
                #expect(TOTP.acceptedStep(of: pyotpCodes["\(offset)"]!, for: secret, at: now, after: nil) == step + Int64(offset))
            }
            // Once a step is taken, neither it nor an earlier one is taken again; a later one is.
            #expect(TOTP.acceptedStep(of: pyotpCodes["0"]!, for: secret, at: now, after: step) == nil)
            #expect(TOTP.acceptedStep(of: pyotpCodes["-1"]!, for: secret, at: now, after: step) == nil)
            #expect(TOTP.acceptedStep(of: pyotpCodes["1"]!, for: secret, at: now, after: step) == step + 1)
        }
    }

    /// Debian's oathtool, given the base32 secret and a moment, shows the same code.
    @Test func oathtoolShowsTheSameCodes() async throws {
        let oathtool = try SuiteEnvironment.value("GATEWAY_TEST_OATHTOOL")
        let secret = TOTPSecret.generate()
        for moment in [1_111_111_109, Int(Date().timeIntervalSince1970)] {
            let shown = try await GatewayProcess.runProgram(
                oathtool, ["--totp", "--base32", secret.base32, "--now", "@\(moment)"], environment: [:])
            #expect(shown.status == 0, "\(shown.output)")
            let expected = TOTP.code(secret, step: TOTP.step(at: Date(timeIntervalSince1970: Double(moment))))
            #expect(shown.output.trimmingCharacters(in: .whitespacesAndNewlines) == expected, "at \(moment)")
        }
    }

    /// Runs Tests/Vendors/totp_judge.py on `case` and returns what it printed, failing the test if it refused.
    private static func judge(_ python: String, _ case: [String: Any]) async throws -> String {
        let file = FileManager.default.temporaryDirectory.appending(path: "totp-case-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try JSONSerialization.data(withJSONObject: `case`).write(to: file)
        let run = try await GatewayProcess.runProgram(
            python, [Repository.path("Tests/Vendors/totp_judge.py"), file.path],
            environment: ["PATH": "/usr/bin:/bin", "HOME": NSTemporaryDirectory()])
        #expect(run.status == 0, "pyotp refused (exit \(run.status)):\n\(run.output)")
        return run.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
