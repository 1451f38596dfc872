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
        try run(
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", folder.appending(path: "key.pem").path,
            "-out", folder.appending(path: "cert.pem").path)
        try run("genpkey", "-algorithm", "RSA", "-out", folder.appending(path: "other-key.pem").path)
        try await body(folder)
    }

    private static func run(_ arguments: String...) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "openssl \(arguments.joined(separator: " "))")
    }

    private static func outcome<Value>(_ body: () async throws -> Value) async -> Result<Value, any Error> {
        do { return .success(try await body()) } catch { return .failure(error) }
    }

    @Test func servesHTTPSWithTheConfiguredCertificateAndRefusesPlainHTTP() async throws {
        try await Self.withCertificate { folder in
            try await TestDatabase.with(migrations: []) { _, url in
                var environment = serveEnvironment(url, bootstrap: AdminTokenSecret.generate().text)
                environment["GATEWAY_HTTP_TLS_CERTIFICATE_FILE"] = folder.appending(path: "cert.pem").path
                environment["GATEWAY_HTTP_TLS_KEY_FILE"] = folder.appending(path: "key.pem").path
                let server = try await GatewayProcess.start(["serve"], environment: environment)

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
                    return (response.status, String(buffer: try await response.body.collect(upTo: 4096)))
                }
                let untrusted = await Self.outcome { try await untrusting.execute(healthz, timeout: .seconds(30)).status }
                // The same port does not speak plain HTTP.
                let plain = await Self.outcome { try await HTTPCall.send("GET", "http://127.0.0.1:\(server.port)/healthz").status }
                try await trusting.shutdown()
                try await untrusting.shutdown()

                let (code, body) = try status.get()
                #expect(code == .ok)
                #expect(body.contains("ok"))
                #expect(throws: NIOSSLError.self) { try untrusted.get() }
                #expect((try? plain.get()) != 200)
                #expect(await server.stop() == 0)
            }
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
