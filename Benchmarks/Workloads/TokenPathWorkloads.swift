import Argon2
import Foundation
import GatewayCore
import GatewayHTTP
import GatewayPluginKit
import GatewayRuntime
import GatewayTestSupport
import Logging
import OpenSSLSigner
import Synchronization

/// One step of the token path, prepared once and then run many times.
/// Benchmarks/micro times each (`swift package benchmark`); `./scripts/test`
/// builds them and runs each once (`BenchmarkWorkloadTests`), so a change to
/// what they call cannot leave the benchmarks behind unseen.
public struct Workload: Sendable {
    public let name: String
    /// Runs in milliseconds rather than microseconds (argon2): timed over fewer iterations.
    public let isSlow: Bool
    public let run: @Sendable () throws -> Void

    init(_ name: String, isSlow: Bool = false, _ run: @escaping @Sendable () throws -> Void) {
        self.name = name
        self.isSlow = isSlow
        self.run = run
    }
}

public enum TokenPathWorkloads {
    /// Every step, set up (a key generated, 10 000 apps cached): a second or two.
    public static func all() throws -> [Workload] {
        let pair = try RSAKeyPair.generate(bits: 2048)
        let keyID = KeyID(uuid: UUID())
        let claims = IdentityTokenClaims(
            issuer: ProviderID(uuid: UUID()), identity: VerifiedIdentity(userID: "alice"),
            nonce: "n-8f1c2a9e-5d7b-4c3f-a1e2-0b9d8c7f6e5a", issuedAt: 1_800_000_000, lifetimeSeconds: 120)
        let openSSLKey = TokenSigningKey(keyID: keyID, signer: try OpenSSLRS256Signer(pair))
        let swiftCryptoKey = TokenSigningKey(keyID: keyID, signer: pair.signer)
        let token = try openSSLKey.mint(claims)
        let publicKeyPEM = pair.publicKeyPEM
        let body = Array(
            #"{"app_id":"layer:///apps/staging/4d3e1f60-2b1a-4c9e-9f3a-7d5c8b6a1e20","user_id":"alice","nonce":"n-8f1c2a9e-5d7b-4c3f-a1e2-0b9d8c7f6e5a","credentials":{"type":"password","password":"wonderland"}}"#
                .utf8)
        let hash = try Argon2.hash("correct horse battery staple", parameters: .owasp)
        let (tenants, appIDs) = try tenantCache(of: 10_000)
        let position = Mutex(0)

        return [
            Workload("mint token: OpenSSL signer") { consume(try openSSLKey.mint(claims)) },
            Workload("mint token: swift-crypto signer") { consume(try swiftCryptoKey.mint(claims)) },
            Workload("validate token: parse, check claims, verify signature") {
                var report = TokenValidationReport(compact: token)
                report.checkSignature(publicKeyPEM: publicKeyPEM)
                consume(report.isValid)
            },
            Workload("decode and validate a token request (JSON)") {
                consume(try TokenRequestFields(body: body, contentType: "application/json").validated())
            },
            Workload("argon2id verify (m=19456, t=2, p=1)", isSlow: true) {
                consume(try Argon2.verify("correct horse battery staple", against: hash))
            },
            Workload("find an app among 10 000 cached") {
                let index = position.withLock { position in
                    position = (position &+ 7_919) % appIDs.count
                    return position
                }
                consume(tenants.cachedTenant(for: appIDs[index]))
            },
        ]
    }

    /// A tenant cache holding `count` apps, over in-memory stores it never needs to ask.
    private static func tenantCache(of count: Int) throws -> (TenantCache, [AppID]) {
        let logger = Logger(label: "benchmark")
        let stores = InMemoryStores().stores
        let services = PluginServices(
            storage: .memory(PluginMemory(recording: { _ in })), apps: stores.apps, sessions: stores.sessions,
            userChanges: stores.userChanges, logger: logger)
        let cache = TenantCache(
            store: stores.tenants, makeSigner: { try OpenSSLRS256Signer($0) }, plugins: PluginRegistry([]),
            pluginServices: services, masterKey: try MasterKey(base64: MasterKey.generateBase64()), logger: logger)
        let appIDs = (0..<count).map { _ in AppID(uuid: UUID()) }
        for appID in appIDs {
            let settings = AppSettings(
                appID: appID, name: "app", environment: .production, providerID: ProviderID(uuid: UUID()),
                credentialTypes: ["password"])
            cache.remember(Tenant(settings: settings, verifiers: [:], minters: [:]))
        }
        return (cache, appIDs)
    }
}

/// Keeps a result alive, so the optimizer cannot drop the work that made it.
@inline(never)
func consume<Value>(_ value: Value) {
    withExtendedLifetime(value) {}
}
