import Foundation
import GatewayCore
import GatewayTestSupport
import Testing

/// Schemathesis drives every operation of `openapi.yaml` against a running
/// gateway: examples, boundary values, schema-invalid input and sequences of
/// calls (create, read, change, delete), once with an operator token and once
/// with an app-scoped one. Every answer must be documented (status, content
/// type, body schema, headers), no answer may be a 5xx, none may take longer
/// than the database timeout (plus 2 s of scheduling, as the suite shares the
/// cores; key generation has its own bound), and input the schema refuses
/// must be refused.
///
/// The run's size is `GATEWAY_TEST_SCHEMATHESIS_EXAMPLES` examples per
/// operation and phase (`./scripts/test --api-examples N`).
@Suite struct SchemaDrivenAPITests {
    /// 5 s: at 2 s, a run on a host with 5-25 % CPU steal, sharing two cores
    /// with every other suite, got one 503 from a database step that waited
    /// longer (twice in a day here); the answer was right, the bound too tight.
    static let databaseTimeoutMilliseconds = 5000

    @Test func everyOperationAnswersAsTheSpecificationSaysForOperatorsAndAppAdmins() async throws {
        let environment = ProcessInfo.processInfo.environment
        let schemathesis = try SuiteEnvironment.value("GATEWAY_TEST_SCHEMATHESIS")
        let examples = Int(environment["GATEWAY_TEST_SCHEMATHESIS_EXAMPLES"] ?? "") ?? 50
        try await TestDatabase.with(migrations: []) { _, url in
            let bootstrap = AdminTokenSecret.generate().text
            let server = try await GatewayProcess.start(
                ["serve"],
                environment: serveEnvironment(
                    url, bootstrap: bootstrap, databaseTimeoutMs: Self.databaseTimeoutMilliseconds
                ).merging(Self.roomyAdminLimits) { $1 })
            let base = "http://127.0.0.1:\(server.port)"
            let seeded = try await Self.seed(base, bootstrap: bootstrap)
            let keptTokens = [seeded.operatorTokenID, seeded.appTokenID]
            // The two callers run at once, each in a process of its own with one
            // worker: Hypothesis's caches and Python 3.11's ast module are not
            // thread-safe, and two workers in one process crashed inside them.
            try await withThrowingTaskGroup(of: (String, Run).self) { group in
                for (caller, token) in [("operator", seeded.operatorToken), ("app admin", seeded.appToken)] {
                    group.addTask {
                        let run = try await Self.run(
                            schemathesis, base: base, token: token, keptTokens: keptTokens, keptApp: seeded.appID,
                            examples: examples, configuration: seeded.configuration)
                        return (caller, run)
                    }
                }
                for try await (caller, run) in group {
                    if run.status != 0 && run.isOnlyHypothesisInternalErrors {
                        // Hypothesis 6.170 has crashed inside itself (its shrinker,
                        // before hooks.py switched targeting off); no check failed,
                        // so that is the tool's fault, not the gateway's.
                        withKnownIssue("Hypothesis internal error", isIntermittent: true) {
                            Issue.record("schemathesis as \(caller):\n\(run.report)")
                        }
                    } else {
                        #expect(run.status == 0, "schemathesis as \(caller) (exit \(run.status)):\n\(run.report)")
                    }
                    let operations = try Self.operationCount()
                    #expect(run.output.contains("Selected: \(operations)/\(operations)"), "every operation was selected:\n\(run.report)")
                }
            }
            #expect(await server.stop() == 0)
        }
    }

    /// The admin and validation limits raised far above what the run sends
    /// (they are tested where they are the subject): at their defaults the
    /// run would spend most examples on 429s instead of exploring.
    static let roomyAdminLimits = Dictionary(
        uniqueKeysWithValues: ["ADMIN_WORK_TOKEN", "ADMIN_WORK_APP", "ADMIN_AUTH_FAILURES_IP", "VALIDATE_IP"].map {
            ("GATEWAY_RATE_LIMITS_\($0)_LIMIT", "1000000")
        })

