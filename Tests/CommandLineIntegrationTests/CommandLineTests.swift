import Foundation
import GatewayCore
import GatewayPostgres
import GatewayTestSupport
import PostgresNIO
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The binary as an operator runs it: configuration errors, `migrate`, and
/// `serve` answering a real HTTP request.
@Suite struct CommandLineTests {
    let masterKey = MasterKey.generateBase64()

    @Test func badConfigurationStopsTheStartWithOneLinePerProblem() async throws {
        let exit = try await GatewayProcess.run(
            ["serve"],
            environment: [
                "GATEWAY_HTTP_PORT": "80000", "GATEWAY_LOG_LEVEL": "loud", "GATEWAY_MIGRATE_ON_START": "maybe",
                "GATEWAY_MASTER_KEY": "c2hvcnQ=", "GATEWAY_PASSWORD_HASH_CONCURRENCY": "-1",
                "GATEWAY_PASSWORD_HASH_QUEUE_LIMIT": "lots", "GATEWAY_LOG_FORMAT": "xml", "GATEWAY_SHUTDOWN_GRACE_SECONDS": "0",
                "GATEWAY_DATABASE_MAX_CONNECTIONS": "5", "GATEWAY_DATABASE_MIN_CONNECTIONS": "8",
                "GATEWAY_DATABASE_KEEPALIVE_SECONDS": "often", "GATEWAY_MASTER_KEY_PREVIOUS": "bm90IGEga2V5",
                "GATEWAY_HTTP_IDLE_TIMEOUT_SECONDS": "0",
                // Read by the plugins themselves (PluginSetup), reported in the same list.
                "GATEWAY_PASSWORD_MAX_MEMORY_KIB": "1", "GATEWAY_SMS_ALLOW_PRIVATE_ADDRESSES": "perhaps",
                "GATEWAY_RATE_LIMITS_CODE_SENDS_IP_LIMIT": "0",
            ])
        #expect(exit.status != 0)
        for expected in [
            "database.url (GATEWAY_DATABASE_URL) is required",
            "http.port (GATEWAY_HTTP_PORT): '80000' is not a whole number in 0...65535",
            "log.level (GATEWAY_LOG_LEVEL): 'loud' is not one of",
            "migrate_on_start (GATEWAY_MIGRATE_ON_START): 'maybe' is not true or false",
            "master_key (GATEWAY_MASTER_KEY): the master key must be 32 random bytes",
            "password.hash_concurrency (GATEWAY_PASSWORD_HASH_CONCURRENCY): '-1' is not a whole number in 0...256",
            "password.hash_queue_limit (GATEWAY_PASSWORD_HASH_QUEUE_LIMIT): 'lots' is not a whole number",
            "log.format (GATEWAY_LOG_FORMAT): 'xml' is not json or text",
            "shutdown.grace_seconds (GATEWAY_SHUTDOWN_GRACE_SECONDS): '0' is not a whole number in 1...3600",
            "database.min_connections (GATEWAY_DATABASE_MIN_CONNECTIONS) is no longer read",
            "database.keepalive_seconds (GATEWAY_DATABASE_KEEPALIVE_SECONDS): 'often' is not a whole number in 0...3600",
            "master_key_previous (GATEWAY_MASTER_KEY_PREVIOUS): the master key must be 32 random bytes",
            "http.idle_timeout_seconds (GATEWAY_HTTP_IDLE_TIMEOUT_SECONDS): '0' is not a whole number in 1...3600",
            "password.max_memory_kib (GATEWAY_PASSWORD_MAX_MEMORY_KIB): '1' is not a whole number in 8192...1048576",
            "sms.allow_private_addresses (GATEWAY_SMS_ALLOW_PRIVATE_ADDRESSES): 'perhaps' is not true or false",
            "rate_limits.code_sends_ip.limit (GATEWAY_RATE_LIMITS_CODE_SENDS_IP_LIMIT): '0' is not a whole number in 1...1000000",
        ] {
            #expect(exit.output.contains(expected), "missing: \(expected)\n\(exit.output)")
        }
        #expect(!exit.output.contains("c2hvcnQ="))
        #expect(!exit.output.contains("bm90IGEga2V5"))
    }

    @Test func calibrateArgon2MeasuresThroughputAndRefusesCostsOutOfBounds() async throws {
        let measured = try await GatewayProcess.run(
            ["calibrate-argon2", "--throughput-seconds", "0.3", "--threads", "1", "--memory-kib", "8192", "--iterations", "1"])
        #expect(measured.status == 0, "\(measured.output)")
        let json = try #require(measured.output.split(separator: "\n").last { $0.hasPrefix("{") })
        let figures = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(figures["memory_kib"] as? Int == 8192)
        #expect((figures["verifications_per_second"] as? Double ?? 0) > 0)
        let refused = try await GatewayProcess.run(["calibrate-argon2", "--throughput-seconds", "1", "--memory-kib", "1024"])
        #expect(refused.status != 0)
        #expect(refused.output.contains("--memory-kib must be in"))
    }

