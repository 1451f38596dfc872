import Argon2
import Benchmark
import Foundation
import GatewayCore
import GatewayHTTP
import GatewayPluginKit
import GatewayRuntime
import GatewayPostgres
import Logging
import OpenSSLSigner
import PostgresNIO

// The token hot path, piece by piece. Each benchmark measures one step a
// token request takes; `swift package benchmark` prints time and allocations.

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .cpuTotal, .mallocCountTotal, .throughput],
        maxDuration: .seconds(3), maxIterations: 100_000)

    let pair = try! RSAKeyPair.generate(bits: 2048)
    let keyID = KeyID(uuid: UUID())
    let claims = IdentityTokenClaims(
        issuer: ProviderID(uuid: UUID()), identity: VerifiedIdentity(userID: "alice", firstName: "Alice"),
        nonce: "n-8f1c2a9e-5d7b-4c3f-a1e2-0b9d8c7f6e5a", issuedAt: 1_800_000_000, lifetimeSeconds: 120)
    let openSSLKey = TokenSigningKey(keyID: keyID, signer: try! OpenSSLRS256Signer(pair))
    let swiftCryptoKey = TokenSigningKey(keyID: keyID, signer: pair.signer)

    Benchmark("mint token: OpenSSL signer") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try openSSLKey.mint(claims)) }
    }

    Benchmark("mint token: swift-crypto signer") { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try swiftCryptoKey.mint(claims)) }
    }

    let token = try! openSSLKey.mint(claims)
    let publicKeyPEM = pair.publicKeyPEM
    Benchmark("validate token: parse, check claims, verify signature") { benchmark in
        for _ in benchmark.scaledIterations {
            var report = TokenValidationReport(compact: token)
            report.checkSignature(publicKeyPEM: publicKeyPEM)
            blackHole(report.isValid)
        }
    }

    let body = Array(
        #"{"app_id":"layer:///apps/staging/4d3e1f60-2b1a-4c9e-9f3a-7d5c8b6a1e20","user_id":"alice","nonce":"n-8f1c2a9e-5d7b-4c3f-a1e2-0b9d8c7f6e5a","credentials":{"type":"password","password":"wonderland"}}"#
            .utf8)
    Benchmark("decode and validate a token request (JSON)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try TokenRequestFields(body: body, contentType: "application/json").validated())
        }
    }

    let hash = try! Argon2.hash("correct horse battery staple", parameters: .owasp)
    Benchmark(
        "argon2id verify (m=19456, t=2, p=1)",
        configuration: .init(metrics: [.wallClock, .cpuTotal], maxDuration: .seconds(5), maxIterations: 200)
    ) { benchmark in
        for _ in benchmark.scaledIterations { blackHole(try Argon2.verify("correct horse battery staple", against: hash)) }
    }

    // 10 000 apps in the tenant cache; the client is never connected.
    let client = PostgresClient(
        configuration: .init(host: "127.0.0.1", username: "nobody", password: nil, database: nil, tls: .disable))
    let directory = TenantCache(
        store: PostgresTenantStore(client: client, logger: Logger(label: "benchmark")),
        makeSigner: { try OpenSSLRS256Signer($0) }, plugins: PluginRegistry([]),
        pluginServices: PluginServices(
            client: client, apps: AppRepository(client: client, logger: Logger(label: "benchmark")),
            logger: Logger(label: "benchmark")),
        masterKey: try! MasterKey(base64: MasterKey.generateBase64()), logger: Logger(label: "benchmark"))
    let appIDs = (0..<10_000).map { _ in AppID(uuid: UUID()) }
    for appID in appIDs {
        let settings = AppSettings(
            appID: appID, name: "app", environment: .production, providerID: ProviderID(uuid: UUID()),
            credentialTypes: ["password"])
        directory.remember(Tenant(settings: settings, signingKey: openSSLKey, verifiers: [:]))
    }
    Benchmark("find an app among 10 000 cached") { benchmark in
        var index = 0
        for _ in benchmark.scaledIterations {
            index = (index &+ 7_919) % appIDs.count
            blackHole(directory.cachedTenant(for: appIDs[index]))
        }
    }
}