    /// The operations `openapi.yaml` lists: a method under a path, before `components:`.
    static func operationCount() throws -> Int {
        let document = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appending(path: "openapi.yaml")
        let text = try String(contentsOf: document, encoding: .utf8)
        let paths = text.components(separatedBy: "\ncomponents:")[0]
        let methods: Set<Substring> = ["    get:", "    post:", "    put:", "    patch:", "    delete:"]
        return paths.split(separator: "\n").filter { methods.contains($0) }.count
    }

    /// Only Hypothesis's own crashes are forgiven: a failed health check or
    /// an error raised by the gateway's answer still fails the run.
    @Test func onlyCrashesInsideHypothesisAreForgiven() {
        func report(_ errors: String...) -> Run {
            Run(status: 1, output: "progress\n  === ERRORS ====\n" + errors.joined() + "  ==== WARNINGS ====\n  x\n  ==== SUMMARY ====\n  Runtime Error: 1\n")
        }
        let crash = """
              ____ GET /admin/v1/apps/{app_id} ____
              Runtime Error
                  Traceback (most recent call last):
                    File "/v/site-packages/schemathesis/engine/run.py", line 51, in run_test
                    File "/v/site-packages/hypothesis/internal/conjecture/data.py", line 579, in __getitem__
                  IndexError: Index 145 out of range [-142, 142)

            """
        let healthCheck = """
              ____ DELETE /admin/v1/apps/{app_id} ____
              Failed Health Check
              Too many generated examples are filtered out for this operation

            """
        let hookError = """
              ____ GET /admin/v1/audit_events ____
              Runtime Error
                  Traceback (most recent call last):
                    File "/v/site-packages/hypothesis/core.py", line 2282, in wrapped_test
                    File "/t/Tests/Schemathesis/hooks.py", line 37, in audit_event_lines
                  ValueError: line 1 is not an AuditEvent

            """
        #expect(report(crash).isOnlyHypothesisInternalErrors)
        #expect(report(crash, crash).isOnlyHypothesisInternalErrors)
        #expect(!report(healthCheck).isOnlyHypothesisInternalErrors)
        #expect(!report(crash, healthCheck).isOnlyHypothesisInternalErrors)
        #expect(!report(hookError).isOnlyHypothesisInternalErrors)
        #expect(!Run(status: 1, output: "  === FAILURES ===\n" + crash).isOnlyHypothesisInternalErrors)
    }

    struct Seeded {
        let operatorToken: String
        let operatorTokenID: String
        let appToken: String
        let appTokenID: String
        let appID: String
        let configuration: String
    }