    /// The default mode is production: no static test users, no `log` SMS
    /// sender, even for development apps. Secrets come from files here.
    @Test func productionModeRefusesTestFeaturesAndSecretsComeFromFiles() async throws {
        try await TestDatabase.with(migrations: []) { _, url in
            let folder = FileManager.default.temporaryDirectory.appending(path: "secrets-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let bootstrap = AdminTokenSecret.generate().text
            for (name, value) in [("url", url), ("key", masterKey), ("bootstrap", bootstrap)] {
                try Data((value + "\n").utf8).write(to: folder.appending(path: name))
            }
            let server = try await GatewayProcess.start(
                ["serve"],
                environment: [
                    "GATEWAY_DATABASE_URL_FILE": folder.appending(path: "url").path,
                    "GATEWAY_MASTER_KEY_FILE": folder.appending(path: "key").path,
                    "GATEWAY_ADMIN_BOOTSTRAP_TOKEN_FILE": folder.appending(path: "bootstrap").path,
                    // Production serves /metrics on a port of its own: a free one here, beside other tests.
                    "GATEWAY_HTTP_PORT": "0", "GATEWAY_MIGRATE_ON_START": "true", "GATEWAY_METRICS_PORT": "0",
                ],
                listeners: 2)
            var mainPort = server.ports[0]
            if try await HTTPCall.send("GET", "http://127.0.0.1:\(mainPort)/healthz").status != 200 { mainPort = server.ports[1] }
            let base = "http://127.0.0.1:\(mainPort)"
            func create(_ types: [String], _ plugins: [String: any Sendable]) async throws -> HTTPCall.Answer {
                try await HTTPCall.send(
                    "POST", "\(base)/admin/v1/apps", token: bootstrap,
                    json: [
                        "app_id": UUID().uuidString, "name": "mode", "environment": "development",
                        "provider_id": UUID().uuidString, "credential_types": types, "plugins": plugins,
                    ])
            }
            let staticApp = try await create(["static"], [:])
            #expect(staticApp.status == 400)
            #expect(staticApp.text.contains("'static' is not offered by this gateway"))
            let logSender = try await create(["phone_code"], ["phone_code": ["sender": ["type": "log"]]])
            #expect(logSender.status == 400)
            #expect(logSender.text.contains("production mode"))
            #expect(try await create(["password"], [:]).status == 201)
            // Production's console is for browsers on TLS (a terminating proxy): Secure, __Host- cookies and HSTS.
            let signIn = try await HTTPCall.send("GET", "\(base)/console/sign-in")
            #expect(signIn.status == 200)
            #expect(signIn.headers["set-cookie"]?.hasPrefix("__Host-gateway_console_sign_in=") == true, "\(signIn.headers)")
            #expect(signIn.headers["set-cookie"]?.contains("; Secure") == true)
            #expect(signIn.headers["strict-transport-security"] == "max-age=31536000")
            #expect(await server.stop() == 0)
            #expect(!server.printed.contains(bootstrap))
        }
    }

    @Test func serveRequiresAMasterKey() async throws {
        let exit = try await GatewayProcess.run(
            ["serve"], environment: ["GATEWAY_DATABASE_URL": "postgres://u:p@127.0.0.1:1/d"])
        #expect(exit.status != 0)
        #expect(exit.output.contains("master_key (GATEWAY_MASTER_KEY) or master_key_file"))
    }

    @Test func migrateAppliesOnceAndServeRefusesAStaleSchema() async throws {
        try await TestDatabase.with(migrations: []) { _, url in
            let environment = ["GATEWAY_DATABASE_URL": url, "GATEWAY_MASTER_KEY": masterKey, "GATEWAY_METRICS_PORT": "0"]
            let stale = try await GatewayProcess.run(["serve"], environment: environment)
            #expect(stale.status != 0)
            #expect(stale.messages.contains("run `identity-gateway migrate`"), "\(stale.output)")

            let first = try await GatewayProcess.run(["migrate"], environment: environment)
            #expect(first.status == 0)
            #expect(first.output.contains("applied: core/0001_initial.sql"))
            let second = try await GatewayProcess.run(["migrate"], environment: environment)
            #expect(second.status == 0)
            #expect(second.output.contains("schema is current"))
        }
    }

    /// `migrate --check` and `serve` against a database behind this binary,
    /// current, ahead by a newer release's expansion (a rolling upgrade: this
    /// binary serves it), and ahead by a contraction (it refuses, saying so).
    @Test func migrateCheckSaysWhetherThisBinaryCanServeTheDatabase() async throws {
        try await TestDatabase.with(migrations: []) { client, url in
            let bootstrap = AdminTokenSecret.generate().text
            let environment = serveEnvironment(url, bootstrap: bootstrap).merging(["GATEWAY_MIGRATE_ON_START": "false"]) { $1 }
            let behind = try await GatewayProcess.run(["migrate", "--check"], environment: environment)
            #expect(behind.status == 1, "\(behind.output)")
            #expect(behind.messages.contains("database schema: behind by"), "\(behind.output)")
            #expect(behind.messages.contains("would apply: core/0001_initial.sql (expands)"), "\(behind.output)")
            #expect(behind.messages.contains("this binary can serve it once migrated"), "\(behind.output)")
            #expect(try await GatewayProcess.run(["migrate"], environment: environment).status == 0)
            let current = try await GatewayProcess.run(["migrate", "--check"], environment: environment)
            #expect(current.status == 0, "\(current.output)")
            #expect(current.messages.contains("database schema: current"), "\(current.output)")

            // A newer release added a table: this binary serves on, and says so.
            @Sendable func recordANewerRelease(_ name: String, expandsOnly: Bool) async throws {
                try await client.query(
                    "INSERT INTO schema_migrations (source, name, checksum, expands_only) VALUES ('core', \(name), 'x', \(expandsOnly))",
                    logger: TestDatabase.logger)
            }
            try await recordANewerRelease("9999_a_newer_table.sql", expandsOnly: true)
            let ahead = try await GatewayProcess.run(["migrate", "--check"], environment: environment)
            #expect(ahead.status == 0, "\(ahead.output)")
            #expect(ahead.messages.contains("applied by a newer release: core/9999_a_newer_table.sql (expands)"), "\(ahead.output)")
            let server = try await GatewayProcess.start(["serve"], environment: environment)
            #expect(server.printed.contains("ahead by 1 migration(s) a newer release applied"))
            #expect(await server.stop() == 0)

            // ...and then dropped a column this release reads: it refuses to start.
            try await recordANewerRelease("9999_b_dropped_a_column.sql", expandsOnly: false)
            let tooNew = try await GatewayProcess.run(["migrate", "--check"], environment: environment)
            #expect(tooNew.status == 2, "\(tooNew.output)")
            #expect(tooNew.messages.contains("this binary cannot serve it"), "\(tooNew.output)")
            let refused = try await GatewayProcess.run(["serve"], environment: environment)
            #expect(refused.status != 0)
            #expect(refused.messages.contains("too new for this binary: core/9999_b_dropped_a_column.sql"), "\(refused.output)")
        }
    }

    @Test func serveReadsAYAMLFileUnderTheEnvironmentAndIssuesTokens() async throws {
        try await TestDatabase.with(migrations: []) { client, url in
            let folder = FileManager.default.temporaryDirectory.appending(path: "gateway-config-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let keyFile = folder.appending(path: "master.key")
            try Data(masterKey.utf8).write(to: keyFile)
            let configFile = folder.appending(path: "gateway.yaml")
            try Data(
                """
                database:
                  url: "postgres://nobody@127.0.0.1:1/nothing"
                http:
                  port: 1
                master_key_file: \(keyFile.path)
                migrate_on_start: true
                mode: development
                log:
                  level: info
                """.utf8
            ).write(to: configFile)

            // The environment wins over the file for the URL and the port.
            let server = try await GatewayProcess.start(
                ["serve", "--config", configFile.path],
                // A generous timeout: a loaded CI machine must not turn slow statements into 503s.
                environment: ["GATEWAY_DATABASE_URL": url, "GATEWAY_HTTP_PORT": "0", "GATEWAY_DATABASE_REQUEST_TIMEOUT_MS": "10000"])
            defer { Task { await server.stop() } }

            let app = AppSettings(
                appID: AppID(uuid: UUID()), name: "cli", environment: .development, providerID: ProviderID(uuid: UUID()),
                credentialTypes: ["static"], plugins: ["static": .object(["allow_any_user": .bool(true)])])
            try await AppRepository(client: client, logger: TestDatabase.logger).insert(app)
            try await AppKeyRepository(client: client, logger: TestDatabase.logger).insert(
                StoredKey(
                    appID: app.appID, keyID: KeyID(uuid: UUID()), status: .active, pair: TestKeys.shared,
                    masterKey: try MasterKey(base64: masterKey)))

            var request = URLRequest(url: URL(string: "http://127.0.0.1:\(server.port)/v1/identity_tokens")!)
            request.httpMethod = "POST"
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            request.httpBody = Data(#"{"app_id":"\#(app.appID)","user_id":"dana","nonce":"abc+/=123"}"#.utf8)
            let (data, response) = try await URLSession.shared.data(for: request)
            #expect((response as? HTTPURLResponse)?.statusCode == 200)
            let body = try #require(try JSONSerialization.jsonObject(with: data) as? [String: String])
            let token = try #require(body["identity_token"].flatMap(ParsedIdentityToken.init(compact:)))
            #expect(token.claims["prn"] == .string("dana"))
            #expect(token.claims["nce"] == .string("abc+/=123"))

            #expect(await server.stop() == 0)
            #expect(!server.printed.contains(masterKey))
        }
    }
}
