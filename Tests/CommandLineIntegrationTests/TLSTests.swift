import AsyncHTTPClient
import Foundation
import GatewayCore
import GatewayTestSupport
import NIOCore
import NIOHTTP1
import NIOSSL
import Testing

/// Native TLS on the HTTP port: served with the operator's certificate and
/// key, plain HTTP refused, and every bad file reported at start.
@Suite struct TLSTests {
    /// A folder with a self-signed certificate for 127.0.0.1 (`cert.pem`,
    /// `key.pem`) and an unrelated key (`other-key.pem`), made by openssl.
    private static func withCertificate(_ body: (URL) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "gateway-tls-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try await run(
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", folder.appending(path: "key.pem").path,
            "-out", folder.appending(path: "cert.pem").path)
        try await run("genpkey", "-algorithm", "RSA", "-out", folder.appending(path: "other-key.pem").path)
        try await body(folder)
    }

    private static func run(_ arguments: String...) async throws {
        let status = try await ChildCommand.exitStatus("/usr/bin/openssl", arguments)
        #expect(status == 0, "openssl \(arguments.joined(separator: " "))")
    }

    /// Whether `openssl s_client` completes a handshake with `arguments` (a version, a suite).
    private static func handshakes(port: Int, _ arguments: [String]) async throws -> Bool {
        try await ChildCommand.exitStatus("/usr/bin/openssl", ["s_client", "-connect", "127.0.0.1:\(port)"] + arguments) == 0
    }

    /// `serve` with native TLS on a test database, with the certificate's folder.
    private static func withTLSServer(_ body: @Sendable (URL, GatewayProcess) async throws -> Void) async throws {
        try await withCertificate { folder in
            try await TestDatabase.with(migrations: []) { _, url in
                var environment = serveEnvironment(url, bootstrap: AdminTokenSecret.generate().text)
                environment["GATEWAY_HTTP_TLS_CERTIFICATE_FILE"] = folder.appending(path: "cert.pem").path
                environment["GATEWAY_HTTP_TLS_KEY_FILE"] = folder.appending(path: "key.pem").path
                try await body(folder, try await GatewayProcess.start(["serve"], environment: environment))
            }
        }
    }

    private static func outcome<Value>(_ body: () async throws -> Value) async -> Result<Value, any Error> {
        do { return .success(try await body()) } catch { return .failure(error) }
    }

    @Test func servesHTTPSWithTheConfiguredCertificateAndRefusesPlainHTTP() async throws {
        try await Self.withTLSServer { folder, server in
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(folder.appending(path: "cert.pem").path))
            let trusting = HTTPClient(eventLoopGroupProvider: .singleton, configuration: .init(tlsConfiguration: tls))
            // Without retries the first failed handshake is the answer, however slow the machine.
            var once = HTTPClient.Configuration()
            once.connectionPool.retryConnectionEstablishment = false
            let untrusting = HTTPClient(eventLoopGroupProvider: .singleton, configuration: once)
            let healthz = HTTPClientRequest(url: "https://127.0.0.1:\(server.port)/healthz")
            let status = await Self.outcome {
                let response = try await trusting.execute(healthz, timeout: .seconds(10))
                return (
                    response.status, String(buffer: try await response.body.collect(upTo: 4096)),
                    response.headers.first(name: "Strict-Transport-Security"))
            }
            let untrusted = await Self.outcome { try await untrusting.execute(healthz, timeout: .seconds(30)).status }
            // The same port does not speak plain HTTP.
            let plain = await Self.outcome { try await HTTPCall.send("GET", "http://127.0.0.1:\(server.port)/healthz").status }
            try await trusting.shutdown()
            try await untrusting.shutdown()

            let (code, body, hsts) = try status.get()
            #expect(code == .ok)
            #expect(hsts == "max-age=31536000")
            #expect(body.contains("ok"))
            #expect(throws: NIOSSLError.self) { try untrusted.get() }
            #expect((try? plain.get()) != 200)
            #expect(await server.stop() == 0)
        }
    }

    /// TLS 1.2 with Mozilla's intermediate suites only (ECDHE with AES-GCM or
    /// ChaCha20-Poly1305), and TLS 1.3; never CBC, RSA key exchange or TLS 1.1.
    @Test func onlyForwardSecretAEADSuitesAreNegotiated() async throws {
        try await Self.withTLSServer { _, server in
            let tls12 = [
                "ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-RSA-CHACHA20-POLY1305",
                "ECDHE-RSA-AES128-SHA", "ECDHE-RSA-AES256-SHA", "ECDHE-RSA-AES128-SHA256", "ECDHE-RSA-AES256-SHA384",
                "AES128-GCM-SHA256", "AES256-GCM-SHA384", "AES128-SHA", "AES256-SHA", "AES128-SHA256",
            ]
            var negotiated: [String] = []
            for suite in tls12 where try await Self.handshakes(port: server.port, ["-tls1_2", "-cipher", suite]) {
                negotiated.append(suite)
            }
            #expect(negotiated == ["ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-RSA-CHACHA20-POLY1305"])
            #expect(try await Self.handshakes(port: server.port, ["-tls1_3"]))
            #expect(try await !Self.handshakes(port: server.port, ["-tls1_1", "-cipher", "DEFAULT@SECLEVEL=0"]))
            #expect(await server.stop() == 0)
        }
    }

    @Test func badCertificateOrKeyFilesStopTheStartWithAClearMessage() async throws {
        try await Self.withCertificate { folder in
            let base = ["GATEWAY_DATABASE_URL": "postgres://u:p@127.0.0.1:1/d", "GATEWAY_MASTER_KEY": MasterKey.generateBase64()]
            let certificate = folder.appending(path: "cert.pem").path
            let cases: [(certificate: String?, key: String?, message: String)] = [
                (certificate, nil, "http.tls.certificate_file and http.tls.key_file"),
                (nil, folder.appending(path: "key.pem").path, "give both for TLS, or neither"),
                (folder.appending(path: "missing.pem").path, folder.appending(path: "key.pem").path,
                 "cannot read a PEM certificate chain from"),
                (folder.appending(path: "key.pem").path, folder.appending(path: "key.pem").path,
                 "cannot read a PEM certificate chain from"),
                (certificate, certificate, "cannot read a PEM private key from"),
                (certificate, folder.appending(path: "other-key.pem").path, "does not belong to the first certificate"),
            ]
            for (certificateFile, keyFile, message) in cases {
                var environment = base
                environment["GATEWAY_HTTP_TLS_CERTIFICATE_FILE"] = certificateFile
                environment["GATEWAY_HTTP_TLS_KEY_FILE"] = keyFile
                let exit = try await GatewayProcess.run(["serve"], environment: environment)
                #expect(exit.status != 0)
                #expect(exit.output.contains(message), "\(exit.output)")
            }
        }
    }
}