    /// An app of every plugin, with a key, a password user and a bound
    /// number, and tokens for the two runs. The run's path and body
    /// parameters name these most of the time, so calls reach past the 404.
    static func seed(_ base: String, bootstrap: String) async throws -> Seeded {
        func send(_ method: String, _ path: String, token: String, json: [String: any Sendable]? = nil) async throws
            -> HTTPCall.Answer
        {
            let answer = try await HTTPCall.send(method, base + path, token: token, json: json)
            #expect((200..<300).contains(answer.status), "\(method) \(path): \(answer.text)")
            return answer
        }
        let minted = try await send("POST", "/admin/v1/admin_tokens", token: bootstrap, json: ["name": "schemathesis", "scope": "operator"])
        let operatorToken = try #require(minted.json["token"] as? String)
        let appID = UUID().lowercasedText
        let keyID = UUID().lowercasedText
        let plugins: [String: any Sendable] = [
            "static": ["allow_any_user": true],
            "phone_code": [
                "sender": ["type": "log"], "test_numbers": [["phone_number": "+15550000001", "code": "123456"]],
            ] as [String: any Sendable],
        ]
        _ = try await send(
            "POST", "/admin/v1/apps", token: operatorToken,
            json: [
                "app_id": appID, "name": "schemathesis", "environment": "development", "provider_id": UUID().uuidString,
                "credential_types": ["static", "password", "phone_code"], "plugins": plugins,
                // Limits high enough that the token routes mostly answer past the 429.
                "rate_limits": Dictionary(
                    uniqueKeysWithValues: ["ip", "app", "user_failures", "phone_failures", "code_sends_number", "code_sends_ip"]
                        .map { ($0, ["limit": 1_000_000, "period_seconds": 1]) }),
            ])
        _ = try await send("POST", "/admin/v1/apps/\(appID)/keys", token: operatorToken, json: ["key_id": keyID, "generate": [:] as [String: Int]])
        _ = try await send("PUT", "/admin/v1/apps/\(appID)/users/ada", token: operatorToken, json: ["password": "correct horse battery"])
        _ = try await send("PUT", "/admin/v1/apps/\(appID)/phone_numbers/%2B15550000001", token: operatorToken, json: ["user_id": "ada"])
        let appMinted = try await send("POST", "/admin/v1/admin_tokens", token: operatorToken, json: ["name": "schemathesis app", "scope": "app:\(appID)"])
        // The app the delete operation names: deleting the seeded one is
        // filtered out (hooks.py), and a filter that refuses most of an
        // operation's cases fails Hypothesis's health check.
        let spareAppID = UUID().lowercasedText
        _ = try await send(
            "POST", "/admin/v1/apps", token: operatorToken,
            json: [
                "app_id": spareAppID, "name": "spare", "environment": "development", "provider_id": UUID().uuidString,
                "credential_types": ["static"],
            ])
        let configuration = """
            [dictionaries]
            app = { values = ["\(appID)", "layer:///apps/staging/\(appID)"] }
            spare_app = { values = ["\(spareAppID)", "layer:///apps/staging/\(spareAppID)"] }
            key = { values = ["\(keyID)", "layer:///keys/\(keyID)"] }
            user = { values = ["ada"] }
            phone = { values = ["+15550000001"] }

            [parameters]
            "path.app_id" = { dictionary = "app", probability = 0.7 }
            "path.key_id" = { dictionary = "key", probability = 0.5 }
            "path.user_id" = { dictionary = "user", probability = 0.5 }
            "path.phone_number" = { dictionary = "phone", probability = 0.5 }
            "body.app_id" = { dictionary = "app", probability = 0.5 }
            "query.app_id" = { dictionary = "app", probability = 0.5 }

            # The database timeout, plus 2 s for scheduling: in ./scripts/test
            # the gateway shares two cores with every other suite.
            [checks]
            max_response_time = \(Double(databaseTimeoutMilliseconds) / 1000 + 2)
            # A body over the size limit is refused before it is read, with the
            # 413 every POST documents; schemathesis's list of refusals lacks it.
            negative_data_rejection.expected-statuses = [
                "400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428", "429", "5xx",
            ]

            # Generating a 4096-bit key is seconds of CPU by nature, bounded
            # by its own queue (one runs, two wait), not by the database.
            [[operations]]
            include-operation-id = "createKey"
            checks.max_response_time = 30.0

            # An import reports and skips each bad line in its 200 (openapi.yaml
            # says so): a line the schema refuses is not a refused request.
            [[operations]]
            include-operation-id = "importUsers"
            checks.negative_data_rejection.enabled = false

            # Revoking a user's sessions ends them; the list of the user's
            # sessions stays (openapi.yaml: it then holds no live one), so a
            # GET after the DELETE is 200 by design, not a deleted resource.
            [[operations]]
            include-operation-id = "revokeUserSessions"
            checks.use_after_free.enabled = false

            [[operations]]
            include-operation-id = "deleteApp"
            parameters = { "path.app_id" = { dictionary = "spare_app", probability = 0.7 } }

            """
        return Seeded(
            operatorToken: operatorToken, operatorTokenID: try #require(minted.json["id"] as? String),
            appToken: try #require(appMinted.json["token"] as? String), appTokenID: try #require(appMinted.json["id"] as? String),
            appID: appID, configuration: configuration)
    }

    struct Run {
        let status: Int32
        let output: String
        /// Errors only (no check failed), each a runtime error whose
        /// innermost frame is inside Hypothesis itself.
        var isOnlyHypothesisInternalErrors: Bool {
            guard !output.contains("=== FAILURES ==="), output.contains("=== ERRORS ===") else { return false }
            let section = output.split(separator: "\n", omittingEmptySubsequences: false)
                .drop { !$0.contains("=== ERRORS ===") }.dropFirst()
                .prefix { !$0.contains("=== WARNINGS ===") && !$0.contains("=== SUMMARY ===") }
            // Each error starts with a "____ METHOD /path ____" title line.
            let errors = section.split { $0.trimmingCharacters(in: .whitespaces).hasPrefix("____") }
                .filter { lines in lines.contains { !$0.trimmingCharacters(in: .whitespaces).isEmpty } }
            return !errors.isEmpty
                && errors.allSatisfy { lines in
                    lines.contains { $0.contains("Runtime Error") }
                        && lines.last { $0.trimmingCharacters(in: .whitespaces).hasPrefix("File \"") }?
                            .contains("site-packages/hypothesis/") == true
                }
        }

        /// The failures and the summary, without the progress lines; a line
        /// longer than 1 000 characters (a traceback can print a whole source
        /// file) is cut, so the summary stays in view.
        var report: String {
            let starts = ["=== ERRORS ===", "=== FAILURES ===", "=== SUMMARY ==="].compactMap {
                output.range(of: $0)?.lowerBound
            }
            guard let start = starts.min() else { return String(output.suffix(20_000)) }
            let lines = output[start...].split(separator: "\n", omittingEmptySubsequences: false)
                .map { $0.count > 1_000 ? $0.prefix(1_000) + " [cut]" : $0 }
            return String(lines.joined(separator: "\n").prefix(40_000))
        }
    }

    static func run(
        _ schemathesis: String, base: String, token: String, keptTokens: [String], keptApp: String, examples: Int,
        configuration: String
    ) async throws -> Run {
        let folder = FileManager.default.temporaryDirectory.appending(path: "schemathesis-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try configuration.write(to: folder.appending(path: "schemathesis.toml"), atomically: true, encoding: .utf8)
        let hooks = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appending(path: "Schemathesis")
        let document = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appending(path: "openapi.yaml")
        // env -C: schemathesis keeps its example database in the working directory.
        let run = try await GatewayProcess.runProgram(
            "/usr/bin/env",
            [
                "-C", folder.path, schemathesis, "--config-file", folder.appending(path: "schemathesis.toml").path, "run",
                document.path, "--url", base, "--header", "Authorization: Bearer \(token)", "--max-examples", "\(examples)",
                // Every check runs unless configured off (`--checks all` or
                // `--max-response-time` would overrule the per-operation
                // settings in schemathesis.toml).
                // Not every schema-valid value is accepted: a byte limit, a name of spaces, a password
                // under the app's minimum. The schema cannot say those; every refusal is a documented 400.
                "--exclude-checks", "positive_data_acceptance",
                // A failure is reported as found: Hypothesis's shrinker has crashed, and must not hide one.
                "--no-shrink",
                "--workers", "1", "--no-color", "--output-truncate", "false",
            ],
            environment: [
                "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin", "HOME": folder.path,
                "PYTHONPATH": hooks.path, "SCHEMATHESIS_HOOKS": "hooks", "GATEWAY_ST_KEPT_TOKEN_IDS": keptTokens.joined(separator: ","),
                "GATEWAY_ST_KEPT_APP_ID": keptApp,
            ],
            // About 380 s for 50 examples on two cores; the limit grows with a longer run.
            limit: .seconds(max(900, examples * 18)))
        return Run(status: run.status, output: run.output)
    }
}
